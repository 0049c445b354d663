/**
 * One error tree for everything the SDK throws. Every class here extends
 * {@link MyrGatewayError}, so `instanceof MyrGatewayError` catches all of them.
 *
 * Errors never carry secrets: no api_key, access token, signing key or full
 * account number reaches a message, a property, `util.inspect` or `JSON.stringify`.
 * Causes from the HTTP layer are reduced to their system error code before they are
 * attached, because a raw `Request` would carry the `Authorization` header.
 *
 * @module
 */

/** Codes the service defines in its error table. */
export type ApiErrorCode =
  | 'UNAUTHORIZED'
  | 'TOKEN_EXPIRED'
  | 'INVALID_CREDENTIALS'
  | 'MERCHANT_DISABLED'
  | 'MERCHANT_LOCKED'
  | 'VALIDATION_ERROR'
  | 'INVALID_AMOUNT'
  | 'DUPLICATE_REFERENCE'
  | 'MISSING_PROVIDER_CHANNEL'
  | 'INVALID_PROVIDER_CHANNEL'
  | 'INVALID_BANK_CODE'
  | 'RATE_LIMITED'
  | 'NO_GATEWAY_AVAILABLE'
  | 'GATEWAY_ERROR'
  | 'GATEWAY_TIMEOUT';

/** Codes the SDK itself assigns to conditions the service has no code for. */
export type ClientErrorCode =
  | 'NOT_FOUND'
  | 'HTTP_ERROR'
  | 'NETWORK_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'OUTCOME_UNKNOWN'
  | 'PAYMENT_URL_UNAVAILABLE'
  | 'PAYMENT_PENDING'
  | 'INVALID_RESPONSE'
  | 'INVALID_CONFIGURATION'
  | 'WEBHOOK_VERIFICATION_FAILED'
  | 'WEBHOOK_HANDLER_FAILED';

/** Every code a {@link MyrGatewayError} can carry. Unknown service codes pass through as strings. */
export type ErrorCode = ApiErrorCode | ClientErrorCode | (string & {});

/** Fields shared by the constructor of every error class. */
export interface MyrGatewayErrorInit {
  /** The service's code, or the SDK's own for client-side conditions. */
  code: ErrorCode;
  /** HTTP status of the response that caused the error, when there was one. */
  status?: number | undefined;
  /** Whether the same request may safely be sent again later. */
  retryable?: boolean | undefined;
  /** The service's correlation id for the failing request, when the response carried one. */
  correlationId?: string | undefined;
  /** Seconds the service asked the caller to wait (`Retry-After`). */
  retryAfter?: number | undefined;
  /** The field of the request that is wrong, for validation failures. */
  field?: string | undefined;
  /** The `reference_id` of the money-moving request the error is about, when there is one. */
  referenceId?: string | undefined;
  /** A sanitised underlying cause. */
  cause?: unknown;
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * Base class of every error the SDK throws.
 *
 * @example
 * ```ts
 * try {
 *   await gateway.payments.create(params);
 * } catch (error) {
 *   if (error instanceof MyrGatewayError && error.retryable) scheduleRetry();
 *   else throw error;
 * }
 * ```
 */
export class MyrGatewayError extends Error {
  /** `'MyrGatewayError'`, so logs show which error it is. */
  override name = 'MyrGatewayError';
  /** The service's error code (see the spec's error table) or the SDK's own code. */
  readonly code: ErrorCode;
  /** HTTP status, when the error came from a response. */
  readonly status: number | undefined;
  /** Whether retrying the same request later is safe and may succeed. */
  readonly retryable: boolean;
  /** Correlation id of the failing request, when the service sent one. */
  readonly correlationId: string | undefined;
  /** Seconds to wait before retrying, when the service said so. */
  readonly retryAfter: number | undefined;
  /** The request field at fault, for validation errors. */
  readonly field: string | undefined;
  /**
   * The `reference_id` of the payment or withdrawal the failed call was about. Set on every
   * error a money-moving call (payment create, withdrawal create/recover) throws.
   */
  readonly referenceId: string | undefined;

  constructor(message: string, init: MyrGatewayErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.retryable = init.retryable ?? false;
    this.correlationId = init.correlationId;
    this.retryAfter = init.retryAfter;
    this.field = init.field;
    this.referenceId = init.referenceId;
  }

