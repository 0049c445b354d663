/**
 * One rate budget per merchant for a whole fleet: a sliding window in Redis.
 *
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import { BucketModel } from '../core/pacing/bucket-model.js';
import {
  type AcquireOptions,
  CLIENT_WARN,
  monotonicNow,
  pacingError,
  type RateBucket,
  type RateLimiter,
  type RateLimitObservation,
} from '../core/pacing/limiter-contract.js';
import { WaitQueue } from '../core/pacing/wait-queue.js';
import { MemoryRateLimiter } from '../core/pacing/memory-limiter.js';
import { probeOutcome } from '../core/pacing/slow-start.js';
import { EDGE_PROBE_SLOT, edgeProbeVerdict } from '../core/pacing/edge-probe.js';
import { consoleWarn, Log, type Logger, type WarnSink } from '../core/observe/log.js';
import { within } from '../core/wait.js';
import { adaptClient, type RedisCommands, type RedisStoreOptions } from './client.js';
import { RedisStoreError, RedisVersionError } from './errors.js';
import {
  ACQUIRE,
  type AcquireReply,
  ANSWERED,
  LEARN,
  MAX_IN_FLIGHT_MS,
  PROBE_HOLD_MS,
  readAcquire,
  sharedStateWarnings,
} from './rate-scripts.js';

/** While Redis fails, this process paces alone for this long before trying Redis again. */
const RETRY_REDIS_MS = 5000;
/** A process waiting for a slot asks Redis again at least this often (others may learn or free). */
const MAX_POLL_MS = 1000;

/** Marks the slot names this limiter hands out (the client hands them back to `observe`). */
const SLOT_PREFIX = 'myr-redis-slot:';
/** A process that keeps paying attention re-sends what it knows this often, so the shared hash (1 h TTL) stays. */
const RELEARN_MS = 600_000;

/** Options of {@link RedisRateLimiter}. */
export interface RedisRateLimiterOptions extends RedisStoreOptions {
  /**
   * Where the limiter's warnings go (Redis unreachable, nonsense found in Redis): `console`, a
   * pino or winston logger, or any object with `debug`, `info`, `warn` and `error`. Without it,
   * the logger of the first client that uses this limiter, else `console.warn`.
   *
   * @example
   * ```ts
   * new RedisRateLimiter({ client: redis, logger: pino() });
   * ```
   */
  logger?: Logger | undefined;
}

class SharedBucket extends BucketModel {
  readonly queue = new WaitQueue();
  /** Slots answered and not yet reported to Redis. */
  answered: string[] = [];
  draining = false;
  wake: (() => void) | undefined;
  /** This process has seen the service's limits (its own answers): it never waits for the fleet's probe. */
  limitsSeen = false;
  /** The fleet's probe slots this process holds, until their answers. */
  readonly probes = new Set<string>();
  /** The fleet's edge probe slot, if this process holds it (edge-probe.ts), until its answer. */
  readonly edgeProbes = new Set<string>();
  /** The limit last sent to Redis, and when (monotonic ms). */
  sharedLimit: number | undefined;
  sharedAt = 0;
  /**
   * The time this process's calls waited without being granted a slot since the last grant
   * (idle time left out), and when the current wait began: the hold-back rule of rate-scripts.ts
   * reads their sum, so calls that each give up sooner still add up.
   */
  heldMs = 0;
  deniedAt: number | undefined;
  /** The last acquire found the shared window full: the fleet's own slots hold it, not the service's rounded reset. */
  windowFull = false;
  /** What the last acquire paced on (for a refusal's message): the limit, window, source and wait. */
  paced: { limit: number; windowMs: number; fromRedis: boolean; freeInMs: number } | undefined;
  constructor(
    bucket: RateBucket,
    /** The slot set, the learned hash, the probe lock. */
    readonly keys: [string, string, string],
  ) {
    super(bucket);
  }
}

