/**
 * The fleet's edge probe is the in-process one: the Lua functions RedisRateLimiter's scripts use
 * (src/redis/rate-edge-probe.ts), run on a real redis-server over every row of the pure decision
 * (src/core/pacing/edge-probe.ts, rows in test/helpers/edge-probe-rows.ts), answer as it does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeProbeVerdict, planEdgeProbe, windowAfterAccepted } from '../../src/core/pacing/edge-probe.js';
import type { RedisClientLike } from '../../src/redis/index.js';
import { EDGE_RULES_LUA } from '../../src/redis/rate-edge-probe.js';
import { ACCEPTED_ROWS, PLAN_ROWS, VERDICT_ROWS } from '../helpers/edge-probe-rows.js';
import { connect, rawCommand, RedisServer } from '../helpers/redis.js';

// Lua numbers come back from Redis truncated to integers: the harness answers in strings.
const HARNESS = `${EDGE_RULES_LUA}
local mode = ARGV[1]
local function num(v) if v == '' then return nil end return tonumber(v) end
if mode == 'plan' then
  local at, untilAt = planEdge(ARGV[2], num(ARGV[3]), num(ARGV[4]), num(ARGV[5]), num(ARGV[6]), num(ARGV[7]))
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
  it.each(PLAN_ROWS)('plan: %s', async (_what, row) => {
    const { state, windowMs, lone, previousResetAt } = row;
    const reply = await lua(['plan', state, windowMs, lone.sentAt, lone.answeredAt, lone.resetAt, previousResetAt]);
    const plan = planEdgeProbe(row);
    expect(reply).toEqual(plan ? [String(plan.at), String(plan.until)] : 'none');
  });

  it.each(VERDICT_ROWS)('verdict: %s', async (_what, answer) => {
    expect(await lua(['verdict', answer.status, answer.limit])).toBe(edgeProbeVerdict(answer));
  });

  it.each(ACCEPTED_ROWS)('window after an accepted probe: lone sent at %d, probe answered at %d', async (from, answered) => {
    expect(await lua(['accepted', from, answered])).toBe(String(windowAfterAccepted(from, answered)));
  });
});
