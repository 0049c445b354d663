import { AbortError, InvalidResponseError } from '../core/errors/service.js';
import { InvalidRequestError, MyrGatewayError } from '../core/errors/base.js';
import { withResponse, type WithResponse } from '../core/observe/events.js';
import type { RequestOptions } from '../core/call/call-spec.js';
import { outcomeUnknownAdvice } from '../core/call/retry-policy.js';
import type { ResourceTransport } from './transport-port.js';
import { type AnswerCheck, checkCustomerUrl, checkEcho, parseSuccess, validateRequest } from '../core/validate.js';
import { referenceOf, tagReference } from '../core/errors/reference.js';
import { splitLoopbackUrls } from '../core/urls.js';
import {
  type PaymentCreated,
  type PaymentCreateParams,
  paymentCreatedSchema,
  paymentCreateParamsSchema,
  type PaymentStatus,
  paymentStatusSchema,
} from '../schemas/payments.js';
import { createdPayment, reconcile } from './reconcile.js';
import { waitForCompletion, type WaitForCompletionOptions } from './wait.js';

/** Timing the poller borrows from the client (injectable in tests). */
export interface PaymentsTiming {
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
  /** The client's clock: when a create started, against the found record's `created_at`. */
  now(): number;
}

const IDENTIFIER = /^[A-Za-z0-9_]{1,128}$/;

/**
 * Deposit payments: `POST /payment/request` and `GET /payment/status/:identifier`.
 * Reached as `gateway.payments`.
 */
export class Payments {
  readonly #transport: ResourceTransport;
  readonly #allowInsecureLoopback: boolean;
  readonly #timing: PaymentsTiming;

  /** @internal */
  constructor(transport: ResourceTransport, allowInsecureLoopback: boolean, timing: PaymentsTiming) {
    this.#transport = transport;
    this.#allowInsecureLoopback = allowInsecureLoopback;
    this.#timing = timing;
  }

  /**
   * Creates a deposit payment and tells you where to send the customer.
   *
   * Validated before sending (amount 5–50,000 with at most 2 decimals, alphanumeric
   * `reference_id`, phone without `+`, https URLs, a valid `provider_channel_id` for
   * BANK_TRANSFER). Retried on 429, 5xx and network failures, always with the same
   * `reference_id`. If an attempt may have created the payment and the call still fails (a
   * retry met DUPLICATE_REFERENCE, or the retries ran out), the SDK looks the payment up:
   * - found, and this call can have made it (same amount, still PENDING or PROCESSING, created
   *   no earlier than the call started, within a 5-minute clock tolerance), with a
   *   `payment_url`: it is returned as if the first answer had arrived;
   * - the same, without one: {@link PaymentUrlUnavailableError} (the payment exists but its
   *   customer URL cannot be retrieved: create a new reference; the old one expires unpaid);
   * - found, but not this call's (another amount, already paid or closed, created before the
   *   call: a reused `reference_id`), or held by a withdrawal: {@link DuplicateReferenceError}
   *   with the record in `existingPayment`;
   * - not found, or the lookup failed: {@link OutcomeUnknownError}: "not found" right after
   *   an ambiguous failure does not prove the payment was not created. Call `create` again
   *   with the same `reference_id` later.
   *
   * A 2xx answer that is not the success envelope, echoes another `reference_id` or
   * `amount`, or carries a non-https customer URL is an {@link InvalidResponseError}.
   * Every error carries `referenceId`. The result's non-enumerable `lastResponse` holds the
   * correlation id, rate-limit headers and attempts of the answer it came from.
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
  async create(params: PaymentCreateParams, options?: RequestOptions): Promise<WithResponse<PaymentCreated>> {
    const referenceId = referenceOf(params);
    try {
      return await this.#create(params, options);
    } catch (error) {
      throw tagReference(error, referenceId);
    }
  }

  /**
   * Turns untrusted input (a request body, a form, a queue message) into typed params for
   * {@link create}, with create's rules and errors: the same {@link InvalidRequestError}, code
   * and `field` as `create` would throw, and nothing sent. A `payment_method` chosen at
   * runtime and a `string` `provider_channel_id` go in as they are, no cast; fields the
   * request does not have are dropped.
   *
   * @throws {@link InvalidRequestError} naming the first field at fault.
   *
   * @example
   * ```ts
   * // req.body: { method: string, bank?: string, amount: string, order: string, … }
   * const params = gateway.payments.parse({
   *   amount: req.body.amount,
   *   reference_id: req.body.order,
   *   customer_name: req.body.name,
   *   customer_phone: req.body.phone,
   *   payment_method: req.body.method,
   *   metadata: req.body.bank === undefined ? undefined : { provider_channel_id: req.body.bank },
   * });
   * const payment = await gateway.payments.create(params);
   * ```
   */
  parse(input: unknown): PaymentCreateParams {
    return this.#validate(input);
  }

