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
import { settle, type SqlClient, type SqlSession } from '../sql-client.js';

/** A run's client whose every database wait ends with the run's time, and what is left of it. */
export interface RunBudget<Tx> {
  /** The client to run on: the given one when there is no time limit. */
  readonly client: SqlClient<Tx>;
  /** What is left of the run's time, in ms (0 once spent); undefined without a limit. */
  remainingMs(): number | undefined;
}

const EXPIRED = Symbol('expired');

/** The typed answer of a database that did not answer within the run's time (a 503 through the handler). */
function unanswered(timeoutMs: number, what: string): MyrGatewayError {
  return new MyrGatewayError(`the database did not answer ${what} within the run's ${timeoutMs} ms: nothing was acknowledged`, { code: 'STORE_UNAVAILABLE', retryable: true });
}

/**
 * Bounds every wait of one run on `client` by `timeoutMs` from now. A begin that comes too late
 * is rolled back when it arrives; a statement that does not answer in time abandons the
 * transaction (it can never commit); a COMMIT that does not answer in time is reported as
 * unavailable (it may still land: the gateway's retry then finds the callback handled).
 */
export function runBudget<Tx>(client: SqlClient<Tx>, timeoutMs: number | undefined): RunBudget<Tx> {
  if (timeoutMs === undefined) return { client, remainingMs: () => undefined };
  const limitMs = timeoutMs;
  const end = performance.now() + limitMs;
  const remainingMs = () => Math.max(0, end - performance.now());
  const beforeEnd = <T>(pending: Promise<T>): Promise<T | typeof EXPIRED> => within(pending, { ms: remainingMs(), onTimeout: () => EXPIRED });

  function bounded(session: SqlSession<Tx>): SqlSession<Tx> {
    let abandoned = false;
    return {
      tx: session.tx,
      async query(text, params) {
        const answer = session.query(text, params);
        const result = await beforeEnd(answer);
        if (result !== EXPIRED) return result;
        abandoned = true;
        session.abandon(settle(answer));
        throw unanswered(limitMs, 'a statement');
      },
      async commit(held) {
        if (abandoned) throw unanswered(limitMs, 'a statement');
        if ((await beforeEnd(session.commit(held))) === EXPIRED) throw unanswered(limitMs, 'COMMIT (its outcome is unknown)');
      },
      async rollback(cause) {
        // Abandoned already: the adapter rolls back once the pending statement settles. A
        // ROLLBACK that does not answer goes on alone: the connection goes back when it settles.
        if (!abandoned) await beforeEnd(session.rollback(cause));
      },
      abandon(settled) {
        if (abandoned) return;
        abandoned = true;
        session.abandon(settled);
      },
    };
  }

  return {
    remainingMs,
    client: {
      dialect: client.dialect,
      commitChecked: client.commitChecked,
      async begin(lockTimeoutMs) {
        const opening = client.begin(lockTimeoutMs);
        const session = await beforeEnd(opening);
        if (session !== EXPIRED) return bounded(session);
        // The connection came too late for this run: given back as soon as it arrives.
        void opening.then((late) => late.rollback(), () => undefined);
        throw unanswered(limitMs, 'with a connection');
      },
    },
  };
}
