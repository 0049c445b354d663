/**
 * The Lua scripts of `RedisRateLimiter`, and the checks on what they answer. Everything is
 * measured on Redis's clock (`TIME`): the processes of a fleet may disagree on the time, Redis is
 * the one clock they share. Everything read from Redis is checked before it is used: the hash
 * and the set are input (a bug, an operator's `HSET`, another version of this SDK), and a limit
 * of 0 or a window of a day must not stall every payment of the fleet.
 *
 * Each script calls `redis.replicate_commands()` first: Redis 3.2 to 4.x refuse a write after
 * `TIME` otherwise (Redis 5 and later replicate effects by default, and 7 keeps the call as a no-op).
 *
 * @module
 */
import { MAX_WINDOW_MS, MIN_WINDOW_MS, UNPACED_ABOVE } from '../core/pacing/limiter.js';
import { MAX_HEADERLESS_ANSWERS } from '../core/pacing/slow-start.js';
import { script } from './client.js';

/** How often a process whose calls wait for the fleet's probe asks Redis again. */
export const PROBE_POLL_MS = 100;
/** The longest the fleet waits for one probe's answer before another process may probe. */
export const PROBE_HOLD_MS = 10_000;
/** The longest a slot is held while its request is in flight, from the time it was taken. */
export const MAX_IN_FLIGHT_MS = 3_600_000;

const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function validLimit(v) return v and v == math.floor(v) and v >= 1 and v <= ${UNPACED_ABOVE} end
local function validWindow(v) return v and v >= ${MIN_WINDOW_MS} and v <= ${MAX_WINDOW_MS} end`;

/**
 * Takes up to ARGV[3] slots in one step.
 *
 * KEYS: the slot set, the learned `{ limit, window, headerless, remeasure }` hash, the probe
 * lock. ARGV: this process's limit and window (used where the hash holds none, or nonsense),
 * slots wanted, a batch id, how long a slot granted now may be in flight (ms), '1' when this
 * process has seen the service's limits itself, the probe lock's hold (ms).
 *
 * A value of the hash out of range is deleted and ignored (the process's own stands in), a slot
 * scored further ahead than any grant can score one is dropped. With no limit seen anywhere
 * (slow start, src/core/pacing/slow-start.ts), one probe goes for the whole fleet and the
 * others wait for its answer. A slot is scored with the time it stops counting toward the
 * window's start: while in flight, the latest time its request can still reach the service;
 * once answered, the answer's time (ANSWERED).
 *
 * Returns { slots taken, ms until asking again (0 when all were taken), 1 when the slot is the
 * fleet's probe, Redis's time in ms, 1 when an invalid value was discarded }.
 */
export const ACQUIRE = script(`${PRELUDE}
local cfg = redis.call('HMGET', KEYS[2], 'limit', 'window', 'headerless')
local discarded = 0
local limit = tonumber(cfg[1])
if cfg[1] and not validLimit(limit) then limit = nil; discarded = 1; redis.call('HDEL', KEYS[2], 'limit') end
local window = tonumber(cfg[2])
if cfg[2] and not validWindow(window) then window = nil; discarded = 1; redis.call('HDEL', KEYS[2], 'window') end
local want = tonumber(ARGV[3])
local score = now + tonumber(ARGV[5])
if not limit and ARGV[6] ~= '1' and (tonumber(cfg[3]) or 0) < ${MAX_HEADERLESS_ANSWERS} then
  if not redis.call('SET', KEYS[3], ARGV[4] .. ':1', 'NX', 'PX', ARGV[7]) then return { 0, ${PROBE_POLL_MS}, 0, now, discarded } end
  redis.call('ZADD', KEYS[1], score, ARGV[4] .. ':1')
  redis.call('PEXPIRE', KEYS[1], 7200000)
  if want > 1 then return { 1, ${PROBE_POLL_MS}, 1, now, discarded } end
  return { 1, 0, 1, now, discarded }
