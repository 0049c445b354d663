import { type Operation, outcomeUnknownAdvice } from '../core/call/retry-policy.js';
import { withResponse, type WithResponse } from '../core/observe/events.js';
import type { RequestOptions } from '../core/call/call-spec.js';
import type { ResourceTransport } from './transport-port.js';
import { type AnswerCheck, checkEcho, parseSuccess, validateRequest } from '../core/validate.js';
import { referenceOf, tagReference } from '../core/errors/reference.js';
import { CURRENCY } from '../schemas/common.js';
import { accountNumberRedactor, maskAccountNumber, maskAccountNumbers } from '../core/redact.js';
import {
  type Withdrawal,
  type WithdrawalCreateParams,
  withdrawalCreateParamsSchema,
  withdrawalSchema,
} from '../schemas/withdrawals.js';

/**
 * What {@link Withdrawals.recover} found out. A `reference_id` names one payout for ever, and
 * `recover` must get the same params as the `create` whose outcome is unknown:
 * - `created: true`: the first request never reached processing; this call created the
 *   withdrawal (exactly one exists now).
 * - `created: false`: the service refused the resend as `DUPLICATE_REFERENCE`: a transaction
 *   holds this `reference_id`, this call made no payout, and none will ever be made under it.
 *   Called with the same params after an unknown outcome, that transaction is the first
 *   request's payout: its outcome comes by callback, or already came (look the reference up in
 *   your own webhook records before waiting). The SDK cannot check the holder's params (the
 *   service offers no withdrawal lookup), so `created: false` also answers a reference used
 *   before for another payout, or a deposit (docs/assumptions.md, A21): to pay again, after a
 *   FAILED payout for instance, use a new `reference_id`.
 */
export type WithdrawalRecovery =
  | {
      /** The first request never arrived; this one created the withdrawal. */
      created: true;
      /** The withdrawal just created. */
      withdrawal: WithResponse<Withdrawal>;
    }
  | {
      /** A transaction holds the reference (the first request's payout, if the params are the same): its callback comes or came. */
      created: false;
      /** The reference of the withdrawal that exists. */
      referenceId: string;
    };

/** `value` when the service sent a string, else what the request said. */
const text = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);

/**
 * Withdrawals (payouts) to Malaysian bank accounts: `POST /payment/withdraw`.
 * Reached as `gateway.withdrawals`. The SDK offers no withdrawal status lookup: the status
 * endpoint may not know withdrawals, or may answer with a deposit under the same
 * `reference_id`, and "not found" would not prove the payout was not made. Use
 * {@link Withdrawals.recover} and the callback instead.
 */
export class Withdrawals {
  readonly #transport: Pick<ResourceTransport, 'call'>;

  /** @internal */
  constructor(transport: Pick<ResourceTransport, 'call'>) {
    this.#transport = transport;
  }

  /**
   * Creates a withdrawal. The result arrives later by callback (`transaction_type`
   * `WITHDRAWAL`).
   *
   * Sent **at most once** once it may have reached the service: a timeout, a dropped
   * connection or a 500/502/504 throws {@link OutcomeUnknownError} instead of retrying,
   * because a second attempt could pay out twice. Only failures that certainly happened
   * before processing (429, connection refused, 503 NO_GATEWAY_AVAILABLE, TOKEN_EXPIRED)
   * are retried. Every error carries `referenceId`. The result's non-enumerable `lastResponse`
   * holds the correlation id, rate-limit headers and attempts of the answer.
   *
   * @example
   * ```ts
   * try {
   *   await gateway.withdrawals.create(params);
   * } catch (error) {
   *   if (error instanceof OutcomeUnknownError) {
   *     // Never "retrieve" and resend: recover sends the same reference_id, which cannot pay twice.
   *     const recovery = await gateway.withdrawals.recover(params);
   *     if (!recovery.created) log('the first request arrived; wait for its callback');
   *   } else throw error;
   * }
   * ```
   */
  async create(params: WithdrawalCreateParams, options?: RequestOptions): Promise<WithResponse<Withdrawal>> {
    const referenceId = referenceOf(params);
    try {
      return await this.#send(params, options, 'withdraw');
    } catch (error) {
      throw tagReference(error, referenceId);
    }
  }

