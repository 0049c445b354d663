/**
 * The fleet's own requests in flight are not the shared state holding a process back. A slot
 * is scored, while its request is out, with the latest time that request can still reach the
 * service (its call's deadline: two minutes by default), so a window full of requests just sent
 * looks, by its scores, as if it frees minutes from now. A process that has not heard the
 * service itself must wait for their answers then, not take the one request meant for shared
 * state that holds it back longer than the published minute (a hostile limit or window): that
 * request lands in a full window, a 429 the fleet's pacing exists to avoid. Through the public
 * client, on a real redis-server with both clients, against a real HTTP service that answers
 * after counting.
 */
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, MyrGateway } from '../../src/index.js';
import { RedisRateLimiter } from '../../src/redis/index.js';
import { paymentParams } from '../helpers/client.js';
import { redisPacingHarness } from '../helpers/redis-pacing-harness.js';
import { CLIENT_KINDS } from '../helpers/redis.js';

const harness = redisPacingHarness();
const LIMIT = 5;
/** The service's window: the shortest a limiter believes, so the test waits little. */
const WINDOW_MS = 1000;
/** How long the service holds each answer after counting its request. */
const HOLD_MS = 1500;

let n = 0;

describe.each(CLIENT_KINDS)('requests of the fleet in flight, on %s', (kind) => {
  /** One process of the fleet: a client with a limiter on a connection of its own, warnings kept. */
  async function fleetProcess(keyPrefix: string) {
    const conn = await harness.connect(kind);
    const warnings: string[] = [];
    const capture = (m: unknown) => void warnings.push(String(m));
    const logger = { debug: () => undefined, info: () => undefined, warn: capture, error: capture };
    const gateway = new MyrGateway({
      baseUrl: harness.service.baseUrl,
      merchantId: 'MERCHANT_IN_FLIGHT',
      apiKey: 'sk_test_in_flight',
      allowInsecureLoopback: true,
      tokenStore: new MemoryTokenStore(),
      rateLimiter: new RedisRateLimiter({ client: conn.client, keyPrefix, timeoutMs: 5000, logger }),
      logger,
    });
    return { gateway, warnings };
  }
  // The default deadline (two minutes): what scores a slot in flight.
  const create = (gateway: MyrGateway, ref: string) =>
    gateway.payments.create({ ...paymentParams(), reference_id: ref });

  it('a process new to the limits waits for the answers of a window full of requests in flight: no 429', async () => {
    const service = await harness.startService(LIMIT, WINDOW_MS);
    const keyPrefix = `inflight${++n}${kind}:`;
    // One process has heard the service (the limit and window are in Redis), and its one slot
    // has left the learned window (at most the service's window rounded up to a whole second).
    const warm = await fleetProcess(keyPrefix);
    await create(warm.gateway, 'WARM');
    await new Promise((resolve) => setTimeout(resolve, 2 * WINDOW_MS + 200));

    // It fills the window with requests the service counts at once and answers 1.5 s later.
    service.holdAnswers(HOLD_MS);
    const filling = Array.from({ length: LIMIT }, (_, i) => create(warm.gateway, `FILL${i}`));
    await expect.poll(() => service.creates.filter((c) => c.ref.startsWith('FILL')).length).toBe(LIMIT);

    // A process that has heard nothing yet wants one slot while all of them are out.
    const fresh = await fleetProcess(keyPrefix);
    const late = create(fresh.gateway, 'FRESH');
    const [fills, freshPayment] = await Promise.all([Promise.all(filling), late]);

    expect(fills).toHaveLength(LIMIT);
    expect(freshPayment.reference_id).toBe('FRESH');
    const at = (c: { at: number; status: number; ref: string }) => `${c.ref}:${c.status}`;
    expect(service.creates.filter((c) => c.status === 429).map(at)).toEqual([]);
    // It went out once the window's requests were answered and their window had passed.
    const freshSent = service.creates.filter((c) => c.ref === 'FRESH');
    const lastFill = Math.max(...service.creates.filter((c) => c.ref.startsWith('FILL')).map((c) => c.at));
    expect(freshSent).toHaveLength(1);
    expect((freshSent[0]?.at ?? 0) - lastFill).toBeGreaterThanOrEqual(HOLD_MS);
    expect([...warm.warnings, ...fresh.warnings]).toEqual([]);
  }, 30_000);
});