  /** The params checked by the schema, loopback `http://` URLs kept aside when the client allows them. */
  #validate(params: unknown): PaymentCreateParams & { amount: number } {
    const { rest, urls } = this.#allowInsecureLoopback ? splitLoopbackUrls(params) : { rest: params, urls: {} };
    const validated = validateRequest(paymentCreateParamsSchema(rest), rest, 'payment create');
    // The schema already wrote `amount` as the JSON number to send; its type still admits the string it came as.
    return { ...validated, ...urls, amount: Number(validated.amount) };
  }

  async #create(
    params: PaymentCreateParams,
    options: RequestOptions | undefined,
  ): Promise<WithResponse<PaymentCreated>> {
    const startedAt = this.#timing.now();
    const body = this.#validate(params);
    const outcome = await this.#transport.outcomeOf(
      {
        method: 'POST',
        path: 'payment/request',
        body,
        authenticated: true,
        operation: 'payment.create',
        referenceId: body.reference_id,
      },
      options,
    );
    if (!outcome.ok) {
      const { error } = outcome;
      // The caller stopped the call: do not start a lookup it did not ask for (the error says what to do).
      if (!outcome.maybeProcessed || error instanceof AbortError || !(error instanceof MyrGatewayError)) throw error;
      return await reconcile(
        this,
        error,
        body,
        options,
        outcome.remainingMs,
        this.#check(body.reference_id),
        startedAt,
      );
    }
    const check = this.#check(body.reference_id);
    const data = parseSuccess(paymentCreatedSchema, outcome.data, check.what, check.followUp);
    checkEcho(check, 'reference_id', body.reference_id, data.reference_id);
    checkEcho(check, 'amount', body.amount, data.amount);
    checkCustomerUrl(check, 'payment_url', data.payment_url);
    checkCustomerUrl(check, 'gateway.redirect_url', data.gateway?.redirect_url);
    return withResponse(createdPayment(data, body), outcome.response);
  }

  /** @internal How a 2xx answer about `referenceId` is checked, and what to say when it is wrong. */
  #check(referenceId: string): AnswerCheck {
    return {
      what: 'payment create',
      followUp: `. The payment may have been created: ${outcomeUnknownAdvice('payment.create', referenceId)}`,
      allowInsecureLoopback: this.#allowInsecureLoopback,
    };
  }

  /**
   * Looks up a payment by its `payment_id` or by your `reference_id` (a `payment_id`
   * match wins). Use it when no callback arrived; callbacks are the primary mechanism.
   * Throws NotFoundError when nothing matches. The result carries `lastResponse` like `create`'s.
   *
   * @example
   * ```ts
   * const status = await gateway.payments.retrieve('ORDER1001');
   * if (status.status === 'SUCCESS') fulfil(status.reference_id);
   * ```
   */
  async retrieve(identifier: string, options?: RequestOptions): Promise<WithResponse<PaymentStatus>> {
    if (typeof identifier !== 'string' || !IDENTIFIER.test(identifier)) {
      throw new InvalidRequestError(
        'VALIDATION_ERROR: identifier must be a payment_id (PAY_…) or an alphanumeric reference_id',
        { code: 'VALIDATION_ERROR', field: 'identifier' },
      );
    }
    const { data, response } = await this.#transport.call(
      { method: 'GET', path: `payment/status/${identifier}`, authenticated: true, operation: 'status' },
      options,
    );
    const status = parseSuccess(paymentStatusSchema, data, 'payment status');
    if (status.payment_id !== identifier && status.reference_id !== identifier) {
      throw new InvalidResponseError(
        `INVALID_RESPONSE: the payment status answer is for another payment (asked for ${identifier})`,
        { code: 'INVALID_RESPONSE', field: 'reference_id' },
      );
    }
    return withResponse(status, response);
  }

  /**
   * Polls the payment's status until it is terminal (SUCCESS, FAILED, EXPIRED, CANCELLED,
   * REFUNDED) and returns that status record; throws {@link PaymentPendingError} (with
   * `lastStatus`) when `timeoutMs` passes first, and {@link AbortError} when `signal` aborts.
   * Pauses start at `intervalMs` (2 s) and grow by half up to 30 s, with jitter; every lookup
   * goes through the client's pacing, so polling stays inside the rate limits.
   *
   * **Callbacks stay the primary path**: they arrive without polling and carry the signed
   * outcome. Use this where no callback can reach you (a CLI, a local script, a test), for a
   * short wait right after the customer returns from the payment page, or in a reconciliation
   * job for payments whose callback never came (see examples/reconcile.ts). Do not poll every
   * open payment: 100 status lookups a minute are shared with everything else you send.
   *
   * @example
   * ```ts
   * try {
   *   const status = await gateway.payments.waitForCompletion('ORDER1001', { timeoutMs: 120_000 });
   *   if (status.status === 'SUCCESS') await fulfil(status.reference_id);
   * } catch (error) {
   *   if (!(error instanceof PaymentPendingError)) throw error;
   *   // still PROCESSING: the callback (or a later reconciliation run) will settle it
   * }
   * ```
   */
  waitForCompletion(identifier: string, options: WaitForCompletionOptions): Promise<PaymentStatus> {
    return waitForCompletion(
      {
        retrieve: (id, o) => this.retrieve(id, o),
        sleep: (ms, signal) => this.#timing.sleep(ms, signal),
        random: () => this.#timing.random(),
      },
      identifier,
      options,
    );
  }
}
