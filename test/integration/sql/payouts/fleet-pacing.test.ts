/**
 * Three worker processes (sql/payouts/child.ts, each its own client and `start()`) drain 60
 * staged payouts against a service limited to 30 withdrawals per 6 s, pacing through the database
 * they share: each payout sent once, at most one 429, and the drain within 1.3× the ideal. A
 * wall-clock bound: one of vitest.config.ts's TIMED files, run alone after the others.
 */
import { describe, expect, it } from 'vitest';
import { createMockGateway } from '../../../../src/testing/index.js';
import { withdrawalParams } from '../../../helpers/client.js';
import { child, databasesForFile, killed, outboxOn, told } from './processes.js';

const PAYOUTS = 60;
const PROCESSES = 3;
const LIMIT = 30;
const WINDOW_MS = 6000;
/** How far past the ideal a drain may end. */
const BOUND = 1.3;
/** How often the test reads how many payouts are `sent` (the drain's end is known to this much). */
const POLL_MS = 25;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DBS = databasesForFile(['postgres', 'mysql', 'sqlite']);

describe.each(DBS)('three worker processes on one table, on $name', (db) => {
  it(`drain ${PAYOUTS} payouts against ${LIMIT} per ${WINDOW_MS / 1000} s: each sent once, at most one 429, within ${BOUND}× the ideal`, async () => {
    const mock = createMockGateway({ rateLimits: { withdraw: LIMIT }, rateLimitWindowMs: WINDOW_MS });
    const server = await mock.serve();
    const { table, payouts, env: shared } = await outboxOn(db, mock, server);
    const references = Array.from({ length: PAYOUTS }, () => withdrawalParams());
    await payouts.transaction(async ({ tx }) => {
      for (const params of references) await payouts.stage(tx, params);
    });
    const env = {
      ...shared,
      MODE: 'start',
      GO: '1',
      PACE: `${LIMIT}/${WINDOW_MS}`,
    };
    const messages: unknown[] = [];
    const workers = await Promise.all(Array.from({ length: PROCESSES }, () => child(env, 'ready', messages)));
    try {
      for (const worker of workers) worker.send('go');
      let done: number | undefined;
      for (const giveUpAt = Date.now() + 5 * WINDOW_MS; done === undefined && Date.now() < giveUpAt;) {
        if ((await db.count(`SELECT count(*) AS n FROM ${table} WHERE state = 'sent'`)) === PAYOUTS) done = Date.now();
        else await sleep(POLL_MS);
      }
      const requests = mock.requests.filter((r) => r.endpoint === 'withdraw');
      const accepted = requests.filter((r) => r.status === 200);
      expect(accepted).toHaveLength(PAYOUTS);
      expect(new Set(accepted.map((r) => Reflect.get(Object(r.body), 'reference_id'))).size).toBe(PAYOUTS);
      expect(requests.filter((r) => r.status === 429).length).toBeLessThanOrEqual(1);
      for (const params of references) {
        expect(await payouts.get(params.reference_id)).toMatchObject({ state: 'sent' });
        expect(mock.getWithdrawal(params.reference_id)).toMatchObject({ amount: params.amount });
      }

      // The ideal drain: the service takes LIMIT in any WINDOW_MS, so the 60 need
      // ceil(60 / 30) = 2 windows: the first 30 at once, the other 30 no earlier than one window
      // after the first request arrived; the drain then ends with the last request's round trip
      // (timed by the process that sent it: the one answered last). The drain is timed from the
      // first process's start of draining (its token and first claim included) to the 60th `sent`.
      const answers = told(messages, 'answeredAt').map((answeredAt, i) => ({
        answeredAt: Number(answeredAt),
        roundTripMs: Number(told(messages, 'roundTripMs')[i]),
      }));
      const last = answers.reduce((a, b) => (b.answeredAt > a.answeredAt ? b : a));
      const ideal = (Math.ceil(PAYOUTS / LIMIT) - 1) * WINDOW_MS + last.roundTripMs;
      const began = Math.min(...told(messages, 'began').map(Number));
      expect(done).toBeDefined();
      const took = (done ?? Infinity) - began;
      expect(took / ideal, `drained in ${took} ms, the ideal ${ideal} ms`).toBeLessThanOrEqual(BOUND);
    } finally {
      await Promise.all(workers.map(killed));
      await server.close();
    }
  }, 60_000);
});
