/**
 * Which due payouts a drain takes now, and what it does with each: up to `batchSize` rows due by
 * the drain's start, in one short transaction, each given the claim's id and a lease. A payout to
 * be requested is taken only while the limit shared with other workers (`pace`) has room; the
 * rest wait until its oldest request leaves the window. A row the outbox cannot read is set aside
 * for an hour, so it never holds back the payouts behind it.
 *
 * @module
 */
import { MyrGatewayError } from '../../core/errors/base.js';
import { transactionOf, type Outbox } from './outbox.js';
import { claimId, keyText, payoutRow, rowInvalid, type PayoutRow } from './rows.js';
import type { PayoutState } from './statement-shape.js';

/** Requests on their way count in the window this much longer (a request arrives after its claim): a twentieth of it, at most half a second. */
const paceSlackMs = (windowMs: number) => Math.min(500, Math.ceil(windowMs / 20));

/** How long a row the outbox cannot read is set aside before it is read (and reported) again. */
const SET_ASIDE_MS = 3_600_000;

/** A row's key as a statement can name it again: Postgres and MySQL give a string; SQLite may give NULL or a blob. */
const keyOf = (value: unknown): string | null | Uint8Array =>
  typeof value === 'string' || value === null || value instanceof Uint8Array
    ? value
    : typeof value === 'number' || typeof value === 'bigint'
      ? `${value}`
      : typeof value;

/** What a drain does with a claimed row. */
export type ClaimAction = 'create' | 'recover' | 'refuse' | 'lookup';

/** One claimed row and what to do with it. */
export interface Claimed {
  readonly row: PayoutRow;
  readonly claim: number;
  readonly action: ClaimAction;
}

/** How the worker claims: its batch, its lease, and the limit it shares with other workers (none: `pace: false`). */
export interface ClaimPlan {
  readonly batchSize: number;
  readonly leaseMs: number;
  readonly pace: { readonly limit: number; readonly windowMs: number } | undefined;
}

/** What one claim took, how long until the limit has room for the rest (0: it had), and the rows set aside (why, for `onError`). */
export interface ClaimedBatch {
  readonly claimed: Claimed[];
  readonly waitMs: number;
  readonly setAside: MyrGatewayError[];
}

/**
 * What a due row asks for: a `sent` row a status lookup; a row that remembers a refusal its hook
 * has yet to take, that hook; a `staged` row its first request; anything else (a `sending` row,
 * whose request may be at the service) a recovery with the same params, never a fresh create.
 */
export const actionOf = (row: PayoutRow): ClaimAction =>
  row.state === 'sent'
    ? 'lookup'
    : row.refusal !== undefined
      ? 'refuse'
      : row.state === 'staged'
        ? 'create'
        : 'recover';

/**
 * Claims the rows due by `dueBy` (see the module's summary).
 *
 * @example
 * ```ts
 * const { claimed, waitMs, setAside } = await claimDue(outbox, { batchSize: 10, leaseMs: 15_000, pace: undefined }, Date.now());
 * ```
 */
export function claimDue<Tx>(outbox: Outbox<Tx>, plan: ClaimPlan, dueBy: number): Promise<ClaimedBatch> {
  const { sql, table } = outbox;
  const { pace } = plan;
  return transactionOf(outbox, async (session) => {
    if (pace !== undefined) await session.query(sql.paceLock.text(table), sql.paceLock.params({}));
    // Read after the pace lock: a claim that waited on another worker's counts from when it holds the lock.
    const now = Date.now();
    let room = Infinity;
    let oldest = now;
    if (pace !== undefined) {
      const since = now - pace.windowMs - paceSlackMs(pace.windowMs);
      // Another worker's clock may be ahead, but not by a window: later times are no request of ours.
      const until = now + pace.windowMs;
      const recent = (await session.query(sql.recent.text(table), sql.recent.params({ since, until }))).rows[0];
      room = pace.limit - Number(recent?.n ?? 0);
      oldest = Number(recent?.oldest ?? now);
    }
    const due = (await session.query(sql.due.text(table), sql.due.params({ now: dueBy, limit: plan.batchSize }))).rows;
    const claimed: Claimed[] = [];
    const setAside: MyrGatewayError[] = [];
    let waitMs = 0;
    let nullsParked = false;
    for (const found of due) {
      let row: PayoutRow;
      try {
        row = payoutRow(found);
      } catch (error) {
        if (!(error instanceof MyrGatewayError)) throw error;
        const key = keyOf(found.reference_id);
        // SQLite keeps NULL in a TEXT key more than once: IS NULL sets them all aside at the first.
        if (key === null && nullsParked) continue;
        nullsParked ||= key === null;
        const referenceId = keyText(key);
        const parked = await session.query(
          sql.park.text(table),
          sql.park.params({ referenceId: key, dueAt: now + SET_ASIDE_MS, lastError: error.message.slice(0, 400) }),
        );
        // A key no statement can name: the drain stops here, told once per interval, rather than
        // read the same row again and again.
        if (parked.affected < 1) throw rowInvalid(referenceId, 'its reference_id cannot be named to set it aside');
        setAside.push(error);
        continue;
      }
      const action = actionOf(row);
      const requests = action === 'create' || action === 'recover';
      if (requests && room <= 0) {
        const window = pace === undefined ? 1 : pace.windowMs + paceSlackMs(pace.windowMs);
        // Never longer than a window and its slack: the oldest request counted was made by now.
        waitMs = Math.min(window, Math.max(1, oldest + window - now));
        continue;
      }
      if (requests) room -= 1;
      const claim = claimId();
      const state: PayoutState = row.state === 'sent' ? 'sent' : 'sending';
      const values = {
        referenceId: row.referenceId,
        state,
        claimId: claim,
        until: now + plan.leaseMs,
        attempt: requests ? (1 as const) : (0 as const),
        requestedAt: requests ? now : null,
      };
      // Only the row read, still in a state to act on: a key that names another row is never acted on.
      if ((await session.query(sql.claim.text(table), sql.claim.params(values))).affected !== 1) continue;
      claimed.push({ row, claim, action });
    }
    return { claimed, waitMs, setAside };
  });
}
