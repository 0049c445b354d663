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
import { MAX_WINDOW_MS, MIN_WINDOW_MS } from '../core/pacing/bucket-model.js';
import { PUBLISHED_WINDOW_MS, UNPACED_ABOVE } from '../core/pacing/limiter-contract.js';
import { MAX_HEADERLESS_ANSWERS } from '../core/pacing/slow-start.js';
import { script } from './client.js';
import { EDGE_READ_LUA, EDGE_RULES_LUA } from './rate-edge-probe.js';

/** How often a process whose calls wait for the fleet's probe asks Redis again. */
export const PROBE_POLL_MS = 100;
/**
 * The longest the fleet waits for one probe's answer before another process may probe; also how
 * long a process that has not heard the service waits on slots scored ahead before it takes
 * them as a hold to hear the service about.
 */
export const PROBE_HOLD_MS = 10_000;
/**
 * How much longer than the service's window a measured one may be: its reset's whole second and
 * a round trip. The spec's minute is measured a little over a minute; only more is a long hold.
 */
export const WINDOW_SLACK_MS = 2000;
/** The longest a slot is held while its request is in flight, from the time it was taken. */
export const MAX_IN_FLIGHT_MS = 3_600_000;

const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function validLimit(v) return v and v == math.floor(v) and v >= 1 and v <= ${UNPACED_ABOVE} end
local function validWindow(v) return v and v >= ${MIN_WINDOW_MS} and v <= ${MAX_WINDOW_MS} end
${EDGE_RULES_LUA}
${EDGE_READ_LUA}`;

/**
 * Takes up to ARGV[3] slots in one step.
 *
 * KEYS: the slot set, the learned `{ limit, window, headerless, remeasure, edge }` hash, the probe
 * lock. ARGV: this process's limit and window (used where the hash holds none, or nonsense),
 * slots wanted, a batch id, how long a slot granted now may be in flight (ms), '1' when this
 * process has seen the service's limits itself, the probe lock's hold (ms), how long this
 * process's calls have waited without a slot since its last grant (ms).
 *
 * The hash and the set are what other processes (or anyone who can write there) left, so:
 * - a value of the hash out of range is deleted and ignored (the process's own stands in);
 * - a process that has seen the service's limits itself never paces below them: a hash limit
 *   lower than its own, or a window more than `WINDOW_SLACK_MS` longer than both its own and
 *   the published minute (a window may legitimately grow after a 429), is overruled (flagged,
 *   so the process says so);
 * - a key holding another type of value is deleted (counted with the foreign slots, never as
 *   room in the window);
 * - when the window looks full, slots not of the form this script writes (`<uuid>:<n>`) are
 *   dropped, and so is any slot scored further ahead than a grant can score one;
 * - a probe lock with no TTL, or a TTL longer than any probe holds it, is cut;
 * - a process that has not heard the service itself, which the shared state would hold back
 *   for longer than the published window, sends one request (under the probe lock) to hear it.
 *   A slot scored ahead (in flight: scored with its call's deadline until answered) counts as
 *   answered now (`held`) until the process's calls have waited `PROBE_HOLD_MS` without a slot:
 *   a window full of the fleet's requests just sent frees a window after their answers, so the
 *   process waits for those, while a slot someone scored far ahead holds it back for about 10 s
 *   of waiting. A window counts as longer than the minute only past `WINDOW_SLACK_MS` (the
 *   spec's minute, measured, is a little over a minute), here and when a process overrules one;
 * - an `edge` field of another shape, or with times more than an hour from now, is deleted
 *   (counted with the foreign values).
 *
 * When the window is exactly full and the hash holds a planned edge probe whose time has come
 * (src/core/pacing/edge-probe.ts), one more slot is granted as the probe, once for the fleet; a
 * wait before a planned probe ends at its time.
 *
 * With no limit seen anywhere (slow start, src/core/pacing/slow-start.ts), one probe goes for
 * the whole fleet and the others wait for its answer. A slot is scored with the time it stops
 * counting toward the window's start: while in flight, the latest time its request can still
 * reach the service; once answered, the answer's time (ANSWERED).
 *
 * Returns { slots taken, ms until asking again (0 when all were taken), 1 when the slot is a
 * probe, Redis's time in ms, 1 when an invalid value was discarded, the limit and window paced
 * on, 1 when they came from the hash, 1 when the hash was overruled, slots dropped as foreign,
 * 1 when a probe lock was cut, ms until a slot frees (a window after its answer, a slot in
 * flight taken as answered now), 1 when the last slot granted is the edge probe }.
 */
export const ACQUIRE = script(`${PRELUDE}
local discarded, overruled, foreign, cut = 0, 0, 0, 0
for i, kind in ipairs({ 'zset', 'hash', 'string' }) do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= kind and t ~= 'none' then redis.call('DEL', KEYS[i]); foreign = foreign + 1 end
end
local cfg = redis.call('HMGET', KEYS[2], 'limit', 'window', 'headerless')
local limit = tonumber(cfg[1])
if cfg[1] and not validLimit(limit) then limit = nil; discarded = 1; redis.call('HDEL', KEYS[2], 'limit') end
local window = tonumber(cfg[2])
if cfg[2] and not validWindow(window) then window = nil; discarded = 1; redis.call('HDEL', KEYS[2], 'window') end
local seen = ARGV[6] == '1'
local ownLimit, ownWindow = tonumber(ARGV[1]), tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local score = now + tonumber(ARGV[5])
local probeSlot = ARGV[4] .. ':1'
local function takeProbeLock()
  if redis.call('SET', KEYS[3], probeSlot, 'NX', 'PX', ARGV[7]) then return true end
  local ttl = redis.call('PTTL', KEYS[3])
  if ttl ~= -1 and ttl <= ${PROBE_HOLD_MS} then return false end
  redis.call('SET', KEYS[3], probeSlot, 'PX', ARGV[7])
  cut = 1
  return true