  /**
   * Finds out what happened to a withdrawal whose outcome is unknown, without any risk of a
   * second payout: sends the **same** request (same params, same `reference_id`) once more.
   * The service refuses a second transaction under a used `reference_id` (docs/assumptions.md,
   * A7 and A21), so this can create the withdrawal only if the first request never did.
   *
   * Like `create`, it is sent again only after failures that certainly happened before
   * processing (429, connection refused, 503 NO_GATEWAY_AVAILABLE, TOKEN_EXPIRED); anything
   * that may have reached the service throws {@link OutcomeUnknownError} again (call
   * `recover` later, or wait for the callback). Other errors are thrown with `referenceId`.
   *
   * @example
   * ```ts
   * const recovery = await gateway.withdrawals.recover(params);
   * if (recovery.created) await markPayoutSent(recovery.withdrawal);
   * else await markPayoutAwaitingCallback(recovery.referenceId);
   * ```
   */
  async recover(params: WithdrawalCreateParams, options?: RequestOptions): Promise<WithdrawalRecovery> {
    const referenceId = referenceOf(params);
    try {
      return { created: true, withdrawal: await this.#send(params, options, 'withdraw.recover') };
    } catch (error) {
      const duplicate = (error as { code?: unknown } | null)?.code === 'DUPLICATE_REFERENCE';
      if (duplicate && referenceId !== undefined) return { created: false, referenceId };
      throw tagReference(error, referenceId);
    }
  }

  /**
   * Turns untrusted input (a request body, a form, a queue message) into typed params for
   * {@link create} and {@link recover}, with create's rules and errors: the same
   * {@link InvalidRequestError}, code and `field` as `create` would throw, and nothing sent.
   * `currency` and `method` are filled in when omitted; fields the request does not have are
   * dropped. Keep what it returns: `recover` must be called with the same params.
   *
   * @throws {@link InvalidRequestError} naming the first field at fault.
   *
   * @example
   * ```ts
   * const params = gateway.withdrawals.parse(req.body); // strings from a form are fine
   * await savePayout(params); // recover needs the same params
   * await gateway.withdrawals.create(params);
   * ```
   */
  parse(input: unknown): WithdrawalCreateParams {
    return this.#validate(input);
  }

  #validate(params: unknown) {
    const validated = validateRequest(withdrawalCreateParamsSchema, params, 'withdrawal create');
    // The schema already wrote `amount` as the JSON number to send; its type still admits the string it came as.
    return {
      ...validated,
      amount: Number(validated.amount),
      currency: validated.currency ?? CURRENCY,
      method: validated.method ?? 'BANK',
    };
  }

  async #send(
    params: WithdrawalCreateParams,
    options: RequestOptions | undefined,
    operation: Operation,
  ): Promise<WithResponse<Withdrawal>> {
    const body = this.#validate(params);
    const referenceId = body.reference_id;
    // The account number never comes back in clear: not in a message the service wrote, not in any field of the result.
    const redact = accountNumberRedactor(body.account_number);
    const { data, response } = await this.#transport.call(
      { method: 'POST', path: 'payment/withdraw', body, authenticated: true, operation, referenceId, redact },
      options,
    );
    const check: AnswerCheck = {
      what: 'withdrawal create',
      followUp: `. The withdrawal may have been processed: ${outcomeUnknownAdvice(operation, referenceId)}`,
      allowInsecureLoopback: false,
    };
    const withdrawal = parseSuccess(
      withdrawalSchema,
      maskAccountNumbers(data, redact, body.account_number),
      check.what,
      check.followUp,
    );
    checkEcho(check, 'reference_id', referenceId, withdrawal.reference_id);
    checkEcho(check, 'amount', body.amount, withdrawal.amount);
    // The service handles MYR only: a payout answered in another currency is not this request's.
    // A bank_code is not judged: the spec does not show the answer, and the service may spell a
    // code its own way (case, SWIFT or its own); the result carries the code that was sent.
    checkEcho(
      check,
      'currency',
      body.currency,
      typeof withdrawal.currency === 'string' ? withdrawal.currency.toUpperCase() : withdrawal.currency,
    );
    // What the SDK vouches for is filled from the request when the service left it out (the amount echo was checked above).
    const result: Withdrawal = {
      ...withdrawal,
      reference_id: referenceId,
      amount: withdrawal.amount ?? body.amount,
      currency: body.currency,
      bank_code: body.bank_code,
      account_number: text(withdrawal.account_number, maskAccountNumber(body.account_number)),
    };
    return withResponse(result, response);
  }
}
