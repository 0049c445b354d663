import type { RequestOptions, Transport } from '../core/transport.js';
import { parseSuccess, validateRequest } from '../core/validate.js';
import {
  maskAccountNumber,
  type Withdrawal,
  type WithdrawalCreateParams,
  withdrawalCreateParamsSchema,
  withdrawalSchema,
} from '../schemas/withdrawals.js';

/**
 * Withdrawals (payouts) to Malaysian bank accounts: `POST /payment/withdraw`.
 * Reached as `gateway.withdrawals`.
 */
export class Withdrawals {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
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
   * are retried.
   *
   * @example
   * ```ts
   * try {
   *   const payout = await gateway.withdrawals.create({
   *     amount: 250,
   *     reference_id: 'PAYOUT7781',
   *     bank_code: 'PBBEMYKL',
   *     account_number: '5140123456789',
   *     account_name: 'Tan Wei Ming',
   *   });
   * } catch (error) {
   *   if (error instanceof OutcomeUnknownError) {
   *     // Do NOT send again yet: check gateway.payments.retrieve(error.referenceId) or wait for the callback.
   *   }
   *   throw error;
   * }
   * ```
   */
  async create(params: WithdrawalCreateParams, options?: RequestOptions): Promise<Withdrawal> {
    const body = validateRequest(withdrawalCreateParamsSchema, params, 'withdrawal create');
    const raw = await this.#transport.call(
      { method: 'POST', path: 'payment/withdraw', body, authenticated: true, repeat: 'at-most-once', referenceId: body.reference_id },
      options,
    );
    const withdrawal = parseSuccess(
      withdrawalSchema,
      raw,
      'withdrawal create',
      `. The service answered 2xx, so the withdrawal was accepted: do not send it again; follow it with payments.retrieve('${body.reference_id}') or the callback`,
    );
    const result: Withdrawal = { ...withdrawal, reference_id: withdrawal.reference_id ?? body.reference_id };
    if (typeof result.account_number === 'string') result.account_number = maskAccountNumber(result.account_number);
    return result;
  }
}
