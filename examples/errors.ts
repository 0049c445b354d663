/**
 * Handling every error a payment create can end in. Each branch is what a checkout should
 * do; `error.code`, `error.field` and `error.correlationId` go to your logs (they never hold
 * a secret). See docs/errors.md for the whole table.
 */
import {
  InvalidRequestError,
  MyrGatewayError,
  OutcomeUnknownError,
  PaymentUrlUnavailableError,
  PermissionDeniedError,
  type MyrGateway,
  type PaymentCreateParams,
} from 'myr-gateway';

/** What the checkout page should do next. */
export type CheckoutResult =
  | { kind: 'redirect'; url: string }
  | { kind: 'fix-input'; field: string | undefined; message: string }
  | { kind: 'try-again-later'; retryAfterSeconds: number | undefined; code: string }
  | { kind: 'check-later'; referenceId: string }
  | { kind: 'new-reference'; oldReferenceId: string }
  | { kind: 'contact-support'; code: string; correlationId: string | undefined };

/** Creates the payment and turns any failure into the next step of the checkout. */
export async function startPayment(gateway: MyrGateway, params: PaymentCreateParams): Promise<CheckoutResult> {
  try {
    const payment = await gateway.payments.create(params);
    return { kind: 'redirect', url: payment.customer_redirect_url };
  } catch (error) {
    // Your input: nothing was sent (or the service refused it); show the field to fix.
    if (error instanceof InvalidRequestError) return { kind: 'fix-input', field: error.field, message: error.message };
    // The answer was lost and the SDK could not find out: same reference_id later, never a new one.
    if (error instanceof OutcomeUnknownError) return { kind: 'check-later', referenceId: error.referenceId };
    // The payment exists but its page cannot be fetched: a new payment under a new reference.
    if (error instanceof PaymentUrlUnavailableError)
      return { kind: 'new-reference', oldReferenceId: error.referenceId };
    // Your account is disabled or locked: nothing a retry fixes.
    if (error instanceof PermissionDeniedError)
      return { kind: 'contact-support', code: error.code, correlationId: error.correlationId };
    // 429 / 5xx / network after the SDK's own retries: safe to try again later.
    if (error instanceof MyrGatewayError && error.retryable) {
      return { kind: 'try-again-later', retryAfterSeconds: error.retryAfter, code: error.code };
    }
    if (error instanceof MyrGatewayError)
      return { kind: 'contact-support', code: error.code, correlationId: error.correlationId };
    throw error; // not from the SDK: a bug of ours
  }
}
