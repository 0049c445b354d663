/**
 * The fleet's edge probe is the in-process one: the Lua functions RedisRateLimiter's scripts use
 * (src/redis/rate-edge-probe.ts), run on a real redis-server over every row of the pure decision
 * (src/core/pacing/edge-probe.ts, rows in test/helpers/edge-probe-rows.ts), answer as it does.
 * And what the fleet keeps of it in Redis is input: a value it did not write stops nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTokenStore, MyrGateway } from '../../src/index.js';
import { edgeProbeVerdict, planEdgeProbe, windowAfterAccepted } from '../../src/core/pacing/edge-probe.js';
import { type RedisClientLike, RedisRateLimiter } from '../../src/redis/index.js';
import { EDGE_RULES_LUA } from '../../src/redis/rate-edge-probe.js';
import { paymentParams } from '../helpers/client.js';
import { ACCEPTED_ROWS, PLAN_ROWS, VERDICT_ROWS } from '../helpers/edge-probe-rows.js';
import { startRateLimitedService } from '../helpers/rate-limited-server.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer } from '../helpers/redis.js';

// Lua numbers come back from Redis truncated to integers: the harness answers in strings.
const HARNESS = `${EDGE_RULES_LUA}
local mode = ARGV[1]
local function num(v) if v == '' then return nil end return tonumber(v) end
if mode == 'plan' then
  local at, untilAt = planEdge(ARGV[2], num(ARGV[3]), num(ARGV[4]), num(ARGV[5]), num(ARGV[6]))
  if at then return { tostring(at), tostring(untilAt) } end
  return 'none'
elseif mode == 'verdict' then
  return edgeVerdict(ARGV[2], num(ARGV[3]))
end
return tostring(windowAfterAccepted(num(ARGV[2]), num(ARGV[3])))`;

let redis: RedisServer;
let client: RedisClientLike;
let close: () => Promise<void>;
beforeAll(async () => {
  redis = await RedisServer.start();
  ({ client, close } = await connect('ioredis', redis.url));
});
afterAll(async () => {
  await close?.();
  await redis?.stop();
});

const arg = (v: number | string | undefined) => (v === undefined ? '' : String(v));
const lua = (args: (number | string | undefined)[]) => rawCommand(client, ['EVAL', HARNESS, '0', ...args.map(arg)]);

describe('the Lua edge probe answers as planEdgeProbe, edgeProbeVerdict and windowAfterAccepted', () => {
  // The fleet's clock is Redis's, taken to agree with the service's: its rule is the one without a Date.
  it.each(PLAN_ROWS)('plan: %s', async (_what, row) => {
    const { state, windowMs, lone } = row;
    const reply = await lua(['plan', state, windowMs, lone.sentAt, lone.answeredAt, lone.resetAt]);
    const plan = planEdgeProbe({ ...row, lone: { ...lone, datedAt: undefined } });
    expect(reply).toEqual(plan ? [String(plan.at), String(plan.until)] : 'none');
  });

  it.each(VERDICT_ROWS)('verdict: %s', async (_what, answer) => {
    expect(await lua(['verdict', answer.status, answer.limit])).toBe(edgeProbeVerdict(answer));
  });

  it.each(ACCEPTED_ROWS)(
    'window after an accepted probe: lone sent at %d, probe answered at %d',
    async (from, answered) => {
      expect(await lua(['accepted', from, answered])).toBe(String(windowAfterAccepted(from, answered)));
    },
  );
});

describe.each(CLIENT_KINDS)("the edge probe's state in rate-cfg on %s is input", (kind) => {
  it.each([
    ['an edge value of another shape', 'edge', 'plan:soon'],
    [
      'a plan with times a day away',
      'edge',
      `plan:${Date.now() + 86_400_000}:${Date.now()}:${Date.now() + 86_400_000}`,
    ],
    ['a probe out under a slot of another form', 'edge', `out:${Date.now()}:not-a-slot`],
  ])(
    '%s: deleted, creates go ahead, one warning',
    async (_what, field, value) => {
      const service = await startRateLimitedService(10, 4000);
      const conn = await connect(kind, redis.url);
      try {
        const keyPrefix = `edge${Date.now()}${kind}:`;
        const warnings: string[] = [];
        const logger = {
          debug: () => undefined,
          info: () => undefined,
          warn: (m: unknown) => void warnings.push(String(m)),
          error: () => undefined,
        };
        const gateway = new MyrGateway({
          baseUrl: service.baseUrl,
          merchantId: 'MERCHANT_EDGE_INPUT',
          apiKey: 'sk_test_edge_input',
          allowInsecureLoopback: true,
          tokenStore: new MemoryTokenStore(),
          rateLimiter: new RedisRateLimiter({ client: conn.client, keyPrefix, timeoutMs: 5000, logger }),
        });
        await gateway.payments.create(paymentParams());
        const [cfg] = (await rawCommand(conn.client, ['KEYS', `${keyPrefix}rate-cfg:*`])) as string[];
        await rawCommand(conn.client, ['HSET', cfg as string, field, value]);
        // 12 more in a window of 10: the window fills, and the acquire that finds it full reads the plan.
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, () => gateway.payments.create(paymentParams(), { totalTimeout: 20_000 })),
        );

        expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([]);
        expect(service.creates.filter((c) => c.status === 429).length).toBe(0);
        expect(await rawCommand(conn.client, ['HGET', cfg as string, field])).not.toBe(value);
        expect(warnings).toEqual([expect.stringContaining('that this SDK does not write')]);
      } finally {
        await conn.close();
        await service.close();
      }
    },
    40_000,
  );
});
