/**
 * The edge probe (src/core/pacing/edge-probe.ts) in Lua, for `RedisRateLimiter`'s scripts: the same
 * rows, on Redis's clock. test/integration/redis-rate-edge-probe.test.ts runs these functions on a
 * real redis-server over the rows of test/unit/core/pacing/edge-probe.test.ts and holds them equal.
 *
 * The fleet keeps the probe in the `rate-cfg` hash's `edge`, one of `plan:<at>:<from>:<until>` (a
 * planned probe: from when it may go, when the lone request it tests took its slot, when the plan
 * is void; Redis ms), `out:<from>:<slot>` (sent, its answer not yet learned) or `done`. The hash is
 * input: {@link EDGE_READ_LUA} deletes a value of another shape, or with times more than an hour
 * from now, and says so.
 *
 * @module
 */
import { MAX_WINDOW_MS, MIN_WINDOW_MS } from '../core/pacing/bucket-model.js';
import { EDGE_PROBE_MIN_GAIN_MS, RESET_GRAIN_MS } from '../core/pacing/edge-probe.js';

/**
 * `planEdge(state, window, sent, answered, reset)` → `at, until` (nil when no probe):
 * `planEdgeProbe`. `edgeVerdict(status, limit)` → 'accepted' | 'refused' | 'unknown', status a
 * string ('' when no answer came): `edgeProbeVerdict`. `windowAfterAccepted(from, answered)`.
 */
export const EDGE_RULES_LUA = `
local function planEdge(state, window, sent, answered, reset)
  if state ~= 'ready' then return nil end
  local whole = ${RESET_GRAIN_MS} * math.floor((reset - sent) / ${RESET_GRAIN_MS})
  if not (whole == ${RESET_GRAIN_MS} * math.floor((reset - answered) / ${RESET_GRAIN_MS})) then return nil end
  if not (whole >= ${MIN_WINDOW_MS} and whole <= window - ${EDGE_PROBE_MIN_GAIN_MS}) then return nil end
  return answered + whole, answered + window
end
local function edgeVerdict(status, limit)
  if status == '429' then return 'refused' end
  if status ~= '' and limit and limit == math.floor(limit) and limit >= 1 then return 'accepted' end
  return 'unknown'
end
local function windowAfterAccepted(from, answered) return math.ceil(answered - from) end`;

/**
 * `readEdge(hashKey, now)` → the probe's state ('ready' | 'out' | 'done'), then for a plan
 * `at, from, until`, for a probe out `from, slot`, and last whether a value was discarded.
 * Needs `redis` (the PRELUDE of rate-scripts.ts).
 */
export const EDGE_READ_LUA = `
local function near(v, now) return v and v == math.floor(v) and math.abs(v - now) <= ${MAX_WINDOW_MS} end
local function readEdge(key, now)
  local v = redis.call('HGET', key, 'edge')
  if not v then return 'ready' end
  if v == 'done' then return 'done' end
  local a, f, u = string.match(v, '^plan:(%d+):(%d+):(%d+)$')
  a, f, u = tonumber(a), tonumber(f), tonumber(u)
  if near(a, now) and near(f, now) and near(u, now) and a < u then return 'ready', a, f, u end
  local from, slot = string.match(v, '^out:(%d+):(%x+%-%x+%-%x+%-%x+%-%x+:%d+)$')
  from = tonumber(from)
  if near(from, now) then return 'out', from, slot end
  redis.call('HDEL', key, 'edge')
  return 'ready', nil, nil, nil, true
end
local function int(v) return string.format('%d', math.floor(v)) end`;