end
limit = limit or tonumber(ARGV[1])
window = window or tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. (now + ${MAX_IN_FLIGHT_MS}), '+inf')
local used = redis.call('ZCARD', KEYS[1])
local granted = math.max(0, math.min(want, limit - used))
for i = 1, granted do redis.call('ZADD', KEYS[1], score, ARGV[4] .. ':' .. i) end
-- The TTL only collects an idle merchant's set (pruning is by score): longer than any hold.
if granted > 0 then redis.call('PEXPIRE', KEYS[1], 7200000) end
if granted == want then return { granted, 0, 0, now, discarded } end
local idx = used + granted - limit
local e = redis.call('ZRANGE', KEYS[1], idx, idx, 'WITHSCORES')
if e[2] == nil then return { granted, window, 0, now, discarded } end
return { granted, math.max(1, tonumber(e[2]) + window - now), 0, now, discarded }`);

/** The requests of these slots (ARGV) were answered: each counts from now. XX: a pruned slot stays gone. */
export const ANSWERED = script(`${PRELUDE}
for i = 1, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now, ARGV[i]) end
return #ARGV`);

/**
 * What one answer taught, for the fleet. KEYS: the hash, the probe lock. ARGV: X-RateLimit-Limit,
 * -Remaining, -Reset in Unix ms (each '' when absent), ms since the request's slot was taken,
 * the status ('' when no answer came), the probe's slot name ('' when not the probe).
 *
 * The window is measured here, on Redis's clock: an answer alone in its window
 * (Remaining = Limit − 1) says the window is (reset − send time). The shortest measurement wins
 * (whole-second resets err long), until a 429 says the model was wrong. No process's clock is
 * used, so one that runs ahead cannot shorten the fleet's window.
 */
export const LEARN = script(`${PRELUDE}
local limit = tonumber(ARGV[1])
if validLimit(limit) then
  redis.call('HSET', KEYS[1], 'limit', limit)
  redis.call('HDEL', KEYS[1], 'headerless')
  local remaining, reset, sent = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  if ARGV[5] == '429' then
    redis.call('HSET', KEYS[1], 'remeasure', '1')
  elseif remaining == limit - 1 and reset and sent then
    local w = math.ceil(reset - now + sent)
    if validWindow(w) then
      local current = tonumber(redis.call('HGET', KEYS[1], 'window'))
      if not validWindow(current) or w < current or redis.call('HEXISTS', KEYS[1], 'remeasure') == 1 then
        redis.call('HSET', KEYS[1], 'window', w)
        redis.call('HDEL', KEYS[1], 'remeasure')
      end
    end
  end
elseif ARGV[5] ~= '' then
  redis.call('HINCRBY', KEYS[1], 'headerless', 1)
end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], 3600000) end
if ARGV[6] ~= '' and redis.call('GET', KEYS[2]) == ARGV[6] then redis.call('DEL', KEYS[2]) end
return 1`);

/** An ACQUIRE reply, checked. */
export interface AcquireReply {
  granted: number;
  /** Ms until asking again, within [1, maxPollMs]; 0 when every wanted slot was taken. */
  waitMs: number;
  probe: boolean;
  /** Redis's time when the script ran (ms), if the reply carried a sane one. */
  redisNow: number | undefined;
  discarded: boolean;
}

/** Reads an ACQUIRE reply; anything malformed reads as "no slot, ask again later". */
export function readAcquire(reply: unknown, want: number, maxPollMs: number): AcquireReply {
  const field = (i: number): number => (Array.isArray(reply) ? Number(reply[i]) : Number.NaN);
  const granted = field(0);
  const taken = Number.isInteger(granted) && granted >= 0 && granted <= want ? granted : 0;
  const waitMs = field(1);
  const redisNow = field(3);
  return {
    granted: taken,
    waitMs: taken === want ? 0 : Math.min(maxPollMs, Math.max(1, Number.isFinite(waitMs) ? waitMs : maxPollMs)),
    probe: taken === 1 && field(2) === 1,
    redisNow: Number.isFinite(redisNow) && redisNow > 0 ? redisNow : undefined,
    discarded: field(4) === 1,
  };
}
