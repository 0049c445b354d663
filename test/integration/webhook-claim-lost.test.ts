/**
 * Redis restarted without persistence (or a lagging replica promoted) while a handler runs:
 * the ledger forgot the claim, the next delivery claims again and the handler runs a second
 * time concurrently. The first instance must not finish silently: its `onError` gets a
 * CLAIM_LOST error. Real redis-server, two instances on both clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisWebhookStore } from '../../src/redis/index.js';
import { signCallback } from '../../src/testing/index.js';
import { ClaimLostError, createWebhookHandler, runOnce, type WebhookHandlerError } from '../../src/webhooks/index.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer, type ClientKind } from '../helpers/redis.js';

const API_KEY = 'sk_test_claim_lost_0001';
let server: RedisServer;
beforeAll(async () => {
  // No persistence, as in the reviewers' run: the stores warn about it once, and a restart forgets every key.
  server = await RedisServer.start({ durable: false });
});
afterAll(() => server.stop());

/** Waits (bounded) until `client` answers again after a restart. */
async function reconnected(client: Parameters<typeof rawCommand>[0]): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (
      await rawCommand(client, ['PING']).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('Redis did not come back');
}

const other = (kind: ClientKind): ClientKind => (kind === 'ioredis' ? 'node-redis' : 'ioredis');
let n = 0;

describe.each(CLIENT_KINDS)('first instance on %s', (kind) => {
  it('Redis restarted empty between claim and complete: the first instance reports CLAIM_LOST, the second runs', async () => {
    const a = await connect(kind, server.url);
    const b = await connect(other(kind), server.url);
    try {
      const errorsA: WebhookHandlerError[] = [];
      const warningsA: string[] = [];
      const warningsB: string[] = [];
      const logTo = (lines: string[]) => ({
        debug: () => undefined,
        info: () => undefined,
        warn: (m: string) => void lines.push(m),
        error: (m: string) => void lines.push(m),
      });
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const first = createWebhookHandler({
        verifier: { apiKey: API_KEY },
        store: new RedisWebhookStore({ client: a.client, timeoutMs: 300, logger: logTo(warningsA) }),
        onEvent: async () => {
          started();
          await gate;
        },
        onError: (error) => void errorsA.push(error as WebhookHandlerError),
      });
      let secondRuns = 0;
      const second = createWebhookHandler({
        verifier: { apiKey: API_KEY },
        store: new RedisWebhookStore({ client: b.client, timeoutMs: 300, logger: logTo(warningsB) }),
        onEvent: () => void (secondRuns += 1),
      });
      n += 1;
      const { rawBody, headers } = await signCallback(API_KEY, {
        payment_id: `PAY_LOST_${n}`,
        reference_id: `ORDERLOST${n}`,
        amount: 10,
        status: 'SUCCESS',
      });
      const delivery = { body: rawBody, headers };

      const answerA = first.handle(delivery);
      await running;
      await server.stop();
      await server.start(); // same port, empty: no persistence
      await reconnected(a.client);
      await reconnected(b.client);

      const answerB = await second.handle(delivery);
      expect(answerB.body.outcome).toBe('processed');
      expect(secondRuns).toBe(1);

      openGate();
      await answerA;
      const lost = errorsA.filter((e) => e instanceof ClaimLostError);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ code: 'CLAIM_LOST', name: 'ClaimLostError' });
      // Each client was told once, at its first use, that this Redis keeps nothing across a restart.
      for (const lines of [warningsA, warningsB])
        expect(lines.filter((line) => /persistence/.test(line))).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
    }
  }, 20_000);

  it('runOnce: Redis restarted empty while fn runs: onError gets CLAIM_LOST', async () => {
    const a = await connect(kind, server.url);
    try {
      const warnings: string[] = [];
      const logger = {
        debug: () => undefined,
        info: () => undefined,
        warn: (m: string) => void warnings.push(m),
        error: (m: string) => void warnings.push(m),
      };
      const store = new RedisWebhookStore({ client: a.client, timeoutMs: 300, logger });
      const errors: unknown[] = [];
      n += 1;
      const result = await runOnce(
        store,
        `payment:PAY_RUNONCE_${n}:SUCCESS`,
        async () => {
          await server.stop();
          await server.start();
          await reconnected(a.client);
          return 'fulfilled';
        },
        { onError: (error) => void errors.push(error) },
      );
      expect(result).toEqual({ outcome: 'processed', value: 'fulfilled' });
      expect(errors.filter((e) => e instanceof ClaimLostError)).toHaveLength(1);
      // The store said once, at its first use, that this Redis keeps nothing across a restart.
      expect(warnings.filter((line) => /persistence/.test(line))).toHaveLength(1);
    } finally {
      await a.close();
    }
  }, 20_000);
});
