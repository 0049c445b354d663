/**
 * The payout worker: claims due rows, sends each staged payout (`withdrawals.create` the first
 * time, `withdrawals.recover` with the same params after any doubt), writes what came back only
 * while the row is still its claim, and looks up the status of payouts no callback settled in
 * time. No database transaction is open while a request is in flight.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import { milliseconds } from '../../core/milliseconds.js';
import { PUBLISHED_LIMITS, PUBLISHED_WINDOW_MS } from '../../core/pacing/limiter-contract.js';
import { claimDue, type Claimed, type ClaimPlan } from './claim-due.js';
import { lookupVerdict } from './lookup-verdict.js';
import { transactionOf, type Outbox } from './outbox.js';
import type { PayoutRefusal } from './options.js';
import { errorText, rowInvalid, type PayoutRow } from './rows.js';
import type { PayoutState } from './statement-shape.js';
import { payoutVerdict } from './verdict.js';
import type { PayoutDrainReport, PayoutGateway, PayoutWorkerOptions } from './worker-options.js';

/**
 * When the pace counts a claim's request from: the time its answer came, for a claim that sent
 * one. The claim wrote the time it was taken; the request may reach the service later (a loaded
 * process, a slow route), and the service's window frees from its arrival, which is never after
 * the answer. Counting from the answer keeps every later claim's wait long enough.
 */
const answeredAt = (claimed: Claimed): number | null =>
  claimed.action === 'create' || claimed.action === 'recover' ? Date.now() : null;

/** The request of a row to be asked (`payoutRow` reads it for every `staged` or `sending` row). */
function requestOf(row: PayoutRow) {
  if (row.params === undefined) throw rowInvalid(row.referenceId, 'it has no request to send');
  return row.params;
}

/**
 * What one request of a claim may take, its retries included (the call's `totalTimeout`): it
 * ends before the claim's lease, leaving time to write its outcome, so a live worker's request
 * never overlaps another worker's takeover of the same payout (an ended request is an unknown
 * outcome, asked again with `recover`).
 */
const requestMsOf = (leaseMs: number) => Math.max(1, leaseMs - Math.min(5_000, Math.ceil(leaseMs / 3)));

/** `value` when it is a whole number from 1 to `max`, else a ConfigurationError naming the option. */
function count(value: unknown, name: string, max: number): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max) return value;
  throw new ConfigurationError(`${name} must be a whole number from 1 to ${max}`, name);
}

/** Sends and settles one outbox's payouts; built by {@link SqlPayouts.worker}. */
export class PayoutWorker<Tx = unknown> {
  readonly #outbox: Outbox<Tx>;
  readonly #gateway: PayoutGateway;
  readonly #intervalMs: number;
  readonly #settleAfterMs: number;
  readonly #request: { readonly totalTimeout: number };
  readonly #onError: (error: unknown) => void;
  readonly #plan: ClaimPlan;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #started = false;
  #stopping = false;
  /** Ends the wait for room in the shared limit (stop() does not wait a window out). */
  #wake: (() => void) | undefined;

