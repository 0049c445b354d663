import {
  AbortError,
  DuplicateReferenceError,
  InvalidRequestError,
  type MyrGatewayError,
  NotFoundError,
  OutcomeUnknownError,
} from '../core/errors.js';
import type { CallState, RequestOptions, Transport } from '../core/transport.js';
import { parseSuccess, validateRequest } from '../core/validate.js';
import {
  customerRedirectUrl,
  type PaymentCreated,
  type PaymentCreateParams,
  paymentCreatedSchema,
  paymentCreateParamsSchema,
  type PaymentStatus,
  paymentStatusSchema,
} from '../schemas/payments.js';

const IDENTIFIER = /^[A-Za-z0-9_]{1,128}$/;

/**
 * Deposit payments: `POST /payment/request` and `GET /payment/status/:identifier`.
 * Reached as `gateway.payments`.
 */
export class Payments {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Creates a deposit payment and tells you where to send the customer.
   *
   * Validated before sending (amount 5–50,000 with at most 2 decimals, alphanumeric
   * `reference_id`, phone without `+`, https URLs, a valid `provider_channel_id` for
   * BANK_TRANSFER). Retried on 429, 5xx and network failures. If an attempt may have
   * created the payment and a retry then meets DUPLICATE_REFERENCE, the SDK looks the
   * payment up and throws a {@link DuplicateReferenceError} whose `existingPayment`
   * holds it, so you never create a second payment or lose the first.
   *
   * @example
   * ```ts
   * const payment = await gateway.payments.create({
   *   amount: 49.9,
   *   reference_id: 'ORDER1001',
   *   customer_name: 'Aisyah Rahman',
   *   customer_phone: '60123456789',
   *   payment_method: 'QR_PAYMENT',
   * });
   * res.redirect(payment.customer_redirect_url);
   * ```
   */
  async create(params: PaymentCreateParams, options?: RequestOptions): Promise<PaymentCreated> {
    const body = validateRequest(paymentCreateParamsSchema, params, 'payment create');
    const state: CallState = { maybeProcessed: false };
    let raw: unknown;
    try {
      raw = await this.#transport.call(
        { method: 'POST', path: 'payment/request', body, authenticated: true, repeat: 'reconcile', referenceId: body.reference_id },
        options,
        state,
      );
    } catch (error) {
      // The caller stopped the call: do not start a lookup it did not ask for (the error says what to do).
      if (!state.maybeProcessed || error instanceof AbortError) throw error;
      throw await this.#reconcile(error as MyrGatewayError, body.reference_id, body.amount, options);
    }
    const data = parseSuccess(
      paymentCreatedSchema,
      raw,
      'payment create',
      `. The service answered 2xx, so the payment exists: look it up with payments.retrieve('${body.reference_id}') instead of creating it again`,
    );
    const gateway = {
      ...data.gateway,
      behavior: data.gateway?.behavior ?? 'REDIRECT_EXTERNAL',
      redirect_url: data.gateway?.redirect_url ?? data.payment_url,
    };
    const created = {
      ...data,
      status: data.status ?? 'PROCESSING',
      amount: data.amount ?? body.amount,
      currency: data.currency ?? body.currency ?? 'MYR',
      reference_id: data.reference_id ?? body.reference_id,
      gateway,
    };
    return { ...created, customer_redirect_url: customerRedirectUrl(body.payment_method, created) };
  }

  /**
   * Looks up a payment by its `payment_id` or by your `reference_id` (a `payment_id`
   * match wins). Use it when no callback arrived; callbacks are the primary mechanism.
   * Throws NotFoundError when nothing matches.
   *
   * @example
   * ```ts
   * const status = await gateway.payments.retrieve('ORDER1001');
   * if (status.status === 'SUCCESS') fulfil(status.reference_id);
   * ```
   */
  async retrieve(identifier: string, options?: RequestOptions): Promise<PaymentStatus> {
    if (typeof identifier !== 'string' || !IDENTIFIER.test(identifier)) {
      throw new InvalidRequestError(
        'VALIDATION_ERROR: identifier must be a payment_id (PAY_…) or an alphanumeric reference_id',
        { code: 'VALIDATION_ERROR', field: 'identifier' },
      );
    }
    const raw = await this.#transport.call(
      { method: 'GET', path: `payment/status/${identifier}`, authenticated: true, repeat: 'idempotent' },
      options,
    );
    return parseSuccess(paymentStatusSchema, raw, 'payment status') as PaymentStatus;
  }

  /**
   * An attempt of this create may have reached the service, and the call still failed (a
   * retry met DUPLICATE_REFERENCE, or the retries ran out on another error). Find out
   * whether the payment exists, so the caller never sees a plain failure for a payment
   * that was made:
   * - found: DuplicateReferenceError with `existingPayment`;
   * - not found: the payment was not created; the final error stands (safe to retry);
   * - lookup failed: OutcomeUnknownError with the `referenceId` to check later.
   */
  async #reconcile(
    final: MyrGatewayError,
    referenceId: string,
    amount: number,
    options: RequestOptions | undefined,
  ): Promise<MyrGatewayError> {
    let existing: PaymentStatus | undefined;
    try {
      existing = await this.retrieve(referenceId, options);
    } catch (lookupError) {
      if (lookupError instanceof NotFoundError && final.code !== 'DUPLICATE_REFERENCE') return final;
      return new OutcomeUnknownError(
        `${final.code}: an attempt to create the payment for reference_id ${referenceId} may have reached the service ` +
          `(the call ended with: ${final.message}) and looking it up failed. Call payments.retrieve('${referenceId}') ` +
          'before creating anything again; retrying with the same reference_id is safe.',
        { referenceId, status: final.status, correlationId: final.correlationId, cause: final },
      );
    }
    const sameAmount = existing.amount === amount;
    const how =
      final.code === 'DUPLICATE_REFERENCE'
        ? 'a retry was refused as a duplicate'
        : `the call ended with ${final.code}`;
    const message =
      `DUPLICATE_REFERENCE: reference_id ${referenceId} already belongs to payment ${existing.payment_id} (status ${existing.status}, ` +
      `amount ${existing.amount}${sameAmount ? ', as requested' : `, NOT the requested ${amount}`}); ${how}. ` +
      (sameAmount
        ? 'Most likely an earlier attempt of this call created it and its answer was lost. '
        : 'It may be another order that reused the reference. ') +
      'It is in error.existingPayment; do not create it again.';
    const error = new DuplicateReferenceError(message, {
      code: 'DUPLICATE_REFERENCE',
      status: final.status,
      retryable: false,
      correlationId: final.correlationId,
      cause: final,
    });
    error.existingPayment = existing;
    error.earlierAttemptMayHaveSucceeded = true;
    return error;
  }
}
