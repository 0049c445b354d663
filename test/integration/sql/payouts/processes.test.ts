/**
 * SqlPayouts with workers in processes of their own (sql/payouts/child.ts), on real PostgreSQL,
 * MariaDB and SQLite, against the mock served over real HTTP: a refusal met by two worker
 * processes on one table is refused once, and a worker killed with its request in flight has its
 * payout taken over by another worker with the default lease, within 20 s.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createMockGateway, type MockHttpServer } from '../../../../src/testing/index.js';
import { withdrawalParams } from '../../../helpers/client.js';
import {
  child,
  databasesForFile,
  gatewayOf,
  killed,
  outboxOn,
  told,
  untilChildGets,
  type ProcessDb,
} from './processes.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DBS = databasesForFile(['postgres', 'mysql', 'sqlite']);

const servers: MockHttpServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

/** A mock of its own served on 127.0.0.1, a table of its own with one staged payout, and the env child.ts needs. */
async function setup(db: ProcessDb) {
  const mock = createMockGateway();
  const server = await mock.serve();
  servers.push(server);
  const { payouts, env } = await outboxOn(db, mock, server);
  const params = withdrawalParams();
  await payouts.transaction(({ tx }) => payouts.stage(tx, params));
  return { mock, server, payouts, env, reference: params.reference_id };
}

describe.each(DBS)('two worker processes on one table, on $name', (db) => {
  it('a refusal: refused once, onRefused once, one request at the service', async () => {
    const { mock, payouts, env, reference } = await setup(db);
    // The refusal comes 500 ms late, so the other process drains while the request is in flight.
    mock.fault({ endpoint: 'withdraw', response: { type: 'delay', ms: 500 } });
    mock.fault({
      endpoint: 'withdraw',
      times: Infinity,
      response: { type: 'status', status: 400, code: 'INVALID_BANK_CODE' },
    });
    const messages: unknown[] = [];
    const workers = await Promise.all([0, 1].map(() => child({ ...env, MODE: 'drain', GO: '1' }, 'ready', messages)));
    try {
      const drained = workers.map(
        (worker) => new Promise((resolve) => worker.on('message', (m) => m === 'drained' && resolve(m))),
      );
      for (const worker of workers) worker.send('go');
      await Promise.all(drained);
      expect(told(messages, 'report')).toEqual(
        expect.arrayContaining([expect.objectContaining({ refused: 1 }), expect.objectContaining({ refused: 0 })]),
      );
      expect(told(messages, 'report')).toHaveLength(2);
      expect(told(messages, 'refused')).toEqual([reference]);
      expect(await payouts.get(reference)).toMatchObject({
        state: 'refused',
        lastError: expect.stringContaining('INVALID_BANK_CODE'),
      });
      expect(mock.count('withdraw')).toBe(1);
    } finally {
      await Promise.all(workers.map(killed));
    }
  }, 30_000);
});

/** The worker's default lease (`leaseMs`), which the test leaves unset: the bound a merchant relies on. */
const DEFAULT_LEASE_MS = 15_000;
const TAKEOVER_BOUND_MS = 20_000;

describe('a worker killed with its request in flight, the default lease', () => {
  /** Kills a draining child whose request the service holds; another worker (default options, draining every second) sends the payout. */
  async function takeover(db: ProcessDb) {
    const { mock, server, payouts, env, reference } = await setup(db);
    mock.fault({ endpoint: 'withdraw', response: { type: 'delay', ms: 3000 } });
    const draining = await child({ ...env, MODE: 'drain' }, 'draining');
    await untilChildGets(draining, 'its withdrawal', () => mock.count('withdraw') >= 1);
    await killed(draining);
    const killedAt = Date.now();
    expect(await payouts.get(reference)).toMatchObject({ state: 'sending', attempts: 1 });
    const worker = payouts.worker(gatewayOf(mock, server));
    worker.start();
    try {
      while ((await payouts.get(reference))?.state !== 'sent' && Date.now() - killedAt < TAKEOVER_BOUND_MS + 5000)
        await sleep(100);
      return { mock, reference, sentAfterMs: Date.now() - killedAt, payout: await payouts.get(reference) };
    } finally {
      await worker.stop();
    }
  }

  // Postgres and MariaDB claim with FOR UPDATE SKIP LOCKED, SQLite under its one writer: the
  // lease (the claim's due_at) is what frees the payout on each, so all three run, at once.
  it(`is taken over within ${TAKEOVER_BOUND_MS / 1000} s of the kill (lease ${DEFAULT_LEASE_MS / 1000} s), one withdrawal, on each database`, async () => {
    const outcomes = await Promise.all(DBS.map(takeover));
    for (const { mock, reference, sentAfterMs, payout } of outcomes) {
      expect(payout).toMatchObject({ state: 'sent', attempts: 2 });
      expect(mock.getWithdrawal(reference)).toMatchObject({ amount: 250 });
      expect(sentAfterMs).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
      // The held request was processed; the takeover asked again with the same reference.
      expect(mock.requests.filter((r) => r.endpoint === 'withdraw').map((r) => r.status)).toEqual([200, 409]);
    }
  }, 45_000);
});