/**
 * A {@link RateLimiter} on Redis: every process of a merchant takes its request slots from one
 * sliding window (a sorted set, one Lua script per acquire on Redis's clock), so a fleet stays
 * inside the service's limits together. Calls waiting in one process ask Redis in one batch: one
 * round trip serves many of them. A slot counts for the window after its request's answer (the
 * service counted the request before answering it), reported in one more round trip per tick
 * that no call waits for.
 *
 * Until some process has seen the service's limits, the fleet sends one request (the probe) and
 * holds the rest until its answer (slow start). The limit and window are learned from the
 * service's headers by whichever process sees them and measured on Redis's clock, so a process
 * whose clock is wrong cannot set the window for the others. Values found in Redis out of range
 * (a limit below 1, a window outside 1 s – 1 h) are deleted and ignored, with one warning. The
 * rest is input too: a process never paces below the limit it heard from the service itself
 * (nor on a window more than 2 s longer than its own and the published minute), slots not of the
 * form this limiter writes are dropped, a probe lock with no expiry (or a longer one than any
 * probe holds) is cut, and a process not yet told the limits by the service, held back by the
 * shared state for longer than the published minute, sends one request to hear them (a window
 * full of the fleet's requests in flight is not such a hold: it waits for their answers, for
 * about 10 s of waiting without a slot); each said once through the logger, trusting the
 * service, and a process that overrules the shared limit writes the service's back with its
 * next answer.
 *
 * Redis down or slower than `timeoutMs`, or refusing the scripts: pacing falls back to this
 * process alone (one warning) and tries Redis again every 5 s. That fails open on purpose: the
 * service still enforces its limits, so the worst case is the 429s (retried, spread) that pacing
 * was there to avoid.
 *
 * Keys: `<keyPrefix>rate:{<hash>}` (a sorted set of slots, expiring 2 h after the last one),
 * `<keyPrefix>rate-cfg:{<hash>}` (the learned limit and window, and the state of the fleet's one
 * edge probe, 1 h) and
 * `<keyPrefix>rate-probe:{<hash>}` (the slow-start probe, at most 10 s). No secret is stored.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { MyrGateway } from 'myr-gateway';
 * import { RedisRateLimiter } from 'myr-gateway/redis';
 *
 * const gateway = new MyrGateway({
 *   baseUrl, merchantId, apiKey,
 *   rateLimiter: new RedisRateLimiter({ client: new Redis(process.env.REDIS_URL!), logger }),
 * });
 * ```
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  readonly #buckets = new Map<string, SharedBucket>();
  readonly #local = new MemoryRateLimiter();
  readonly #ownWarn: WarnSink | undefined;
  #clientWarn: WarnSink | undefined;
  readonly #warned = new Set<string>();
  #redisAfter = 0;
  /** Redis's clock minus this process's (ms), from the last acquire's reply. */
  #offset: number | undefined;

  constructor(options: RedisRateLimiterOptions) {
    const { redis, prefix } = adaptClient(options, 'RedisRateLimiter');
    this.#redis = redis;
    this.#prefix = prefix;
    const logger = options.logger;
    if (logger !== undefined) {
      const log = new Log(logger, 'warn');
      this.#ownWarn = (message) => log.write('warn', message);
    }
    // A client hands its warnings here; the first one is kept, and only without a `logger` option.
    // An own property, not a method: a method would put the SDK's private hook in the public types.
    Object.defineProperty(this, CLIENT_WARN, {
      value: (warn: WarnSink) => {
        this.#clientWarn ??= warn;
      },
    });
  }

  #bucket(key: string, bucket: RateBucket): SharedBucket {
    const id = createHash('sha256').update(`${key}\n${bucket}`).digest('hex').slice(0, 32);
    let b = this.#buckets.get(id);
    if (!b) {
      const keys: [string, string, string] = [
        `${this.#prefix}rate:{${id}}`,
        `${this.#prefix}rate-cfg:{${id}}`,
        `${this.#prefix}rate-probe:{${id}}`,
      ];
      this.#buckets.set(id, (b = new SharedBucket(bucket, keys)));
    }
    return b;
  }

  acquire(key: string, bucket: RateBucket, options: AcquireOptions): Promise<string | void> {
    if (monotonicNow() < this.#redisAfter) return this.#local.acquire(key, bucket, options);
    const b = this.#bucket(key, bucket);
    if (b.unpaced) return Promise.resolve();
    // The call's store budget (shared with the token store): spent, this call paces in-process.
    const storeMs = options.storeBudget?.leftMs();
    if (storeMs !== undefined && storeMs <= 0) {
      this.#warnOnce(
        'budget',
        'RedisRateLimiter: a call had spent its store budget (tokenStoreTimeout) on another store; paced in this process only, without waiting on Redis.',
      );
      return this.#local.acquire(key, bucket, options);
    }
    const now = monotonicNow();
    const refusal = () =>
      b.paced
        ? pacingError(
            bucket,
            b.paced.limit,
            b.paced.windowMs,
            b.paced.freeInMs,
            b.paced.fromRedis ? 'redis' : 'service',
          )
        : pacingError(bucket, b.limit, b.windowMs, b.windowMs);
    const waiting = b.queue.add(options, now, refusal, storeMs);
    void this.#drain(key, b);
    return waiting;
  }

  observe(key: string, bucket: RateBucket, observation: RateLimitObservation, slot?: string): void {
    const o = this.#onRedisClock(observation);
    const b = this.#bucket(key, bucket);
    // A slot of the in-process fallback has no name Redis gave it: Redis never held it.
    const name = slot !== undefined && slot.startsWith(SLOT_PREFIX) ? slot.slice(SLOT_PREFIX.length) : undefined;
    const probe = name !== undefined && b.probes.delete(name);
    const edge = name !== undefined && b.edgeProbes.delete(name);
    // A refused edge probe (the fleet's, or the fallback's own) was a test of the window's edge,
    // not a sign the model was wrong: its 429 holds nothing back (edge-probe.ts).
    const refusedEdge = (edge || slot === EDGE_PROBE_SLOT) && edgeProbeVerdict(o) === 'refused';
    if (!edge || !refusedEdge) this.#local.observe(key, bucket, o, name === undefined ? slot : undefined);
    // Its limit is learned all the same: a process whose first answer this was must not go on
    // pacing (and overruling the fleet) on the published limit while it counts the limit as seen.
    if (refusedEdge) b.learnLimit(o);
    else b.learn(o, monotonicNow(), 0, b.windowFull ? b.limit : 0);
    if (probeOutcome(o) === 'limits-seen') b.limitsSeen = true;
    if (probe || edge || this.#teaches(b, o)) {
      b.sharedLimit = o.limit;
      b.sharedAt = monotonicNow();
      const args = [o.limit, o.remaining, o.resetAt, o.elapsedMs, o.status].map((v) =>
        v === undefined || !Number.isFinite(v) ? '' : String(v),
      );
      this.#redis
        .eval(LEARN, [b.keys[1], b.keys[2], b.keys[0]], [...args, probe ? name : '', edge ? name : ''])
        .catch(() => (b.sharedLimit = undefined));
      b.wake?.(); // waiting calls ask again (the same connection runs LEARN first)
    }
    // The slot Redis granted for this request now counts from its answer.
    if (name !== undefined) this.#answered(b, name);
  }

  /** Whether an answer tells the fleet something: a limit it may not know, a window to measure, a 429. */
  #teaches(b: SharedBucket, o: RateLimitObservation): boolean {
    if (o.status === 429) return true;
    if (o.limit === undefined) return o.status !== undefined && !b.limitsSeen;
    if (o.limit !== b.sharedLimit || monotonicNow() - b.sharedAt > RELEARN_MS) return true;
    return o.remaining === o.limit - 1 && o.resetAt !== undefined;
  }

  /**
   * The observation with its reset measured on Redis's clock (as far as this process knows it),
   * not the client's: a process whose clock runs ahead would otherwise measure a short window.
   */
  #onRedisClock(o: RateLimitObservation): RateLimitObservation {
    if (o.resetAt === undefined || this.#offset === undefined) return o;
    const resetInMs = o.resetAt - (Date.now() + this.#offset);
    // The Date moved with it: both were read against the process's clock, and a Date left on it
    // would have the bucket correct the reset for that clock's error a second time.
    const { dateInMs } = o;
    const moved = dateInMs === undefined || o.resetInMs === undefined ? dateInMs : dateInMs + resetInMs - o.resetInMs;
    return { ...o, resetInMs, dateInMs: moved };
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
            this.#local
              .acquire(key, b.bucket, { signal: w.signal, maxWaitMs: w.deadline - now, mayBeRefused: w.mayBeRefused })
              .then(
                (local) => w.grant(local ?? undefined),
                (error: unknown) => w.fail(error),
              );
          }
          return;
        }
        if (b.blockedUntil > now) {
          await this.#pause(b, b.blockedUntil - now);
          continue;
        }
        let reply: unknown;
        const id = randomUUID();
        const want = Math.min(b.queue.length, b.limit);
        // How long a request granted now may be in flight: the longest time left of a waiting call.
        const inFlightMs = Math.min(MAX_IN_FLIGHT_MS, Math.max(0, Math.ceil(b.queue.latestDeadline() - now)));
        // How long this bucket has waited without a slot (the script's hold-back rule).
        const heldMs = Math.ceil(b.heldMs + (b.deniedAt === undefined ? 0 : now - b.deniedAt));
        try {
          const args = [
            String(b.limit),
            String(b.windowMs),
            String(want),
            id,
            String(inFlightMs),
            b.limitsSeen ? '1' : '',
            String(Math.max(1, Math.min(inFlightMs, PROBE_HOLD_MS))),
            String(heldMs),
          ];
          reply = await this.#withinStoreBudgets(key, b, this.#redis.eval(ACQUIRE, b.keys, args));
        } catch (error) {
          // The script may still run late (a client's offline queue, a stalled Redis): its slots
          // would then be held for the calls' time left with no answer ever reported. Remove them;
          // the same connection runs this after the script.
          const names = Array.from({ length: want }, (_, i) => `${id}:${i + 1}`);
          this.#redis.send(['ZREM', b.keys[0], ...names]).catch(() => undefined);
          this.#redisFailed(error);
          continue;
        }
        const r = readAcquire(reply, want, MAX_POLL_MS);
        if (r.granted > 0) [b.heldMs, b.deniedAt] = [0, undefined];
        else b.deniedAt ??= now;
        if (r.redisNow !== undefined) this.#offset = r.redisNow - Date.now();
        if (r.paced) b.paced = r.paced;
        // The hash contradicted what this process heard: its next answer writes the service's limit back.
        if (r.overruled) b.sharedLimit = undefined;
        // An edge probe is a slot past a full window: its answer (Remaining 0) must not hold the bucket to the rounded reset.
        b.windowFull = r.granted < want || r.edgeProbe;
        this.#warnShared(b, r);
        if (r.probe) b.probes.add(`${id}:1`);
        if (r.edgeProbe) b.edgeProbes.add(`${id}:${r.granted}`);
        for (let i = 1; i <= r.granted; i++) {
          // The edge probe (the last slot) may be refused: only a call that can absorb a 429 takes it.
          const waiter = r.edgeProbe && i === r.granted ? b.queue.firstThatMayBeRefused() : b.queue.first();
          // A slot whose caller left meanwhile: nothing will be sent, it counts from now.
          if (waiter) waiter.grant(`${SLOT_PREFIX}${id}:${i}`);
          else {
            // The fleet's probe or edge probe unsent: Redis learns it had no answer, so the fleet does not wait on it.
            if (r.probe || (r.edgeProbe && i === r.granted))
              this.observe(key, b.bucket, { elapsedMs: 0 }, `${SLOT_PREFIX}${id}:${i}`);
            else this.#answered(b, `${id}:${i}`);
          }
        }
        if (b.queue.length > 0 && r.waitMs > 0) await this.#pause(b, r.waitMs);
      }
    } finally {
      b.draining = false;
      // Idle time is no wait: what was waited so far counts, the next denial starts anew.
      if (b.deniedAt !== undefined) [b.heldMs, b.deniedAt] = [b.heldMs + monotonicNow() - b.deniedAt, undefined];
    }
  }

  /**
   * Awaits `reply`, handing each waiting call whose store budget runs out meanwhile to the
   * in-process limiter: a call never waits on Redis past what its budget left. The reply still
   * serves the calls left (a slot granted to nobody counts from now).
   */
  async #withinStoreBudgets(key: string, b: SharedBucket, reply: Promise<unknown>): Promise<unknown> {
    const late = Symbol('late');
    for (;;) {
      const least = b.queue.leastStoreLeft();
      if (!Number.isFinite(least)) return reply;
      const started = monotonicNow();
      const answer = await within<unknown, typeof late>(reply, { ms: Math.max(0, least), onTimeout: () => late });
      const now = monotonicNow();
      for (const w of b.queue.spendStore(answer === late ? Math.max(least, now - started) : now - started)) {
        this.#warnOnce(
          'budget',
          "RedisRateLimiter: Redis did not answer within a call's store budget (tokenStoreTimeout, shared with the token store); paced that call in this process only.",
        );
        this.#local
          .acquire(key, b.bucket, { signal: w.signal, maxWaitMs: w.deadline - now, mayBeRefused: w.mayBeRefused })
          .then(
            (local) => w.grant(local ?? undefined),
            (error: unknown) => w.fail(error),
          );
      }
      if (answer !== late) return answer;
    }
  }

  /**
   * Sleeps `ms`, or less when an answer taught something new: a wait woken by another event, so
   * `wake` settles it from outside (and `done` forgets it, however it ended).
   */
  #pause(b: SharedBucket, ms: number): Promise<void> {
    return within<void, void>((resolve) => (b.wake = () => resolve()), {
      ms,
      onTimeout: () => undefined,
      done: () => (b.wake = undefined),
    });
  }

  /** What the acquire found wrong in Redis, said once per kind: the service is trusted over the shared state. */
  #warnShared(b: SharedBucket, r: AcquireReply): void {
    for (const [topic, message] of sharedStateWarnings(r, b.keys, b)) this.#warnOnce(topic, message);
  }

  #redisFailed(error: unknown): void {
    this.#redisAfter = monotonicNow() + RETRY_REDIS_MS;
    // A server too old for the stores: the client's server check has logged why, once, as an error.
    if (error instanceof RedisVersionError) return;
    if (error instanceof RedisStoreError && error.cause !== 'timeout') {
      this.#warnOnce(
        'script',
        `RedisRateLimiter: Redis refused the pacing script (${error.message}): another type of key under its prefix, or a ` +
          'server that runs no Lua; pacing in this process only, trying Redis again every 5 s (the service still enforces its limits).',
      );
      return;
    }
    this.#warnOnce(
      'unreachable',
      'RedisRateLimiter could not reach Redis in time; pacing in this process only until it answers again ' +
        '(the service still enforces its limits).',
    );
  }

  /** One warning per topic and limiter, through the limiter's logger, else its client's, else the console. */
  #warnOnce(topic: string, message: string): void {
    if (this.#warned.has(topic)) return;
    this.#warned.add(topic);
    (this.#ownWarn ?? this.#clientWarn ?? consoleWarn)(message);
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