  /** A plain, secret-free view of the error for logs. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {
      name: this.name,
      code: this.code,
      message: this.message,
      status: this.status,
      retryable: this.retryable,
    };
    if (this.correlationId !== undefined) out.correlationId = this.correlationId;
    if (this.retryAfter !== undefined) out.retryAfter = this.retryAfter;
    if (this.field !== undefined) out.field = this.field;
    if (this.referenceId !== undefined) out.referenceId = this.referenceId;
    return out;
  }

  /** @internal Keeps `util.inspect` to the same secret-free view plus the stack. */
  [INSPECT](): string {
    return `${this.stack ?? `${this.name}: ${this.message}`}\n  ${JSON.stringify(this.toJSON())}`;
  }
}

/**
 * The request was rejected before anything was sent (client-side validation), or the
 * service answered 400/422 for the same reason. `field` names what to fix.
 */
export class InvalidRequestError extends MyrGatewayError {
  /** `'InvalidRequestError'`, so logs show which error it is. */
  override name = 'InvalidRequestError';
}

/** The client was constructed with options that cannot work (for example an http:// base URL). */
export class ConfigurationError extends MyrGatewayError {
  /** `'ConfigurationError'`, so logs show which error it is. */
  override name = 'ConfigurationError';
  constructor(message: string, field?: string) {
    super(message, { code: 'INVALID_CONFIGURATION', field });
  }
}

/** 401: missing, invalid or expired token, or wrong merchant credentials. */
export class AuthenticationError extends MyrGatewayError {
  /** `'AuthenticationError'`, so logs show which error it is. */
  override name = 'AuthenticationError';
}

/** 403: the merchant account is disabled or locked. Never retried. */
export class PermissionDeniedError extends MyrGatewayError {
  /** `'PermissionDeniedError'`, so logs show which error it is. */
  override name = 'PermissionDeniedError';
}

/** Status lookup found no payment for the identifier (404). */
export class NotFoundError extends MyrGatewayError {
  /** `'NotFoundError'`, so logs show which error it is. */
  override name = 'NotFoundError';
}

/**
 * 409 DUPLICATE_REFERENCE. When the SDK could find the payment that already uses the
 * reference (because an earlier attempt of this same call may have created it),
 * `existingPayment` carries its status record.
 */
export class DuplicateReferenceError extends MyrGatewayError {
  /** `'DuplicateReferenceError'`, so logs show which error it is. */
  override name = 'DuplicateReferenceError';
  /** The payment already stored under this `reference_id`, when the SDK looked it up. */
  existingPayment: PaymentStatusLike | undefined;
  /**
   * True when an earlier attempt of the same call may have reached the service, so the
   * existing payment is most likely the caller's own.
   */
  earlierAttemptMayHaveSucceeded = false;

  override toJSON(): Record<string, unknown> {
    const out = super.toJSON();
    if (this.existingPayment) out.existingPayment = this.existingPayment;
    if (this.earlierAttemptMayHaveSucceeded) out.earlierAttemptMayHaveSucceeded = true;
    return out;
  }
}

/** The status record carried by {@link DuplicateReferenceError.existingPayment}. */
export interface PaymentStatusLike {
  /** The payment id. */
  payment_id: string;
  /** Your reference. */
  reference_id: string;
  /** Its status. */
  status: string;
  /** Its amount in MYR. */
  amount: number;
  [extra: string]: unknown;
}

/** 429: too many requests. `retryAfter` says how long to wait. */
export class RateLimitError extends MyrGatewayError {
  /** `'RateLimitError'`, so logs show which error it is. */
  override name = 'RateLimitError';
}

/** 5xx from the service or its upstream (NO_GATEWAY_AVAILABLE, GATEWAY_ERROR, GATEWAY_TIMEOUT, others). */
export class ServiceUnavailableError extends MyrGatewayError {
  /** `'ServiceUnavailableError'`, so logs show which error it is. */
  override name = 'ServiceUnavailableError';
}

/** Any other non-2xx answer the SDK has no closer class for. */
export class ApiError extends MyrGatewayError {
  /** `'ApiError'`, so logs show which error it is. */
  override name = 'ApiError';
}

/** The connection failed. `code` is NETWORK_ERROR; `cause` holds the system error code only. */
export class ConnectionError extends MyrGatewayError {
  /** `'ConnectionError'`, so logs show which error it is. */
  override name = 'ConnectionError';
}

/** An attempt or the whole call ran past its timeout. */
export class TimeoutError extends MyrGatewayError {
  /** `'TimeoutError'`, so logs show which error it is. */
  override name = 'TimeoutError';
}

/** The caller's `signal` aborted the call. */
export class AbortError extends MyrGatewayError {
  /** `'AbortError'`, so logs show which error it is. */
  override name = 'AbortError';
}

/** A 2xx answer whose body does not have the shape the spec describes. */
export class InvalidResponseError extends MyrGatewayError {
  /** `'InvalidResponseError'`, so logs show which error it is. */
  override name = 'InvalidResponseError';
}

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
 * `DUPLICATE_REFERENCE`, and the status lookup shows this very payment (same amount), but
 * the status record carries no `payment_url`, so the customer cannot be sent to it.
 *
 * Not a mistake of yours: the payment exists. Create a new payment under a **new**
 * `reference_id` for the customer; the old one is never paid and expires at `expiresAt`.
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
  readonly existingPayment: PaymentStatusLike;
  /** When the existing payment expires (ISO 8601), when the service said so. */
  readonly expiresAt: string | undefined;
  constructor(message: string, init: Omit<MyrGatewayErrorInit, 'code'> & { referenceId: string; existingPayment: PaymentStatusLike }) {
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
  readonly identifier: string;
  /** The last status record seen, if any lookup answered. */
  readonly lastStatus: PaymentStatusLike | undefined;
  constructor(message: string, init: { identifier: string; lastStatus: PaymentStatusLike | undefined; cause?: unknown }) {
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
