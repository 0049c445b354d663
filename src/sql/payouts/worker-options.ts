/**
 * What a payout worker is given and what its drain answers: the client it sends through, its
 * options (schedule, status lookups, leases, the shared limit) and the drain's counts.
 *
 * @module
 */
import type { Payments } from '../../resources/payments.js';
import type { Withdrawals } from '../../resources/withdrawals.js';

/** What the worker needs of a client: `new MyrGateway()` is one. */
export interface PayoutGateway {
  /** Sends a payout (`create`) and asks again with its reference after any doubt (`recover`). */
  readonly withdrawals: Pick<Withdrawals, 'create' | 'recover'>;
  /** Looks a payout up by its reference once it is overdue (`retrieve`). */
  readonly payments: Pick<Payments, 'retrieve'>;
}

/** Options of {@link SqlPayouts.worker}. */
export interface PayoutWorkerOptions {
  /**
   * How often `start()` drains, in ms; also the first wait before a payout whose request failed
   * is asked again (doubling per request, at most a minute).
   *
   * @default 1000
   * @example
   * ```ts
   * payouts.worker(gateway, { intervalMs: 5_000 });
   * ```
   */
  intervalMs?: number | undefined;
  /**
   * How long, in ms, a `sent` payout waits for its callback before the worker asks the status
   * endpoint (by `reference_id`, assumption A6); asked again as often when that settles nothing.
   *
   * @default 600000
   * @example
   * ```ts
   * payouts.worker(gateway, { settleAfterMs: 15 * 60_000 });
   * ```
   */
  settleAfterMs?: number | undefined;
  /**
   * How long, in ms, a claimed payout is this worker's: a worker killed mid-send has its payouts
   * taken over by another after this. Keep the client's `timeoutMs` below it.
   *
   * @default 15000
   * @example
   * ```ts
   * payouts.worker(gateway, { leaseMs: 30_000 });
   * ```
   */
  leaseMs?: number | undefined;
  /**
   * Rows claimed at once; their requests go out together, paced by the client.
   *
   * @default 10
   * @example
   * ```ts
   * payouts.worker(gateway, { batchSize: 25 });
   * ```
   */
  batchSize?: number | undefined;
  /**
   * The withdrawal limit every worker on this table shares, through the database: a claim that
   * will send takes its turn on the table's pacing row and counts the payouts requested in the
   * last `windowMs` (plus a twentieth of it, at most half a second, for requests still on their
   * way), so any number of
   * workers, in any number of processes, request at most `limit` per window. `false` leaves
   * pacing to each client alone.
   *
   * @default { limit: 50, windowMs: 60000 } (the service's published withdrawal limit)
   * @example
   * ```ts
   * payouts.worker(gateway, { pace: { limit: 30, windowMs: 60_000 } }); // keep room for withdrawals sent elsewhere
   * ```
   */
  pace?:
    | {
        /** Requests per window, for all workers on this table. */
        limit: number;
        /** The window, in ms. */
        windowMs: number;
      }
    | false
    | undefined;
  /**
   * Where a drain that failed under `start()` is reported (a database down); the next one runs
   * on schedule all the same.
   *
   * @default console.error
   * @example
   * ```ts
   * payouts.worker(gateway, { onError: (error) => logger.error({ err: error }, 'payout drain failed') });
   * ```
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** What one drain did (counts). */
export interface PayoutDrainReport {
  /** Payouts the service now holds (an answer naming them, or DUPLICATE_REFERENCE on a resend). */
  sent: number;
  /** Payouts refused for good (`onRefused` ran). */
  refused: number;
  /** Payouts whose request ended without an answer that settles them: asked again later. */
  unknown: number;
  /** Payouts settled by a status lookup (`onSettled` ran). */
  settled: number;
  /** Sent payouts past `settleAfterMs` that no lookup settled (no callback, no answer): see docs/payouts.md. */
  overdue: number;
}