end
local function probe(wait, fromHash)
  redis.call('ZADD', KEYS[1], score, probeSlot)
  redis.call('PEXPIRE', KEYS[1], 7200000)
  return { 1, wait, 1, now, discarded, limit or ownLimit, window or ownWindow, fromHash, overruled, foreign, cut, wait }
end
if not limit and not seen and (tonumber(cfg[3]) or 0) < ${MAX_HEADERLESS_ANSWERS} then
  if not takeProbeLock() then return { 0, ${PROBE_POLL_MS}, 0, now, discarded, ownLimit, ownWindow, 0, 0, 0, 0, ${PROBE_POLL_MS} } end
  if want > 1 then return probe(${PROBE_POLL_MS}, 0) end
  return probe(0, 0)
end
local fromHash = (limit or window) and 1 or 0
if seen and limit and limit < ownLimit then limit = nil; overruled = 1 end
if seen and window and window > math.max(ownWindow, ${PUBLISHED_WINDOW_MS}) + ${WINDOW_SLACK_MS} then window = nil; overruled = 1 end
limit = limit or ownLimit
window = window or ownWindow
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. (now + ${MAX_IN_FLIGHT_MS}), '+inf')
local used = redis.call('ZCARD', KEYS[1])
if used + want > limit then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if not string.match(m, '^%x+%-%x+%-%x+%-%x+%-%x+:%d+$') then
      redis.call('ZREM', KEYS[1], m)
      foreign = foreign + 1
    end
  end
  used = redis.call('ZCARD', KEYS[1])
end
local granted = math.max(0, math.min(want, limit - used))
for i = 1, granted do redis.call('ZADD', KEYS[1], score, ARGV[4] .. ':' .. i) end
local edgeSlot, edgeAt = 0, nil
if granted < want then
  local state, at, from, untilAt, bad = readEdge(KEYS[2], now)
  if bad then foreign = foreign + 1 end
  if state == 'ready' and at and now >= untilAt then redis.call('HDEL', KEYS[2], 'edge')
  elseif state == 'ready' and at and used + granted == limit then
    if now >= at then
      granted = granted + 1
      redis.call('ZADD', KEYS[1], score, ARGV[4] .. ':' .. granted)
      redis.call('HSET', KEYS[2], 'edge', 'out:' .. int(from) .. ':' .. ARGV[4] .. ':' .. granted)
      edgeSlot = 1
    else edgeAt = at end
  end
