/**
 * The run's time budget over every database wait (src/sql/ledger/run-budget.ts), through SqlLedger.run and
 * the webhook handler over scripted clients: a database that never answers costs a typed
 * `unavailable` (503), never a hang, the work never runs without its claim, and whatever was
 * pending is cleaned up when it settles, never committed.
 */
import { describe, expect, it } from 'vitest';
import { MyrGatewayError } from '../../../../src/index.js';
import type { SqlClient, SqlSession } from '../../../../src/sql/sql-client.js';
import { SqlLedger, fromPg } from '../../../../src/sql/index.js';
import { createWebhookHandler, signCallback } from '../../../../src/webhooks/index.js';

type Step = 'begin' | 'claim' | 'commit' | 'rollback';
const TX = { the: 'merchant transaction' };
const RUN = { raiseMark: false, completedTtlMs: 60_000, timeoutMs: 50 } as const;

/** A client whose `hang` steps wait until `answer()` is called (the database comes back). */
function stalling(hang: readonly Step[]) {
  const events: string[] = [];
  const waiting: (() => void)[] = [];
  const step = (name: Step) => {
    events.push(name);
    return hang.includes(name) ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve();
  };
  const client: SqlClient<typeof TX> = {
    dialect: 'postgres',
    commitChecked: true,
    async begin() {
      await step('begin');
      const session: SqlSession<typeof TX> = {
        tx: TX,
        async query() {
          await step('claim');
          return { rows: [], affected: 1 };
        },
        commit: () => step('commit'),
        rollback: () => step('rollback'),
        abandon: (settled) => void settled.then(() => events.push('rolled back after abandon')),
      };
      return session;
    },
  };
  const answer = async () => {
    for (const resolve of waiting.splice(0)) resolve();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { client, events, answer };
}

const unavailable = {
  outcome: 'unavailable',
  error: expect.objectContaining({ code: 'STORE_UNAVAILABLE', retryable: true }),
  // The log line's message: the table, and what did not answer.
  message: expect.stringMatching(
    /^the idempotency store failed on the SQL ledger table t: the database did not answer .+ within the run's \d+ ms.* \(STORE_UNAVAILABLE\)$/,
  ),
};

describe('SqlLedger.run within its timeoutMs', () => {
  it('no connection in time: unavailable (typed), the work never runs; the late connection is rolled back and given back', async () => {
    const db = stalling(['begin']);
    let ran = false;
    const run = await new SqlLedger(db.client, { table: 't' }).run('k', () => void (ran = true), RUN);
    expect(run).toEqual(unavailable);
    expect(run.outcome === 'unavailable' && run.error).toBeInstanceOf(MyrGatewayError);
    await db.answer();
    expect(ran).toBe(false);
    expect(db.events).toEqual(['begin', 'rollback']);
  });

  it('no answer to the claim in time: unavailable, the work never runs, the transaction is abandoned (never committed)', async () => {
    const db = stalling(['claim']);
    let ran = false;
    expect(await new SqlLedger(db.client, { table: 't' }).run('k', () => void (ran = true), RUN)).toEqual(unavailable);
    await db.answer();
    expect(ran).toBe(false);
    expect(db.events).toEqual(['begin', 'claim', 'rolled back after abandon']);
  });

  it('no answer to COMMIT in time: unavailable, not processed (the gateway retries; a COMMIT that landed makes the retry a duplicate)', async () => {
    const db = stalling(['commit']);
    expect(await new SqlLedger(db.client, { table: 't' }).run('k', () => 'done', RUN)).toEqual(unavailable);
  });

  it('a ROLLBACK that does not answer does not hold the answer back', async () => {
    const db = stalling(['rollback']);
    const run = await new SqlLedger(db.client, { table: 't' }).run(
      'k',
      () => Promise.reject(new Error('the warehouse API is down')),
      RUN,
    );
    expect(run).toMatchObject({ outcome: 'failed', error: { message: 'the warehouse API is down' } });
  });

  it('without timeoutMs (runOnce) it waits for the database', async () => {
    const db = stalling(['begin']);
    const running = new SqlLedger(db.client, { table: 't' }).run('k', () => 'done', {
      raiseMark: false,
      completedTtlMs: 60_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 80));
    await db.answer();
    expect(await running).toEqual({ outcome: 'processed', value: 'done' });
  });
});

describe('the webhook handler on a pool that hands out no connection (every connection busy, or a database that is down)', () => {
  it('answers 503 within handlerTimeoutMs, the handler not run, and gives the connection back when it finally comes', async () => {
    const released: unknown[] = [];
    let handOut!: () => void;
    const client = {
      query: async (text: string) => ({ rows: [], rowCount: 1, command: text.split(' ')[0] ?? '' }),
      release: (destroy?: unknown) => void released.push(destroy ?? 'back'),
    };
    const pool = { connect: () => new Promise<typeof client>((resolve) => (handOut = () => resolve(client))) };
    let ran = false;
    const reported: unknown[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: 'sk_test_deadline_01' },
      store: new SqlLedger(fromPg(pool), { table: 't' }),
      handlerTimeoutMs: 50,
      onError: (error) => void reported.push(error),
      onEvent: () => void (ran = true),
    });
    const { rawBody, headers } = await signCallback('sk_test_deadline_01', {
      payment_id: 'PAY_1',
      reference_id: 'ORDER_1',
      amount: 50,
      status: 'SUCCESS',
    });
    expect(await handler.handle({ body: rawBody, headers })).toMatchObject({
      status: 503,
      body: { outcome: 'unavailable' },
      headers: { 'retry-after': expect.any(String) },
    });
    expect(reported).toEqual([
      expect.objectContaining({ stage: 'store', cause: expect.objectContaining({ code: 'STORE_UNAVAILABLE' }) }),
    ]);
    handOut();
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toBe(false);
    expect(released).toEqual(['back']);
  });
});

