/**
 * RedisRateLimiter through the public client against a real HTTP service on 127.0.0.1 that
 * enforces its own limit (issue 14), on both Redis clients: a process with a skewed clock
 * cannot set the window the others pace by, and shared state edited to nonsense does not stall
 * the fleet.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryRateLimiter, MemoryTokenStore, MyrGateway, type MyrGatewayOptions } from '../../src/index.js';
import { RedisRateLimiter } from '../../src/redis/index.js';
import { paymentParams } from '../helpers/client.js';
import type { RateLimitedService } from '../helpers/rate-limited-server.js';
import { redisPacingHarness } from '../helpers/redis-pacing-harness.js';
import { CLIENT_KINDS, rawCommand, whileRedisDown } from '../helpers/redis.js';

const harness = redisPacingHarness();

function gateway(base: string, limiter: RedisRateLimiter, extra: Partial<MyrGatewayOptions> = {}) {
  return new MyrGateway({
    baseUrl: base,
    merchantId: 'MERCHANT_FLEET_1',
    apiKey: 'sk_test_fleet',
    allowInsecureLoopback: true,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: limiter,
    ...extra,
  });
}

const statuses = (s: RateLimitedService, from: number) => s.creates.slice(from).map((c) => c.status);

describe.each(CLIENT_KINDS)('RedisRateLimiter on %s, through the client', (kind) => {
  /** A limiter on a connection of its own (one process of the fleet), on this test's key prefix. */
  async function processLimiter(keyPrefix: string) {
    const conn = await harness.connect(kind);
    return { limiter: new RedisRateLimiter({ client: conn.client, keyPrefix, timeoutMs: 5000 }), client: conn.client };
  }

  it('a process whose clock is 5 s ahead does not set the window: the others meet no 429', async () => {
    const service = await harness.startService(10, 10_000);
    const keyPrefix = `skew${Date.now()}${kind}:`;
    const ahead = gateway(service.baseUrl, (await processLimiter(keyPrefix)).limiter, { now: () => Date.now() + 5000 });
    const [a, b] = [
      gateway(service.baseUrl, (await processLimiter(keyPrefix)).limiter),
      gateway(service.baseUrl, (await processLimiter(keyPrefix)).limiter),
    ];
    const started = Date.now();
    // The skewed process sends the first request: alone in the service's window, the one a window is measured from.
    await ahead.payments.create(paymentParams());
    const from = service.creates.length;
    // One process fills the window; another, which has not seen it full, comes 6 s later.
    const first = await Promise.allSettled(Array.from({ length: 9 }, () => a.payments.create(paymentParams())));
    await new Promise((resolve) => setTimeout(resolve, started + 6000 - Date.now()));
    const later = await Promise.allSettled(Array.from({ length: 10 }, () => b.payments.create(paymentParams())));
    expect([...first, ...later].filter((r) => r.status === 'rejected')).toEqual([]);
    expect(statuses(service, from).filter((s) => s === 429)).toHaveLength(0);
  }, 40_000);

  it("a process whose clock is 5 s behind holds a window another client filled until the service's reset: no 429", async () => {
    const service = await harness.startService(10, 8000);
    const keyPrefix = `behind${Date.now()}${kind}:`;
    const behind = gateway(service.baseUrl, (await processLimiter(keyPrefix)).limiter, {
      now: () => Date.now() - 5000,
    });
    // Another client of the merchant, paced on its own (not in the fleet).
    const outside = new MyrGateway({
      baseUrl: service.baseUrl,
      merchantId: 'MERCHANT_FLEET_1',
      apiKey: 'sk_test_fleet',
      allowInsecureLoopback: true,
      tokenStore: new MemoryTokenStore(),
      rateLimiter: new MemoryRateLimiter(),
    });
    const from = service.creates.length;
    await behind.payments.create(paymentParams());
    await Promise.all(Array.from({ length: 8 }, () => outside.payments.create(paymentParams())));
    // The tenth: answered with nothing left, the window's reset 7–8 s away on the service's clock.
    await behind.payments.create(paymentParams());
    await behind.payments.create(paymentParams(), { totalTimeout: 20_000 });
    expect(statuses(service, from)).toEqual(Array.from({ length: 11 }, () => 200));
  }, 40_000);

  it('rate-cfg edited to limit 0: creations still go ahead', async () => {
    const service = await harness.startService(5, 2000);
    const keyPrefix = `cfg${Date.now()}${kind}:`;
    const first = await processLimiter(keyPrefix);
    await gateway(service.baseUrl, first.limiter).payments.create(paymentParams());
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [cfg] = (await rawCommand(first.client, ['KEYS', `${keyPrefix}rate-cfg:*`])) as string[];
    expect(cfg).toBeDefined();
    await rawCommand(first.client, ['HSET', cfg as string, 'limit', '0']);
    const warnings: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (m: string) => void warnings.push(m),
      error: () => undefined,
    };
    const other = gateway(service.baseUrl, (await processLimiter(keyPrefix)).limiter, { logger });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => other.payments.create(paymentParams(), { totalTimeout: 15_000 })),
    );
    expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([]);
    expect(warnings).toEqual([expect.stringContaining('found a limit or window in Redis out of range')]);
  }, 40_000);

  it("a limiter given no logger warns through its client's logger, never the console", async () => {
    const service = await harness.startService(5, 2000);
    const onConsole = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const warnings: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (m: string) => void warnings.push(m),
      error: () => undefined,
    };
    try {
      await whileRedisDown(kind, async (client) => {
        const limiter = new RedisRateLimiter({ client, timeoutMs: 100 });
        await gateway(service.baseUrl, limiter, { logger }).payments.create(paymentParams());
      });
      expect(warnings.filter((m) => m.includes('RedisRateLimiter could not reach Redis'))).toHaveLength(1);
      expect(onConsole).not.toHaveBeenCalled();
    } finally {
      onConsole.mockRestore();
    }
  });
});
