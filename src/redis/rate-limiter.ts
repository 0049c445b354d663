/**
 * One rate budget per merchant for a whole fleet: a sliding window in Redis.
 *
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type AcquireOptions,
  BucketModel,
  monotonicNow,
  pacingError,
  PUBLISHED_LIMITS,
  type RateBucket,
  type RateLimiter,
  type RateLimitObservation,
  WaitQueue,
} from '../core/pacing/limiter.js';
import { MemoryRateLimiter } from '../core/pacing/memory-limiter.js';
import { adaptClient, type RedisCommands, type RedisStoreOptions, script } from './client.js';

// Takes up to ARGV[3] slots in one step, on Redis's clock (processes' clocks may differ).
// The limit and window learned by any process (KEYS[2]) win over this process's defaults, and
// apply to slots already taken. A slot is scored with the time it stops counting toward the
// window's start: while its request is in flight, the latest time the request can still reach
// the service (now + ARGV[5], the call's time left); once answered, the answer's time (ANSWERED).
// The service counts a request when it arrives, before its answer, so a slot held for the window
// after its answer can never overlap the service's next window, however loaded the sender.
// Returns { slots taken, ms until the next slot frees (0 when all were taken) }.
const ACQUIRE = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cfg = redis.call('HMGET', KEYS[2], 'limit', 'window')
local limit = tonumber(cfg[1]) or tonumber(ARGV[1])
local window = tonumber(cfg[2]) or tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[1])
local want = tonumber(ARGV[3])
local granted = math.max(0, math.min(want, limit - used))
local score = now + tonumber(ARGV[5])
for i = 1, granted do redis.call('ZADD', KEYS[1], score, ARGV[4] .. ':' .. i) end
-- The TTL only collects an idle merchant's set (pruning is by score): longer than any hold.
if granted > 0 then redis.call('PEXPIRE', KEYS[1], 7200000) end
if granted == want then return { granted, 0 } end
local idx = used + granted - limit
local e = redis.call('ZRANGE', KEYS[1], idx, idx, 'WITHSCORES')
if e[2] == nil then return { granted, window } end
return { granted, math.max(1, tonumber(e[2]) + window - now) }`);

// The requests of these slots (ARGV) were answered: each counts from now, on Redis's clock.
// XX: a slot already pruned is not brought back.
const ANSWERED = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now, ARGV[i]) end
return #ARGV`);

/** While Redis fails, this process paces alone for this long before trying Redis again. */
const RETRY_REDIS_MS = 5000;
/** A process waiting for a slot asks Redis again at least this often (others may learn or free). */
const MAX_POLL_MS = 1000;

/** Marks the slot names this limiter hands out (the client hands them back to `observe`). */
const SLOT_PREFIX = 'myr-redis-slot:';
/** The longest a slot is held while its request is in flight, from the time it was taken. */
const MAX_IN_FLIGHT_MS = 3_600_000;

class SharedBucket extends BucketModel {
  readonly queue = new WaitQueue();
  /** Slots answered and not yet reported to Redis. */
  answered: string[] = [];
  draining = false;
  wake: (() => void) | undefined;
  written = '';
  constructor(
    bucket: RateBucket,
    readonly keys: [string, string],
  ) {
    super(bucket);
  }
}

