/**
 * Errors for what the service (or the network on the way to it) answered: HTTP statuses the
 * spec's error table names, connection failures, timeouts, aborts and malformed 2xx bodies.
 *
 * @module
 */
import type { PaymentStatus } from '../../schemas/statuses.js';
import { MyrGatewayError, type MyrGatewayErrorInit } from './base.js';
import { fieldOfCode } from './fields.js';

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
  existingPayment: PaymentStatus | undefined;
  /**
   * True when an earlier attempt of the same call may have reached the service, so the
   * existing payment is most likely the caller's own.
   */
  earlierAttemptMayHaveSucceeded = false;

  constructor(message: string, init: MyrGatewayErrorInit) {
    super(message, { ...init, field: init.field ?? fieldOfCode(init.code) });
  }

  override toJSON(): Record<string, unknown> {
    const out = super.toJSON();
    if (this.existingPayment) out.existingPayment = this.existingPayment;
    if (this.earlierAttemptMayHaveSucceeded) out.earlierAttemptMayHaveSucceeded = true;
    return out;
  }
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
