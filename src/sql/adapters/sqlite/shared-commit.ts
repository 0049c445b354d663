/**
 * Which runs share one COMMIT on the SQLite adapter's connection. SQLite has one writer, and a
 * COMMIT's cost is the WAL pages it writes (docs/benchmarks.md, "where a callback's time goes"):
 * runs that follow each other on the connection while others wait their turn join the
 * transaction the first one began, each in a SAVEPOINT of its own (its failure or time-out rolls
 * back only its part), and one COMMIT ends them all. No run is answered before the COMMIT that
 * holds it: each run's `commit` (and the `rollback` of a run whose reads may rest on the runs
 * before it) settles with that COMMIT, and when it fails, every run in it fails with it (nothing
 * of any of them committed; the ledger runs each once more). After a shared COMMIT fails, runs
 * commit alone for a while, so the run that broke it meets its failure alone on its retry; and
 * after a slow run (one the runs before it waited for past SLOW_RUN_MS) too.
 *
 * @module
 */
import { SHARED_COMMIT_FAILED } from '../../dialects/sqlite/session.js';

/** The most runs one COMMIT ends. */
export const SHARED_COMMIT_MAX_RUNS = 32;
/**
 * How long a shared transaction takes new runs, in ms from its BEGIN: the first run's answer
 * waits at most this long, plus the time of the last run let in (at most `maxRunMs`).
 */
export const SHARED_COMMIT_OPEN_MS = 5;
/**
 * Runs commit alone this long after sharing cost more than it saves: a shared COMMIT failed (the
 * gateway's retries come within it, so the run at fault fails alone), or a run was slow (see
 * {@link isSlowRun}: the runs before it waited for it).
 */
export const ALONE_FOR_MS = 10_000;
/** A run that holds the connection longer than this while runs before it wait makes runs commit alone for a while. */
export const SLOW_RUN_MS = 10;

/** How a run held the connection, for {@link isSlowRun}. */
export interface RunHold {
  /** From taking the connection to its end, in ms. */
  heldMs: number;
  /** Runs before it in the open transaction waiting for its COMMIT (0 for the run that began it). */
  waitingOnIt: number;
}

/**
 * Whether a run cost the runs before it in its shared COMMIT their time: some wait for that
 * COMMIT, and it held the connection longer than {@link SLOW_RUN_MS}, however it spent it
 * (awaiting a fetch, computing, a synchronous wait, the machine being busy). Alone they would have
 * been answered before it began. A run nobody waits on (the first of its transaction) costs nobody.
 *
 * @example
 * ```ts
 * isSlowRun({ heldMs: 40, waitingOnIt: 3 }); // true: three answers waited 40 ms for it
 * isSlowRun({ heldMs: 40, waitingOnIt: 0 }); // false: it began the transaction; nobody waited
 * ```
 */
export function isSlowRun(hold: RunHold): boolean {
  return hold.waitingOnIt > 0 && hold.heldMs > SLOW_RUN_MS;
}

/** What {@link sharesCommit} decides on. */
export interface SharedCommitState {
  /** Runs waiting for the connection now. */
  waiting: number;
  /** Runs the open transaction holds (committed into it or rolled back out of it). */
  runs: number;
  /** Since the transaction's BEGIN, in ms. */
  openForMs: number;
  /** Since sharing last paused (a shared COMMIT failed, a slow run), in ms (Infinity: never). */
  sincePauseMs: number;
}

/**
 * Whether the transaction stays open for the next run when one ends: someone is waiting, it holds
 * fewer than {@link SHARED_COMMIT_MAX_RUNS}, it has been open under {@link SHARED_COMMIT_OPEN_MS},
 * and in the last {@link ALONE_FOR_MS} no shared COMMIT failed and no run was slow.
 *
 * @example
 * ```ts
 * sharesCommit({ waiting: 3, runs: 1, openForMs: 0.2, sincePauseMs: Infinity }); // true
 * sharesCommit({ waiting: 0, runs: 1, openForMs: 0.2, sincePauseMs: Infinity }); // false: COMMIT now
 * ```
 */
export function sharesCommit(state: SharedCommitState): boolean {
  return (
    state.waiting > 0 &&
    state.runs < SHARED_COMMIT_MAX_RUNS &&
    state.openForMs < SHARED_COMMIT_OPEN_MS &&
    state.sincePauseMs >= ALONE_FOR_MS
  );
}

/** What the runs in a shared COMMIT that failed are told: nothing of theirs committed, and the failure may be another run's. */
export function sharedCommitFailed(cause: unknown): Error {
  return Object.assign(
    new Error(
      "the COMMIT this run shared with other runs on the SQLite connection failed: nothing of it committed, and the failure may be another run's",
      { cause },
    ),
    { code: SHARED_COMMIT_FAILED },
  );
}

/** A run waiting for the COMMIT it shares: told when it lands, or that it failed. */
interface Waiting {
  readonly landed: () => void;
  readonly failed: (error: Error) => void;
}

/**
 * The open transaction's runs that wait for its COMMIT, and when it began. One per connection;
 * the adapter begins, joins and ends it on its turns (from-sqlite.ts).
 */
export class SharedCommit {
  /** Whether a transaction is open for the next run to join. */
  open = false;
  /** Runs it holds (committed into it or rolled back out of it). */
  runs = 0;
  #openedAt = 0;
  #pausedAt = Number.NEGATIVE_INFINITY;
  readonly #waiting: Waiting[] = [];

  /** Runs that wait for its COMMIT: committed into it, or refused on what they read in it. */
  get pending(): number {
    return this.#waiting.length;
  }

  /** A transaction began: the run that began it is its first. */
  began(now: number): void {
    this.open = true;
    this.runs = 1;
    this.#openedAt = now;
  }

  /** Whether it stays open for the next run (see {@link sharesCommit}). */
  staysOpen(waiting: number, now: number): boolean {
    return sharesCommit({
      waiting,
      runs: this.runs,
      openForMs: now - this.#openedAt,
      sincePauseMs: now - this.#pausedAt,
    });
  }

  /** A run waits for the COMMIT: resolves when it lands, rejects when it fails. */
  await(): Promise<void> {
    return new Promise((landed, failed) => this.#waiting.push({ landed, failed }));
  }

  /** The COMMIT landed (or the transaction ended with nothing to commit): every waiting run is told. */
  landed(): void {
    this.open = false;
    for (const run of this.#waiting.splice(0)) run.landed();
  }

  /**
   * A run that held the connection `heldMs` ended: a slow one (see {@link isSlowRun}) makes runs
   * commit alone for a while.
   */
  ran(heldMs: number, now: number): void {
    if (isSlowRun({ heldMs, waitingOnIt: this.#waiting.length })) this.#pausedAt = now;
  }

  /**
   * The COMMIT failed, or the transaction was lost: every waiting run fails, and when there were
   * any (the failure may have been one of theirs), runs commit alone for a while.
   */
  failed(cause: unknown, now: number): void {
    this.open = false;
    if (this.#waiting.length > 0) this.#pausedAt = now;
    for (const run of this.#waiting.splice(0)) run.failed(sharedCommitFailed(cause));
  }
}