describe('a timed-out run gives up on its work', () => {
  /** A Postgres client whose claim answers; `waiting` answers the question of who waits on the run's locks (never, when undefined). */
  function askedWhoWaits(waiting: readonly number[] | undefined) {
    const events: string[] = [];
    const client: SqlClient<typeof TX> = {
      dialect: 'postgres',
      commitChecked: true,
      async begin() {
        return {
          tx: TX,
          async query(text) {
            if (!text.includes('pg_blocking_pids')) return { rows: [], affected: 1 };
            events.push('asked who waits');
            if (waiting === undefined) return new Promise<never>(() => undefined);
            return { rows: waiting.map((pid) => ({ pid })), affected: 0 };
          },
          commit: async () => void events.push('commit'),
          rollback: async () => void events.push('rollback'),
          abandon: () => void events.push('abandoned'),
        };
      },
    };
    return { client, events };
  }
  const stuck = () => new Promise<never>(() => undefined);

  it('names the sessions Postgres says wait on a lock the run holds (the handler waited on itself), then lets go', async () => {
    const { client, events } = askedWhoWaits([4242]);
    const run = await new SqlLedger(client, { table: 't' }).run('k', stuck, RUN);
    expect(run).toEqual({
      outcome: 'timed_out',
      message: expect.stringMatching(
        /^the webhook handler outlived handlerTimeoutMs: .*Postgres session 4242 waited on a lock its own transaction held .* instead of tx/,
      ),
    });
    expect(events).toEqual(['asked who waits', 'abandoned']);
  });

  it('no session waits: timed_out without a message (the handler says its own line)', async () => {
    const { client, events } = askedWhoWaits([]);
    expect(await new SqlLedger(client, { table: 't' }).run('k', stuck, RUN)).toEqual({ outcome: 'timed_out' });
    expect(events).toEqual(['asked who waits', 'abandoned']);
  });

  it('a database that does not answer the question does not keep the run: let go after the bound, without a message', async () => {
    const { client, events } = askedWhoWaits(undefined);
    expect(await new SqlLedger(client, { table: 't' }).run('k', stuck, RUN)).toEqual({ outcome: 'timed_out' });
    expect(events).toEqual(['asked who waits', 'abandoned']);
  });

  it('MySQL is not asked: let go at once', async () => {
    const { client, events } = askedWhoWaits([4242]);
    expect(await new SqlLedger({ ...client, dialect: 'mysql' }, { table: 't' }).run('k', stuck, RUN)).toEqual({
      outcome: 'timed_out',
    });
    expect(events).toEqual(['abandoned']);
  });
});
