/**
 * The time budget of one ledger run: acquiring a connection, the claim, the work and the COMMIT
 * all wait only what is left of `timeoutMs`. A database that stops answering (an outage, a
 * driver that never settles a statement on a dead connection, a pool that waits for ever for a
 * free connection) then costs the webhook handler a 503 in bounded time, never a hang; whatever
 * was still pending is cleaned up when it settles, and never commits.
 *
 * @module
 */
import { MyrGatewayError } from '../../core/errors/base.js';
import { within } from '../../core/wait.js';
import { WAITING_ON_THIS_SESSION } from '../dialects/postgres/session.js';
import { settle, type SqlClient, type SqlResult, type SqlSession, type SqlStatement } from '../sql-client.js';

/** A run's client whose every database wait ends with the run's time, and what is left of it. */
export interface RunBudget<Tx> {
  /** The client to run on: the given one when there is no time limit. */
  readonly client: SqlClient<Tx>;
  /**
   * `pending`'s value, or undefined once the run's time is spent first (an answer already there
   * wins, even then); `pending` as it is without a limit. For the work's outcome: its `Settled`
   * is never undefined.
   */
  race<T>(pending: Promise<T>): Promise<T | undefined>;
  /**
   * Gives up on work that outlived the run's time (`settled`: what it threw, once it settles):
   * the transaction is ended at once (rolled back, or its connection closed), and answers the
   * log line's message when the database said why the work was stuck (on Postgres, a session
   * waiting on a lock this transaction holds: the handler wrote through another connection
   * instead of tx, and waited on its own run).
   */
  giveUp(session: SqlSession<Tx>, settled: Promise<unknown>): Promise<string | undefined>;
  /** The run is over: its timer goes (a wait still pending then is nobody's). */
  finish(): void;
}

/**
 * How long a timed-out run asks the database why its work was stuck before it lets go regardless.
 * An idle connection (the work waits elsewhere) answers in milliseconds; only a connection still
 * busy with a statement of the work waits it out, so the bound is generous for a loaded machine.
 */
const DIAGNOSIS_MS = 1000;

/**
 * The message of a run whose work was stuck on a lock its own transaction held: `waiting` are
 * the sessions (Postgres pids) that waited on it.
 */
export function waitedOnItself(waiting: readonly unknown[]): string {
  return `the webhook handler outlived handlerTimeoutMs: rolled back, answered 503; Postgres session ${waiting.join(', ')} waited on a lock its own transaction held (pg_blocking_pids): the handler wrote through another connection (the app's db or pool) instead of tx, and waited on itself`;
}

/**
 * Asks `session`'s database, within {@link DIAGNOSIS_MS}, which sessions wait on a lock its
 * transaction holds (Postgres only: MySQL says it only with the performance schema's grants),
 * then ends the transaction at once; answers the message when some did.
 */
async function giveUp<Tx>(
  client: SqlClient<Tx>,
  session: SqlSession<Tx>,
  settled: Promise<unknown>,
): Promise<string | undefined> {
  let waiting: readonly unknown[] = [];
  if (client.dialect === 'postgres') {
    const asked = session.query(WAITING_ON_THIS_SESSION, []).then(
      (result) => result.rows.map((row) => row.pid),
      () => [],
    );
    waiting = await within(asked, { ms: DIAGNOSIS_MS, onTimeout: () => [] });
  }
  session.abandon(settled);
  return waiting.length > 0 ? waitedOnItself(waiting) : undefined;
}

const EXPIRED = Symbol('expired');

/** The typed answer of a database that did not answer within the run's time (a 503 through the handler). */
function unanswered(timeoutMs: number, what: string): MyrGatewayError {
  return new MyrGatewayError(
    `the database did not answer ${what} within the run's ${timeoutMs} ms: nothing was acknowledged`,
    { code: 'STORE_UNAVAILABLE', retryable: true },
  );
}

/**
 * Bounds every wait of one run on `client` by `timeoutMs` from now. A begin that comes too late
 * is rolled back when it arrives; a statement that does not answer in time abandons the
 * transaction (it can never commit); a COMMIT that does not answer in time is reported as
 * unavailable (it may still land: the gateway's retry then finds the callback handled). One timer
 * per run bounds all of them (a run's waits share its end): a timer per wait cost more than the
 * statements themselves on an in-process database.
 */