/**
 * A {@link RateLimiter} on Redis: every process of a merchant takes its request slots from one
 * sliding window (a sorted set, one Lua script per acquire on Redis's clock), so a fleet stays
 * inside the service's limits together. The limit and window one process learns from the
 * service's headers are shared with the others. Calls waiting in one process ask Redis in one
 * batch: one round trip serves many of them. A slot counts for the window after its request's
 * answer (the service counted the request before answering it), reported in one more round trip
 * per tick that no call waits for.
 *
 * Redis down or slower than `timeoutMs`: pacing falls back to this process alone (one warning)
 * and tries Redis again every 5 s. That fails open on purpose: the service still enforces its
 * limits, so the worst case is the 429s (retried, spread) that pacing was there to avoid.
 *
 * Keys: `<keyPrefix>rate:{<hash>}` (a sorted set of slots, expiring 2 h after the last one) and
 * `<keyPrefix>rate-cfg:{<hash>}` (the learned limit and window, 1 h). No secret is stored.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { MyrGateway } from 'myr-gateway';
 * import { RedisRateLimiter } from 'myr-gateway/redis';
 *
 * const gateway = new MyrGateway({
 *   baseUrl, merchantId, apiKey,
 *   rateLimiter: new RedisRateLimiter({ client: new Redis(process.env.REDIS_URL!) }),
 * });
 * ```
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  readonly #buckets = new Map<string, SharedBucket>();
  readonly #local = new MemoryRateLimiter();
  #redisAfter = 0;
  #warned = false;

  constructor(options: RedisStoreOptions) {
    const { redis, prefix } = adaptClient(options, 'RedisRateLimiter');
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #bucket(key: string, bucket: RateBucket): SharedBucket {
    const id = createHash('sha256').update(`${key}\n${bucket}`).digest('hex').slice(0, 32);
    let b = this.#buckets.get(id);
    if (!b) this.#buckets.set(id, (b = new SharedBucket(bucket, [`${this.#prefix}rate:{${id}}`, `${this.#prefix}rate-cfg:{${id}}`])));
    return b;
  }

  acquire(key: string, bucket: RateBucket, options: AcquireOptions): Promise<string | void> {
    if (monotonicNow() < this.#redisAfter) return this.#local.acquire(key, bucket, options);
    const b = this.#bucket(key, bucket);
    if (b.unpaced) return Promise.resolve();
    const waiting = b.queue.add(options, monotonicNow(), () => pacingError(bucket, b.limit, b.windowMs, b.windowMs));
    void this.#drain(key, b);
    return waiting;
  }

  observe(key: string, bucket: RateBucket, observation: RateLimitObservation, slot?: string): void {
    this.#local.observe(key, bucket, observation);
    const b = this.#bucket(key, bucket);
    b.learn(observation, monotonicNow(), 0);
    // The window only when this process measured it: the published 60 s it otherwise assumes
    // must not overwrite a window another process measured.
    const learned = b.windowKnown ? `${b.limit}:${b.windowMs}` : `${b.limit}:`;
    if (learned !== b.written && learned !== `${PUBLISHED_LIMITS[bucket]}:`) {
      b.written = learned;
      const [, cfg] = b.keys;
      const fields = ['limit', String(b.limit), ...(b.windowKnown ? ['window', String(b.windowMs)] : [])];
      this.#redis
        .send(['HSET', cfg, ...fields])
        .then(() => this.#redis.send(['PEXPIRE', cfg, '3600000']))
        .catch(() => (b.written = ''));
      b.wake?.(); // waiting calls ask again under the new limit or window
    }
    // The slot Redis granted for this request now counts from its answer. A slot of the
    // in-process fallback has no name: Redis never held it.
    if (slot !== undefined && slot.startsWith(SLOT_PREFIX)) this.#answered(b, slot.slice(SLOT_PREFIX.length));
  }

  /** Reports answered slots to Redis, one round trip for all answers of the same tick. */
  #answered(b: SharedBucket, slot: string): void {
    b.answered.push(slot);
    if (b.answered.length > 1) return;
    queueMicrotask(() => {
      const slots = b.answered;
      b.answered = [];
      // A failure leaves the slots held until their in-flight bound: pacing errs on the side of sending less.
      this.#redis.eval(ANSWERED, [b.keys[0]], slots).catch(() => undefined);
    });
  }

  /** Serves this process's waiting calls, oldest first, one Redis round trip per batch. */
  async #drain(key: string, b: SharedBucket): Promise<void> {
    if (b.draining) return;
    b.draining = true;
    try {
      while (b.queue.length > 0) {
        const now = monotonicNow();
        if (now < this.#redisAfter) {
          for (const w of b.queue.drain()) {
            this.#local.acquire(key, b.bucket, { signal: w.signal, maxWaitMs: w.deadline - now }).then(() => w.grant(), w.fail);
          }
          return;
        }
        if (b.blockedUntil > now) {
          await this.#pause(b, b.blockedUntil - now);
          continue;
        }
        let reply: unknown;
        const id = randomUUID();
        const want = String(Math.min(b.queue.length, b.limit));
        try {
          // ARGV[5]: how long a request granted now may be in flight: the longest time left of a waiting call.
          const inFlightMs = Math.min(MAX_IN_FLIGHT_MS, Math.max(0, Math.ceil(b.queue.latestDeadline() - now)));
          reply = await this.#redis.eval(ACQUIRE, b.keys, [String(b.limit), String(b.windowMs), want, id, String(inFlightMs)]);
        } catch {
          // The script may still run late (a client's offline queue, a stalled Redis): its slots
          // would then be held for the calls' time left with no answer ever reported. Remove them;
          // the same connection runs this after the script.
          const names = Array.from({ length: Number(want) }, (_, i) => `${id}:${i + 1}`);
          this.#redis.send(['ZREM', b.keys[0], ...names]).catch(() => undefined);
          this.#redisFailed();
          continue;
        }
        const [granted, waitMs] = Array.isArray(reply) ? reply.map(Number) : [0, MAX_POLL_MS];
        for (let i = 1; i <= (granted ?? 0); i++) {
          const waiter = b.queue.first();
          // A slot whose caller left meanwhile: nothing will be sent, it counts from now.
          if (waiter) waiter.grant(`${SLOT_PREFIX}${id}:${i}`);
          else this.#answered(b, `${id}:${i}`);
        }
        if (b.queue.length > 0 && (granted ?? 0) === 0) await this.#pause(b, Math.min(MAX_POLL_MS, Math.max(1, waitMs ?? MAX_POLL_MS)));
      }
    } finally {
      b.draining = false;
    }
  }

  /** Sleeps `ms`, or less when an answer taught something new. */
  #pause(b: SharedBucket, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => ((b.wake = undefined), resolve()), ms);
      b.wake = () => {
        clearTimeout(timer);
        b.wake = undefined;
        resolve();
      };
    });
  }

  #redisFailed(): void {
    this.#redisAfter = monotonicNow() + RETRY_REDIS_MS;
    if (this.#warned) return;
    this.#warned = true;
    console.warn(
      'myr-gateway: RedisRateLimiter could not reach Redis in time; pacing in this process only until it answers again ' +
        '(the service still enforces its limits).',
    );
  }

  /** A secret-free view for logs: the class name and key prefix only. */
  toJSON(): Record<string, unknown> {
    return { name: 'RedisRateLimiter', keyPrefix: this.#prefix };
  }

  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `RedisRateLimiter ${JSON.stringify(this.toJSON())}`;
  }
}