end
-- The TTL only collects an idle merchant's set (pruning is by score): longer than any hold.
if granted > 0 then redis.call('PEXPIRE', KEYS[1], 7200000) end
if granted == want then return { granted, 0, 0, now, discarded, limit, window, fromHash, overruled, foreign, cut, 0, edgeSlot } end
local idx = used + granted - limit
local e = redis.call('ZRANGE', KEYS[1], idx, idx, 'WITHSCORES')
local slotAt = tonumber(e[2]) or now
local wait = math.max(1, slotAt + window - now)
local held = math.min(slotAt, now) + window - now
local long = math.max(held, (tonumber(ARGV[8]) or 0) >= ${PROBE_HOLD_MS} and wait or 0) > ${PUBLISHED_WINDOW_MS + WINDOW_SLACK_MS}
if edgeAt then wait = math.max(1, math.min(wait, edgeAt - now)) end
if granted == 0 and not seen and fromHash == 1 and long and takeProbeLock() then
  return probe(want > 1 and ${PROBE_POLL_MS} or 0, fromHash)
end
return { granted, wait, 0, now, discarded, limit, window, fromHash, overruled, foreign, cut, held, edgeSlot }`);

/** The requests of these slots (ARGV) were answered: each counts from now. XX: a pruned slot stays gone. */
export const ANSWERED = script(`${PRELUDE}
for i = 1, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now, ARGV[i]) end
return #ARGV`);

/**
 * What one answer taught, for the fleet. KEYS: the hash, the probe lock, the slot set. ARGV:
 * X-RateLimit-Limit, -Remaining, -Reset in Unix ms (each '' when absent), ms since the request's
 * slot was taken, the status ('' when no answer came), the probe's slot name ('' when not the
 * probe), the edge probe's slot name ('' when not the edge probe).
 *
 * The window is measured here, on Redis's clock: an answer alone in its window
 * (Remaining = Limit − 1) says the window is (reset − send time). The shortest measurement wins
 * (whole-second resets err long), until a 429 says the model was wrong. No process's clock is
 * used, so one that runs ahead cannot shorten the fleet's window. Such an answer may plan the
 * fleet's edge probe (src/core/pacing/edge-probe.ts); the probe's answer ends it: accepted, it
 * narrows the window; refused, its slot is removed (the service did not count it) and the
 * window stands (the 429 was a test, not a sign the model was wrong).
 */
