/**
 * Issue 22, "shared state is input": values anyone with write access to the shared Redis can
 * put there, each inside the ranges the stores accept, must not stop the fleet. Through the
 * public client against a real HTTP service that enforces its own limit, on a real redis-server,
 * with both Redis clients. Each case heals within seconds, not hours.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MyrGateway, MyrGatewayOptions } from '../../src/index.js';
import { RedisTokenStore } from '../../src/redis/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { clientFor, paymentParams } from '../helpers/client.js';
import { paymentKeys, redisPacingHarness } from '../helpers/redis-pacing-harness.js';
import { CLIENT_KINDS, rawCommand } from '../helpers/redis.js';

const harness = redisPacingHarness();

/** A logger keeping the warnings. */
function warnLog() {
  const warnings: string[] = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (m: unknown) => void warnings.push(String(m)),
    error: () => undefined,
  };
  return { logger, warnings };
}

let n = 0;
describe.each(CLIENT_KINDS)('the shared pacing state on %s is input', (kind) => {
  const fleetProcess = (keyPrefix: string, extra?: Partial<MyrGatewayOptions>) =>
    harness.fleetProcess(kind, keyPrefix, extra);
  const creates = (gateway: MyrGateway, count: number) =>
    Promise.allSettled(
      Array.from({ length: count }, () => gateway.payments.create(paymentParams(), { totalTimeout: 8000 })),
    );
  const failures = (results: PromiseSettledResult<unknown>[]) =>
    results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));

  it('limit 1 per hour and a slot scored an hour ahead, written by someone else: warm and new processes keep creating', async () => {
    const service = await harness.startService(10, 4000);
    const keyPrefix = `poison${++n}${kind}:`;
    const warm = await fleetProcess(keyPrefix);
    await warm.gateway.payments.create(paymentParams());
    await new Promise((resolve) => setTimeout(resolve, 200));
    const keys = await paymentKeys(warm.send, keyPrefix);
    await warm.send(['HSET', keys.cfg, 'limit', '1', 'window', '3600000']);
    await warm.send(['ZADD', keys.slots, String(Math.floor(Date.now() + 3_600_000)), 'poison']);

    expect(failures(await creates(warm.gateway, 3))).toEqual([]);
    // The process that saw the service's limit says once that Redis contradicted it.
    expect(warm.warnings.filter((w) => /contradicts/.test(w))).toHaveLength(1);
    expect(warm.warnings.join('\n')).toContain('trusting the service');

    const fresh = await fleetProcess(keyPrefix);
    expect(failures(await creates(fresh.gateway, 3))).toEqual([]);
    expect(service.creates.filter((c) => c.status === 429)).toEqual([]);
  }, 40_000);

  it('well-formed slots filling an hour-long window: a new process hears the service and keeps creating; a refusal names Redis, not the service', async () => {
    await harness.startService(10, 4000);
    const keyPrefix = `formed${++n}${kind}:`;
    const first = await fleetProcess(keyPrefix);
    await first.gateway.payments.create(paymentParams());
    await new Promise((resolve) => setTimeout(resolve, 200));
    const keys = await paymentKeys(first.send, keyPrefix);
    await first.send(['HSET', keys.cfg, 'limit', '1', 'window', '3600000']);
    await first.send([
      'ZADD',
      keys.slots,
      String(Math.floor(Date.now() + 3_600_000)),
      '1b4e28ba-2fa1-11d2-883f-0016d3cca427:1',
    ]);

    // Another process's probe is out (well-formed, for 2 s): the new one waits for it first.
    await first.send(['SET', keys.probe, '0f4e28ba-2fa1-11d2-883f-0016d3cca427:1', 'PX', '2000']);

    const fresh = await fleetProcess(keyPrefix);
    // A call too short to wait for that is refused, naming where the limit came from.
    const refused = await fresh.gateway.payments
      .create(paymentParams(), { totalTimeout: 300 })
      .catch((e: unknown) => e);
    expect(String(refused)).toContain('RATE_LIMITED');
    expect(String(refused)).not.toContain('the service allows 100 payment requests per 60 s');
    expect(String(refused)).toContain('shared in Redis');
    expect(failures(await creates(fresh.gateway, 3))).toEqual([]);
  }, 40_000);

  it.each(['slots', 'cfg', 'probe'] as const)(
    'the %s key holding another type of value: it is dropped, creates go ahead, one warning',
    async (which) => {
      await harness.startService(10, 4000);
      const keyPrefix = `type${++n}${kind}:`;
      const first = await fleetProcess(keyPrefix);
      await first.gateway.payments.create(paymentParams());
      await new Promise((resolve) => setTimeout(resolve, 200));
      const keys = await paymentKeys(first.send, keyPrefix);
      await first.send(['DEL', keys[which]]);
      await first.send(
        which === 'probe' ? ['HSET', keys.probe, 'f', 'v'] : ['SET', keys[which], 'not a sorted set nor a hash'],
      );

      const fresh = await fleetProcess(keyPrefix);
      expect(failures(await creates(fresh.gateway, 3))).toEqual([]);
      expect(fresh.warnings).toEqual([expect.stringContaining('that this SDK does not write')]);
      // The fleet paces on Redis again: the slots are back in their sorted set.
      expect(await first.send(['TYPE', keys.slots])).toBe('zset');
    },
    40_000,
  );

  it('a probe lock of another type, deleted, is no room in a full window: a process that heard the service meets no 429', async () => {
    const service = await harness.startService(3, 4000);
    const keyPrefix = `foreigntype${++n}${kind}:`;
    const p = await fleetProcess(keyPrefix);
    const q = await fleetProcess(keyPrefix);
    await p.gateway.payments.create(paymentParams());
    const keys = await paymentKeys(p.send, keyPrefix);
    await p.send(['HSET', keys.cfg, 'edge', 'done']);
    // q hears the service (its own model is not held), then p fills the window: 3 of 3.
    await q.gateway.payments.create(paymentParams());
    await p.gateway.payments.create(paymentParams());
    expect(service.creates.map((c) => c.status)).toEqual([200, 200, 200]);
    await p.send(['DEL', keys.probe]);
    await p.send(['HSET', keys.probe, 'f', 'v']);
    await q.gateway.payments.create(paymentParams(), { totalTimeout: 10_000 });
    expect(service.creates.filter((c) => c.status === 429)).toEqual([]);
    expect(q.warnings).toEqual([expect.stringContaining('that this SDK does not write')]);
  }, 30_000);

  it('a probe lock with no TTL does not hold back a newly started process', async () => {
    await harness.startService(10, 4000);
    const keyPrefix = `probe${++n}${kind}:`;
    const first = await fleetProcess(keyPrefix);
    await first.gateway.payments.create(paymentParams());
    await new Promise((resolve) => setTimeout(resolve, 200));
    const keys = await paymentKeys(first.send, keyPrefix);
    // No limit known to the fleet (a new deployment), and a probe nobody will ever answer.
    await first.send(['DEL', keys.cfg]);
    await first.send(['SET', keys.probe, 'stuck']);

    const fresh = await fleetProcess(keyPrefix);
    expect(failures(await creates(fresh.gateway, 3))).toEqual([]);
  }, 40_000);
});

