/**
 * Errors about the outcome of a money-moving call rather than a failed request: the answer was
 * lost, the payment exists but has no URL, or it is still pending after waiting.
 *
 * @module
 */
import { MyrGatewayError, type MyrGatewayErrorInit } from './base.js';
import type { PaymentStatus } from '../../schemas/statuses.js';

/**
 * A money-moving request may have reached the service, but no answer came back
 * (timeout, dropped connection, 500/502/504). The SDK did **not** send it again, because a
 * second attempt could move money twice. The message says what to do:
 * - a withdrawal: wait for the callback, or call `gateway.withdrawals.recover(params)` with
 *   the same params (it cannot create a second payout under the same `reference_id`);
 * - a payment: call `gateway.payments.create(params)` again with the same `reference_id`
 *   (the SDK reconciles a duplicate), or wait for the callback.
 *
 * @example
 * ```ts
 * try {
 *   await gateway.withdrawals.create(params);
 * } catch (error) {
 *   if (error instanceof OutcomeUnknownError) await gateway.withdrawals.recover(params);
 *   else throw error;
 * }
 * ```
 */
export class OutcomeUnknownError extends MyrGatewayError {
  /** `'OutcomeUnknownError'`, so logs show which error it is. */
  override name = 'OutcomeUnknownError';
  /** The `reference_id` of the request whose outcome is unknown. */
  declare readonly referenceId: string;
  constructor(message: string, init: Omit<MyrGatewayErrorInit, 'code'> & { referenceId: string }) {
    super(message, { ...init, code: 'OUTCOME_UNKNOWN', retryable: false });
  }
}

/**
 * A payment create whose answer was lost: a resend with the same `reference_id` met
 * `DUPLICATE_REFERENCE`, and the status lookup shows this very payment (same amount, not yet
 * paid, created during this call), but
 * the status record carries no `payment_url`, so the customer cannot be sent to it.
 *
 * Not a mistake of yours: the payment exists. Create a new payment under a **new**
 * `reference_id` for the customer; its customer never had its URL, so it expires unpaid at `expiresAt`.
 *
 * @example
 * ```ts
 * try {
 *   const payment = await gateway.payments.create(params);
 *   return res.redirect(payment.customer_redirect_url);
 * } catch (error) {
 *   if (error instanceof PaymentUrlUnavailableError) {
 *     await markSuperseded(error.referenceId, error.expiresAt);
 *     const retry = await gateway.payments.create({ ...params, reference_id: newReference() });
 *     return res.redirect(retry.customer_redirect_url);
 *   }
 *   throw error;
 * }
 * ```
 */
export class PaymentUrlUnavailableError extends MyrGatewayError {
  /** `'PaymentUrlUnavailableError'`, so logs show which error it is. */
  override name = 'PaymentUrlUnavailableError';
  declare readonly referenceId: string;
  /** The status record of the payment that exists under `referenceId`. */
  declare readonly existingPayment: PaymentStatus;
  /** When the existing payment expires (ISO 8601), when the service said so. */
  declare readonly expiresAt: string | undefined;
  constructor(
    message: string,
    init: Omit<MyrGatewayErrorInit, 'code'> & { referenceId: string; existingPayment: PaymentStatus },
  ) {
    super(message, { ...init, code: 'PAYMENT_URL_UNAVAILABLE', retryable: false });
    this.existingPayment = init.existingPayment;
    const expires = init.existingPayment.expires_at;
    this.expiresAt = typeof expires === 'string' ? expires : undefined;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), existingPayment: this.existingPayment, expiresAt: this.expiresAt };
  }
}

/**
 * `payments.waitForCompletion` gave up: the payment had not reached a terminal status within
 * `timeoutMs`. Nothing is wrong with it; `lastStatus` is the last status record seen (undefined
 * when no lookup answered). Keep waiting for the callback, or poll again later.
 *
 * @example
 * ```ts
 * try {
 *   await gateway.payments.waitForCompletion('ORDER1001', { timeoutMs: 60_000 });
 * } catch (error) {
 *   if (error instanceof PaymentPendingError) log.info('still', error.lastStatus?.status);
 *   else throw error;
 * }
 * ```
 */
export class PaymentPendingError extends MyrGatewayError {
  override name = 'PaymentPendingError';
  /** The payment_id or reference_id that was polled. */
  declare readonly identifier: string;
  /** The last status record seen, if any lookup answered. */
  declare readonly lastStatus: PaymentStatus | undefined;
  constructor(message: string, init: { identifier: string; lastStatus: PaymentStatus | undefined; cause?: unknown }) {
    super(message, {
      code: 'PAYMENT_PENDING',
      retryable: true,
      referenceId: init.lastStatus?.reference_id,
      cause: init.cause,
    });
    this.identifier = init.identifier;
    this.lastStatus = init.lastStatus;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), identifier: this.identifier, lastStatus: this.lastStatus };
  }
}