export const LEARN = script(`${PRELUDE}
local function narrow(w)
  if not validWindow(w) then return end
  local current = tonumber(redis.call('HGET', KEYS[1], 'window'))
  if not validWindow(current) or w < current or redis.call('HEXISTS', KEYS[1], 'remeasure') == 1 then
    redis.call('HSET', KEYS[1], 'window', w)
    redis.call('HDEL', KEYS[1], 'remeasure')
  end
end
local limit = tonumber(ARGV[1])
local verdict
if (ARGV[7] or '') ~= '' then
  local state, from, slot = readEdge(KEYS[1], now)
  if state == 'out' and slot == ARGV[7] then
    verdict = edgeVerdict(ARGV[5], limit)
    redis.call('HSET', KEYS[1], 'edge', 'done')
    if verdict == 'refused' then redis.call('ZREM', KEYS[3], ARGV[7]) end
    if verdict == 'accepted' then narrow(windowAfterAccepted(from, now)) end
  end
end
if validLimit(limit) then
  redis.call('HSET', KEYS[1], 'limit', limit)
  redis.call('HDEL', KEYS[1], 'headerless')
  local remaining, reset, sent = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  if ARGV[5] == '429' then
    if verdict ~= 'refused' then redis.call('HSET', KEYS[1], 'remeasure', '1') end
  elseif remaining == limit - 1 and reset and sent then
    narrow(math.ceil(reset - now + sent))
    if reset >= now and near(reset, now) and readEdge(KEYS[1], now) == 'ready' then
      local window = tonumber(redis.call('HGET', KEYS[1], 'window'))
      local at, untilAt
      if validWindow(window) then at, untilAt = planEdge('ready', window, now - sent, now, reset) end
      if at then redis.call('HSET', KEYS[1], 'edge', 'plan:' .. int(at) .. ':' .. int(now - sent) .. ':' .. int(untilAt))
      else redis.call('HDEL', KEYS[1], 'edge') end
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
  /** What the script paced on, and whether it came from the shared hash (else this process's own). */
  paced: { limit: number; windowMs: number; fromRedis: boolean; freeInMs: number } | undefined;
  /** The hash was stricter than what this process heard from the service: overruled. */
  overruled: boolean;
  /** Slots of a form this store does not write, dropped. */
  foreign: number;
  /** A probe lock with no TTL, or one longer than any probe holds it, was cut. */
  cutProbeLock: boolean;
  /** The last slot granted is the fleet's edge probe (src/core/pacing/edge-probe.ts). */
  edgeProbe: boolean;
}

/** Reads an ACQUIRE reply; anything malformed reads as "no slot, ask again later". */
export function readAcquire(reply: unknown, want: number, maxPollMs: number): AcquireReply {
  const field = (i: number): number => (Array.isArray(reply) ? Number(reply[i]) : Number.NaN);
  const granted = field(0);
  const taken = Number.isInteger(granted) && granted >= 0 && granted <= want ? granted : 0;
  const waitMs = field(1);
  const redisNow = field(3);
  const [limit, windowMs, freeInMs] = [field(5), field(6), field(11)];
  const foreign = field(9);
  return {
    granted: taken,
    waitMs: taken === want ? 0 : Math.min(maxPollMs, Math.max(1, Number.isFinite(waitMs) ? waitMs : maxPollMs)),
    probe: taken === 1 && field(2) === 1,
    redisNow: Number.isFinite(redisNow) && redisNow > 0 ? redisNow : undefined,
    discarded: field(4) === 1,
    paced:
      Number.isInteger(limit) && limit >= 1 && windowMs >= MIN_WINDOW_MS && windowMs <= MAX_WINDOW_MS && freeInMs >= 0
        ? { limit, windowMs, fromRedis: field(7) === 1, freeInMs }
        : undefined,
    overruled: field(8) === 1,
    foreign: Number.isInteger(foreign) && foreign > 0 ? foreign : 0,
    cutProbeLock: field(10) === 1,
    edgeProbe: taken >= 1 && field(12) === 1,
  };
}

/**
 * The warnings an ACQUIRE reply calls for, each `[topic, message]` (a limiter says each topic
 * once): what it found wrong in Redis, and that the service was trusted over it. `keys`: the
 * slot set, the hash, the probe lock; `heard`: what this process heard from the service.
 */
export function sharedStateWarnings(
  r: AcquireReply,
  keys: readonly [string, string, string],
  heard: { limit: number; windowMs: number; bucket: string },
): [topic: string, message: string][] {
  const out: [string, string][] = [];
  if (r.discarded) {
    out.push([
      'discarded',
      'RedisRateLimiter found a limit or window in Redis out of range (a limit below 1, a window outside 1 s to 1 h) and ignored it; pacing on what this process knows until the service says again.',
    ]);
  }
  if (r.overruled) {
    out.push([
      'overruled',
      `RedisRateLimiter: the pacing state shared in Redis (${keys[1]}) contradicts what the service answered this process ` +
        `(${heard.limit} ${heard.bucket} requests per ${Math.round(heard.windowMs / 1000)} s); trusting the service. Something other than this SDK may write there.`,
    ]);
  }
  if (r.foreign > 0)
    out.push([
      'foreign',
      `RedisRateLimiter dropped values under ${keys[0]} (or its rate-cfg, rate-probe) that this SDK does not write; something else writes there.`,
    ]);
  if (r.cutProbeLock)
    out.push([
      'probe-lock',
      `RedisRateLimiter cut a probe lock (${keys[2]}) with no expiry or one longer than any probe holds it; something else writes there.`,
    ]);
  return out;
}