const mock = createMockGateway({ rateLimits: { auth: 1000, paymentRequest: 1000 } });
describe.each(CLIENT_KINDS)('the shared token state on %s is input', (kind) => {
  beforeAll(() => mock.listen());
  afterAll(() => mock.close());
  afterEach(() => mock.reset());

  it.each([
    ['a value with no TTL', ['SET', 'KEY', '{"accessToken":"v1.AAAA.BBBB","lifetimeMs":3600000}']],
    ['a value of another type', ['HSET', 'KEY', 'accessToken', 'x']],
  ])(
    'a token key holding %s is a miss: the call fetches a token of its own, and the key is rewritten with a TTL',
    async (_what, command) => {
      const conn = await harness.connect(kind);
      const keyPrefix = `tokv${++n}${kind}:`;
      const send = (args: string[]) => rawCommand(conn.client, args);
      const { logger, warnings } = warnLog();
      const fleetProcess = () =>
        clientFor(mock, {
          logger,
          tokenStore: new RedisTokenStore({ client: conn.client, keyPrefix, pollIntervalMs: 10 }),
        }).gateway;
      await fleetProcess().payments.create(paymentParams());
      const [token] = (await send(['KEYS', `${keyPrefix}token:*`])) as string[];
      await send(['DEL', token as string]);
      await send(command.map((arg) => (arg === 'KEY' ? (token as string) : arg)));

      const created = await fleetProcess().payments.create(paymentParams(), { totalTimeout: 5000 });
      expect(created.payment_id).toMatch(/^PAY_/);
      expect(mock.count('auth')).toBe(2);
      expect(Number(await send(['PTTL', token as string]))).toBeGreaterThan(0);
      expect(warnings.length).toBeLessThanOrEqual(1);
    },
    20_000,
  );

  it('a refresh lock with no TTL does not hold calls for their whole totalTimeout: it is taken over, and the lock expires again', async () => {
    const conn = await harness.connect(kind);
    const keyPrefix = `tok${++n}${kind}:`;
    const send = (args: string[]) => rawCommand(conn.client, args);
    const fleetProcess = () =>
      clientFor(mock, { tokenStore: new RedisTokenStore({ client: conn.client, keyPrefix, pollIntervalMs: 10 }) })
        .gateway;
    await fleetProcess().payments.create(paymentParams());
    const [token] = (await send(['KEYS', `${keyPrefix}token:*`])) as string[];
    expect(token).toBeDefined();
    const lock = `${keyPrefix}token-lock:${(token as string).slice(`${keyPrefix}token:`.length)}`;
    // The token is gone (expired) and somebody left a lock that never expires.
    await send(['DEL', token as string]);
    await send(['SET', lock, 'stuck']);

    const created = await fleetProcess().payments.create(paymentParams(), { totalTimeout: 5000 });
    expect(created.payment_id).toMatch(/^PAY_/);
    expect(mock.count('auth')).toBe(2);
    // Whatever holds the lock now, it expires.
    expect(Number(await send(['PTTL', lock]))).not.toBe(-1);
  }, 20_000);
});