  /** @internal */
  constructor(outbox: Outbox<Tx>, gateway: PayoutGateway, options: PayoutWorkerOptions) {
    this.#outbox = outbox;
    this.#gateway = gateway;
    this.#intervalMs = milliseconds(options.intervalMs ?? 1000, 'intervalMs');
    this.#settleAfterMs = milliseconds(options.settleAfterMs ?? 600_000, 'settleAfterMs');
    const leaseMs = milliseconds(options.leaseMs ?? 15_000, 'leaseMs');
    this.#request = { totalTimeout: requestMsOf(leaseMs) };
    const batchSize = count(options.batchSize ?? 10, 'batchSize', 1000);
    this.#onError = options.onError ?? ((error) => console.error('myr-gateway: a payout drain failed', error));
    const pace = options.pace ?? { limit: PUBLISHED_LIMITS.withdraw, windowMs: PUBLISHED_WINDOW_MS };
    this.#plan = {
      batchSize,
      leaseMs,
      pace:
        pace === false
          ? undefined
          : { limit: count(pace.limit, 'pace.limit', 100_000), windowMs: milliseconds(pace.windowMs, 'pace.windowMs') },
    };
  }

  /**
   * Drains now, then every `intervalMs` until {@link stop}.
   *
   * @example
   * ```ts
   * worker.start();
   * ```
   */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#stopping = false;
    const tick = () => {
      this.#running = this.drain()
        .then(
          () => undefined,
          (error: unknown) => this.#onError(error),
        )
        .then(() => {
          if (this.#started) this.#timer = setTimeout(tick, this.#intervalMs);
        });
    };
    tick();
  }

  /**
   * Stops the schedule and resolves once the drain under way (its requests and their writes) ended.
   *
   * @example
   * ```ts
   * process.on('SIGTERM', () => void worker.stop());
   * ```
   */
  async stop(): Promise<void> {
    this.#started = false;
    this.#stopping = true;
    clearTimeout(this.#timer);
    this.#wake?.();
    await this.#running;
  }

  /**
   * Sends every payout due now, and looks up those sent longer than `settleAfterMs` ago, until
   * none is due; resolves to what it did. For a cron job, or a test.
   *
   * @example
   * ```ts
   * const { sent, refused, unknown, settled, overdue } = await worker.drain();
   * ```
   */
  async drain(): Promise<PayoutDrainReport> {
    const report: PayoutDrainReport = { sent: 0, refused: 0, unknown: 0, settled: 0, overdue: 0 };
    // Only what was due when the drain began: a payout asked again later is the next drain's, so a drain ends.
    const began = Date.now();
    for (;;) {
      const { claimed, waitMs, setAside } = await claimDue(this.#outbox, this.#plan, began);
      for (const error of setAside) this.#onError(error);
      if (claimed.length === 0 && waitMs === 0 && setAside.length === 0) return report;
      const outcomes = await Promise.allSettled(claimed.map((one) => this.#handle(one, report)));
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      if (waitMs > 0) {
        // The shared limit is used up: wait for its oldest request to leave the window (stop() does not wait for that).
        if (this.#stopping) return report;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          this.#wake = () => (clearTimeout(timer), resolve());
        });
        this.#wake = undefined;
        if (this.#stopping) return report;
      }
    }
  }

  async #handle(claimed: Claimed, report: PayoutDrainReport): Promise<void> {
    const { row, action } = claimed;
    if (action === 'lookup') return this.#lookUp(claimed, report);
    if (action === 'refuse' && row.refusal !== undefined) return this.#refuse(claimed, row.refusal, report);
    const first = action === 'create';
    try {
      const paymentId = first ? await this.#create(row) : await this.#recover(row);
      await this.#release(claimed, 'sent', Date.now() + this.#settleAfterMs, { paymentId, lastError: null });
      report.sent += 1;
    } catch (error) {
      const verdict = payoutVerdict(error, first);
      const { code, message } = errorText(error, row.accountNumber);
      if (verdict === 'sent') {
        await this.#release(claimed, 'sent', Date.now() + this.#settleAfterMs, {});
        report.sent += 1;
      } else if (verdict === 'refused') {
        await this.#refuse(claimed, { code, message }, report);
      } else {
        // Certainly unsent after a first request: still staged. Anything else may be at the service.
        const state = verdict === 'wait' && first ? 'staged' : 'sending';
        await this.#release(claimed, state, Date.now() + this.#retryDelay(row.attempts + 1, error), {
          lastError: `${code}: ${message}`,
        });
        report.unknown += 1;
      }
    }
  }

  async #create(row: PayoutRow): Promise<string | null> {
    const withdrawal = await this.#gateway.withdrawals.create(requestOf(row), this.#request);
    return withdrawal.payment_id ?? withdrawal.withdrawal_id ?? null;
  }

  async #recover(row: PayoutRow): Promise<string | null> {
    const recovery = await this.#gateway.withdrawals.recover(requestOf(row), this.#request);
    return recovery.created ? (recovery.withdrawal.payment_id ?? recovery.withdrawal.withdrawal_id ?? null) : null;
  }

  /** Moves the payout to `refused` and runs `onRefused` in that transaction; if the hook throws, the refusal is kept on the row for the next drain. */
  async #refuse(
    claimed: Claimed,
    refusal: { readonly code: string; readonly message: string },
    report: PayoutDrainReport,
  ): Promise<void> {
    const { row } = claimed;
    const given: PayoutRefusal = {
      referenceId: row.referenceId,
      amount: row.amount,
      code: refusal.code,
      message: refusal.message,
    };
    const { sql, table, onRefused } = this.#outbox;
    try {
      const moved = await transactionOf(this.#outbox, async (session) => {
        const values = {
          referenceId: row.referenceId,
          claimId: claimed.claim,
          state: 'refused' as const,
          dueAt: Date.now(),
          paymentId: null,
          lastError: `${refusal.code}: ${refusal.message}`,
          refusal: null,
          now: Date.now(),
          answeredAt: answeredAt(claimed),
        };
        if ((await session.query(sql.release.text(table), sql.release.params(values))).affected !== 1) return false;
        await onRefused(given, { tx: session.tx });
        return true;
      });
      if (moved) report.refused += 1;
    } catch (error) {
      // Never sent again because of it: the row remembers the refusal, and the hook runs on a later drain.
      await this.#release(claimed, 'sending', Date.now() + this.#retryDelay(row.attempts + 1, undefined), {
        lastError: `onRefused threw: ${errorText(error, row.accountNumber).message}`,
        refusal: JSON.stringify(refusal),
      });
      report.unknown += 1;
    }
  }

  /**
   * Asks the status endpoint about a payout no callback settled and does what
   * {@link lookupVerdict} says: settle it, refuse it (another payout's withdrawal holds its
   * reference), or wait (never a resend).
   */
  async #lookUp(claimed: Claimed, report: PayoutDrainReport): Promise<void> {
    const { row } = claimed;
    // A 404 or a failed lookup proves nothing: keep waiting.
    // Bounded like a send: a lookup that outlived the lease would overlap another worker's.
    const found = await this.#gateway.payments.retrieve(row.referenceId, this.#request).catch(() => undefined);
    const verdict = lookupVerdict(row, found);
    if (verdict.verdict === 'refuse')
      return this.#refuse(claimed, { code: 'DUPLICATE_REFERENCE', message: verdict.message }, report);
    const { sql, table, onSettled } = this.#outbox;
    if (verdict.verdict === 'settle') {
      const { state, status: settledStatus, paymentId: settledId } = verdict;
      try {
        const moved = await transactionOf(this.#outbox, async (session) => {
          const values = {
            referenceId: row.referenceId,
            claimId: claimed.claim,
            state,
            dueAt: Date.now(),
            paymentId: settledId,
            lastError: row.lastError ?? null,
            refusal: null,
            now: Date.now(),
            answeredAt: null,
          };
          if ((await session.query(sql.release.text(table), sql.release.params(values))).affected !== 1) return false;
          await onSettled(
            {
              referenceId: row.referenceId,
              amount: row.amount,
              state,
              status: settledStatus,
              paymentId: settledId,
              via: 'status',
            },
            { tx: session.tx },
          );
          return true;
        });
        if (moved) report.settled += 1;
        return;
      } catch (error) {
        await this.#release(claimed, 'sent', Date.now() + this.#retryDelay(row.attempts + 1, undefined), {
          lastError: `onSettled threw: ${errorText(error, row.accountNumber).message}`,
        });
        return;
      }
    }
    await this.#release(claimed, 'sent', Date.now() + this.#settleAfterMs, {});
    report.overdue += 1;
  }

  /** Writes a request's outcome while the row is still this claim (a takeover or a callback may have moved it since). */
  async #release(
    claimed: Claimed,
    state: PayoutState,
    dueAt: number,
    more: { paymentId?: string | null; lastError?: string | null; refusal?: string },
  ): Promise<boolean> {
    const { sql, table } = this.#outbox;
    const values = {
      referenceId: claimed.row.referenceId,
      claimId: claimed.claim,
      state,
      dueAt,
      paymentId: more.paymentId ?? null,
      // Kept unless this outcome says otherwise (null: a sent payout's earlier failures are over).
      lastError: more.lastError === undefined ? (claimed.row.lastError ?? null) : more.lastError,
      refusal: more.refusal ?? null,
      now: Date.now(),
      answeredAt: answeredAt(claimed),
    };
    return transactionOf(
      this.#outbox,
      async (session) => (await session.query(sql.release.text(table), sql.release.params(values))).affected === 1,
    );
  }

  /** The wait before a payout is asked again: `intervalMs`, doubling per request, at most a minute; a 429's `Retry-After` when longer, up to an hour. */
  #retryDelay(attempts: number, error: unknown): number {
    const backoff = Math.min(this.#intervalMs * 2 ** Math.min(Math.max(attempts - 1, 0), 16), 60_000);
    const retryAfter =
      typeof error === 'object' && error !== null && 'retryAfter' in error && typeof error.retryAfter === 'number'
        ? error.retryAfter * 1000
        : 0;
    // A Retry-After past an hour (or not a number) is not believed: the payout would never be due again.
    return Number.isFinite(retryAfter) ? Math.max(backoff, Math.min(retryAfter, 3_600_000)) : backoff;
  }
}
