/**
 * One error tree for everything the SDK throws: the base class {@link MyrGatewayError}, its
 * secret-free `toJSON`/`util.inspect` view, and the two client-side errors the webhooks entry
 * shares (configuration and request validation). The classes for service answers live in
 * `service.ts` and those for lost or pending money outcomes in `outcome.ts`;
 * every one extends {@link MyrGatewayError}, so `instanceof MyrGatewayError` catches all of them.
 *
 * Errors never carry secrets: no api_key, access token, signing key or full
 * account number reaches a message, a property, `util.inspect` or `JSON.stringify`.
 * Causes from the HTTP layer are reduced to their system error code before they are
 * attached, because a raw `Request` would carry the `Authorization` header.
 *
 * @module
 */
import { fieldOfCode } from './fields.js';

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
  | 'WEBHOOK_HANDLER_FAILED'
  | 'INVALID_SIGNED_FIELD'
  | 'STORE_UNAVAILABLE'
  | 'REDIS_VERSION_UNSUPPORTED'
  | 'CLAIM_LOST'
  | 'PAYOUT_ROW_INVALID';

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
  declare readonly code: ErrorCode;
  /** HTTP status, when the error came from a response. */
  declare readonly status: number | undefined;
  /** Whether retrying the same request later is safe and may succeed. */
  declare readonly retryable: boolean;
  /** Correlation id of the failing request, when the service sent one. */
  declare readonly correlationId: string | undefined;
  /** Seconds to wait before retrying, when the service said so. */
  declare readonly retryAfter: number | undefined;
  /** The request field at fault, for validation errors. */
  declare readonly field: string | undefined;
  /**
   * The `reference_id` of the payment or withdrawal the failed call was about. Set on every
   * error a money-moving call (payment create, withdrawal create/recover) throws.
   */
  declare readonly referenceId: string | undefined;

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
  constructor(message: string, init: MyrGatewayErrorInit) {
    // The service's answer carries a code, not a field: the code says which field it is about.
    super(message, { ...init, field: init.field ?? fieldOfCode(init.code) });
  }
}

/** The client was constructed with options that cannot work (for example an http:// base URL). */
export class ConfigurationError extends MyrGatewayError {
  /** `'ConfigurationError'`, so logs show which error it is. */
  override name = 'ConfigurationError';
  constructor(
    message: string,
    field?: string,
    answer?: { status?: number | undefined; correlationId?: string | undefined },
  ) {
    super(message, {
      code: 'INVALID_CONFIGURATION',
      field,
      status: answer?.status,
      correlationId: answer?.correlationId,
    });
  }
}
