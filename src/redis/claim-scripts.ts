/**
 * The Lua scripts of `RedisWebhookStore`'s exactly-once ledger: the claim of a callback (with
 * its payment's lock), its completion, and a payment's high-water mark (the latest lifecycle
 * status it reached), each one atomic step on Redis.
 *
 * @module
 */
import { script } from './client.js';

/**
 * The longest an in-flight claim lives between two renewals. A claim's TTL travels in its
 * value so that no claimant shortens a live one; anyone who can write to Redis could state a
 * day there, so a stated TTL above this is not trusted, and the store never writes one above
 * it. The handler renews every third of its `inFlightTtlMs`, so any `inFlightTtlMs` below 45
 * minutes keeps its claim (a longer one is refused: its first renewal would come too late) (the defaults are 30 s, and 10 min of renewals at most).
 */
export const MAX_CLAIM_TTL_MS = 900_000;

// Values: `inflight:<ttl>:<token>` while a handler runs (its holder's claim TTL in ms, which its
// renewals keep), `done` (or, with `authenticateWith`, `done:<mac>`) after it finished, always
// with a TTL. Anything else under a webhook key was not written by this store (shared state is
// input): a value of another type or shape, one of ours without a TTL, or a `done` without this
// store's MAC, is replaced by the claim (2), so it can neither suppress nor block fulfilment. A
// live claim of this store (its time left within its own TTL) is never shortened by another
// claimant, whatever that one's TTL: a shorter claim (a job on other times, an instance of a
// rolling upgrade) cutting it would let a retry run the handler a second time. Any other
// in-flight value holding longer than this caller's TTL is cut to it, so it blocks a key for
// no longer than one claim; so is one that states a TTL above MAX_CLAIM_TTL_MS, which this store
// never writes.
//
// A payment's lock (KEYS[2], given an order) holds the claim's own value, so the same rules
// (`holds`, with no `done` accepted) judge it: one payment's ordered callbacks run one at a
// time, and a foreign lock blocks them no longer than one claim TTL. It is looked at only after
// the callback's own record and the payment's mark: a done callback stays 'done', a late one
// 'superseded'. On a Cluster the lock is in another slot, so the store runs this script on it
// alone (KEYS[1], no `done` values) before the callback's; an empty value (ARGV[1]) only reads.
//
// ARGV: 1 the claim's value, 2 its TTL, 3 how many accepted `done` values follow, then those,
// then the high-water values of later statuses (KEYS[3]): a key of an older status that holds no
// live record of this store (free, or a foreign value) answers 'superseded'.
export const CLAIM = script(`
local function listed(v, from, to)
  for i = from, to do if ARGV[i] == v then return true end end
  return false
end
local function text(k)
  if redis.call('TYPE', k).ok == 'string' then return redis.call('GET', k) end
  return false
end
local function holds(k, n)
  local left = redis.call('PTTL', k)
  if left == -2 then return 0 end
  local v = text(k)
  local done = v and listed(v, 4, 3 + n)
  if left <= 0 or not (done or v and string.sub(v, 1, 9) == 'inflight:') then return 2 end
  if done then return 'done' end
  local own = tonumber(string.match(v, '^inflight:(%d+):'))
  if not (own and own <= ${MAX_CLAIM_TTL_MS} and left <= own) and left > tonumber(ARGV[2]) then redis.call('PEXPIRE', k, ARGV[2]) end
  return 'inflight'
end
local n = tonumber(ARGV[3])
local got = holds(KEYS[1], n)
if type(got) == 'number' then
  for k = 3, #KEYS do
    local highest = text(KEYS[k])
    if highest and listed(highest, 4 + n, #ARGV) then return 'superseded' end
  end
end
if ARGV[1] == '' or got == 'done' or got == 'inflight' then return got end
local lock = KEYS[2] and holds(KEYS[2], 0) or 0
if lock == 'inflight' then return lock end
for k = 1, math.min(#KEYS, 2) do redis.call('SET', KEYS[k], ARGV[1], 'PX', ARGV[2]) end
return math.max(got, lock, 1)`);
// Done if this claim still holds the key (1), or nobody does (2: it expired or the store lost
// it meanwhile, so the claim was lost); a key held by anything else is left alone (0). The
// payment's lock (KEYS[2]) is freed if this claim still holds it, whatever became of the key.
// ARGV: 1 the claim's value, 2 the TTL, 3 the done value, 4 this status's high-water value, then
// the high-water values of later statuses, which it does not lower (KEYS[3], in the same step).
export const COMPLETE = script(`
if KEYS[2] and redis.call('TYPE', KEYS[2]).ok == 'string' and redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
local held = 0
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then held = 2
elseif kind == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then held = 1
else return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
if KEYS[3] then
  local highest = redis.call('TYPE', KEYS[3]).ok == 'string' and redis.call('GET', KEYS[3])
  for i = 5, #ARGV do if ARGV[i] == highest then return held end end
  redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[2])
end
return held`);
// On a Redis Cluster the high-water mark is in another slot than the callback's key (whose name
// predates it and carries no hash tag), so there it is read before the claim and raised after
// the completion, each on its own key. The payment's lock closes the race this leaves: it is
// taken before the mark is read and freed only after the mark was raised, so no other status of
// the payment is claimed between a REFUNDED's completion and its mark.
export const RAISE_MARK = script(`
local highest = redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1])
for i = 3, #ARGV do if ARGV[i] == highest then return 0 end end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`);