export function runBudget<Tx>(client: SqlClient<Tx>, timeoutMs: number | undefined): RunBudget<Tx> {
  if (timeoutMs === undefined)
    return {
      client,
      race: (pending) => pending,
      giveUp: (session, settled) => giveUp(client, session, settled),
      finish: () => undefined,
    };
  return new Budget(client, timeoutMs);
}

// Classes, not closures: a run builds one budget and one session, and a closure made per run is
// work per callback (the ledger bench counts it against a floor that makes none).

/** The bounded run's client, and the budget itself. */
class Budget<Tx> implements RunBudget<Tx>, SqlClient<Tx> {
  readonly dialect: SqlClient<Tx>['dialect'];
  readonly commitChecked: boolean | undefined;
  readonly sharesCommit: boolean | undefined;
  readonly #client: SqlClient<Tx>;
  readonly limitMs: number;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #spent: Promise<typeof EXPIRED>;

  constructor(client: SqlClient<Tx>, limitMs: number) {
    this.#client = client;
    this.dialect = client.dialect;
    this.commitChecked = client.commitChecked;
    this.sharesCommit = client.sharesCommit;
    this.limitMs = limitMs;
    let expire!: (expired: typeof EXPIRED) => void;
    this.#spent = new Promise((resolve) => (expire = resolve));
    this.#timer = setTimeout(expire, limitMs, EXPIRED);
  }

  get client(): SqlClient<Tx> {
    return this;
  }

  /** `pending`'s answer, or EXPIRED once the run's time is spent (an answer already there wins: race takes the first listed). */
  beforeEnd<T>(pending: Promise<T>): Promise<T | typeof EXPIRED> {
    return Promise.race([pending, this.#spent]);
  }

  async begin(lockTimeoutMs: number, ledgerRun?: boolean): Promise<SqlSession<Tx>> {
    const opening = this.#client.begin(lockTimeoutMs, ledgerRun);
    const session = await this.beforeEnd(opening);
    if (session !== EXPIRED) return new Bounded(this, session);
    // The connection came too late for this run: given back as soon as it arrives.
    void opening.then(
      (late) => late.rollback(),
      () => undefined,
    );
    throw unanswered(this.limitMs, 'with a connection');
  }

  async race<T>(pending: Promise<T>): Promise<T | undefined> {
    const result = await this.beforeEnd(pending);
    return result === EXPIRED ? undefined : result;
  }

  giveUp(session: SqlSession<Tx>, settled: Promise<unknown>): Promise<string | undefined> {
    if (!(session instanceof Bounded) || session.budget !== this) return giveUp(this.#client, session, settled);
    // The bounded session is done too: the transaction is not ended twice.
    session.abandoned = true;
    return giveUp(this.#client, session.session, settled);
  }

  finish(): void {
    clearTimeout(this.#timer);
  }
}

/** The adapter's session, each wait bounded by the run's time; giving up asks the adapter's own. */
class Bounded<Tx> implements SqlSession<Tx> {
  readonly tx: Tx;
  abandoned = false;

  constructor(
    readonly budget: Budget<Tx>,
    readonly session: SqlSession<Tx>,
  ) {
    this.tx = session.tx;
  }

  async query(text: string, params: readonly unknown[]): Promise<SqlResult> {
    const answer = this.session.query(text, params);
    const result = await this.budget.beforeEnd(answer);
    if (result !== EXPIRED) return result;
    this.abandoned = true;
    this.session.abandon(settle(answer));
    throw unanswered(this.budget.limitMs, 'a statement');
  }

  async commit(held: SqlStatement | undefined): Promise<void> {
    if (this.abandoned) throw unanswered(this.budget.limitMs, 'a statement');
    const committing = this.session.commit(held);
    // A COMMIT shared with the runs let in after this one waits for them (each bounded by the client's maxRunMs).
    if (this.budget.sharesCommit === true) return committing;
    if ((await this.budget.beforeEnd(committing)) === EXPIRED)
      throw unanswered(this.budget.limitMs, 'COMMIT (its outcome is unknown)');
  }

  async rollback(cause?: unknown): Promise<void> {
    // Abandoned already: the adapter rolls back once the pending statement settles. A ROLLBACK
    // that does not answer goes on alone: the connection goes back when it settles.
    if (!this.abandoned) await this.budget.beforeEnd(this.session.rollback(cause));
  }

  abandon(settled: Promise<unknown>): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.session.abandon(settled);
  }

  landed(): Promise<void> {
    return this.session.landed?.() ?? Promise.resolve();
  }
}
