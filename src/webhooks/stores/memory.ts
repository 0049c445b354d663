/**
 * The in-memory idempotency store: the default for a single process.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import { laterRanks } from '../lifecycle.js';
import type { PaymentOrder, WebhookClaim, WebhookStore } from './types.js';

/** Options of {@link MemoryWebhookStore}. */
export interface MemoryWebhookStoreOptions {
  /**
   * Most keys kept at once (at least 2). The oldest half is dropped when the newest
   * half fills up, so memory stays flat however many callbacks arrive. Size it so
   * that `maxEntries / 2` exceeds the callbacks you receive within the period you
   * need protected (at least twice the verifier's tolerance; ideally the
   * completed-record TTL).
   *
   * @default 100_000
   */
  maxEntries?: number | undefined;
  /**
   * The store's clock in milliseconds.
   *
   * @default Date.now
   */
  clock?: (() => number) | undefined;
}

const IN_FLIGHT = 0;
const DONE = 1;

interface Entry {
  state: typeof IN_FLIGHT | typeof DONE;
  token: string;
  expiresAt: number;
  /** A claim with a payment order: the id of the payment's lock it holds. */
  lock?: string | undefined;
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * The high-water mark of a payment, beside the idempotency keys, which are kept as `:<key>`:
 * no key a merchant gives reaches a mark.
 */
function orderKey(order: PaymentOrder): string {
  return `order:${order.paymentId}`;
}

/**
 * The lock of a payment's ordered callbacks, held by the one being handled: a SUCCESS delivered
 * while its REFUNDED runs (or the other way round) is `in_flight` until that one is done.
 */
function lockKey(order: PaymentOrder): string {
  return `lock:${order.paymentId}`;
}

/**
 * A bounded in-memory {@link WebhookStore}.
 *
 * - O(1) claim, complete, release and renew: at most two `Map` lookups and one write.
 * - Bounded: keys live in two generations of at most `maxEntries / 2` each. When the
 *   current one is full it becomes the previous one and the old previous one is
 *   dropped whole, so memory stays flat under millions of ids and a key survives at
 *   least `maxEntries / 2` newer keys. (Deleting from the front of one big `Map`
 *   instead leaves holes that every later eviction has to skip in V8.)
 * - Expiry is checked on every lookup; expired entries go with their generation.
 *
 * Only for one process: two processes with their own memory would each run the
 * handler once. Use a shared store (Redis) behind a load balancer.
 *
 * @example
 * ```ts
 * const store = new MemoryWebhookStore({ maxEntries: 50_000 });
 * const handler = createWebhookHandler({ verifier, store, onEvent });
 * ```
 */
export class MemoryWebhookStore implements WebhookStore {
  /** Most keys held at once. */
  readonly maxEntries: number;
  readonly #clock: () => number;
  readonly #generation: number;
  #current = new Map<string, Entry>();
  #previous = new Map<string, Entry>();
  #seq = 0;

  constructor(options: MemoryWebhookStoreOptions = {}) {
    const max = options.maxEntries ?? 100_000;
    if (!Number.isInteger(max) || max < 2)
      throw new ConfigurationError('maxEntries must be an integer of at least 2', 'maxEntries');
    this.maxEntries = max;
    this.#generation = Math.floor(max / 2);
    this.#clock = options.clock ?? Date.now;
  }

  /** Number of keys currently kept (in flight or done; expired ones not yet dropped included). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async for its promise: each step is synchronous and atomic
  async claim(key: string, ttlMs: number, order?: PaymentOrder): Promise<WebhookClaim> {
    const now = this.#clock();
    const id = `:${key}`;
    const existing = this.#get(id);
    if (existing !== undefined && existing.expiresAt > now) {
      return { acquired: false, state: existing.state === DONE ? 'done' : 'in_flight' };
    }
    if (order && this.#outranked(order, now)) return { acquired: false, state: 'superseded' };
    const lock = order && lockKey(order);
    if (lock !== undefined && (this.#get(lock)?.expiresAt ?? now) > now) return { acquired: false, state: 'in_flight' };
    const token = String(++this.#seq);
    const expiresAt = now + ttlMs;
    this.#set(id, { state: IN_FLIGHT, token, expiresAt, lock });
    if (lock !== undefined) this.#set(lock, { state: IN_FLIGHT, token, expiresAt });
    return { acquired: true, token };
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async for its promise: each step is synchronous and atomic
  async complete(key: string, token: string, ttlMs: number, order?: PaymentOrder): Promise<boolean> {
    const now = this.#clock();
    const id = `:${key}`;
    const existing = this.#get(id);
    const live = existing !== undefined && existing.expiresAt > now;
    const held = live && existing.state === IN_FLIGHT && existing.token === token;
    if (held) this.#unlock(existing, token);
    // Record it when nobody else holds the key, even if this claim had lapsed meanwhile.
    if (!live || held) {
      this.#set(id, { state: DONE, token, expiresAt: now + ttlMs });
      if (order && !this.#outranked(order, now))
        this.#set(orderKey(order), { state: DONE, token: String(order.rank), expiresAt: now + ttlMs });
    }
    return held;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async for its promise: each step is synchronous and atomic
  async release(key: string, token: string): Promise<boolean> {
    const id = `:${key}`;
    const existing = this.#get(id);
    const held =
      existing !== undefined &&
      existing.token === token &&
      existing.state === IN_FLIGHT &&
      existing.expiresAt > this.#clock();
    if (held) {
      this.#unlock(existing, token);
      this.#delete(id);
    }
    return held;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async for its promise: each step is synchronous and atomic
  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    const now = this.#clock();
    const existing = this.#get(`:${key}`);
    if (
      existing === undefined ||
      existing.state !== IN_FLIGHT ||
      existing.token !== token ||
      existing.expiresAt <= now
    ) {
      return false;
    }
    existing.expiresAt = now + ttlMs;
    const lock = existing.lock === undefined ? undefined : this.#get(existing.lock);
    if (lock?.token === token) lock.expiresAt = existing.expiresAt;
    return true;
  }

  /** Empties the store. */
  clear(): void {
    this.#current.clear();
    this.#previous.clear();
  }

  /** Whether the payment's high-water mark is a later status than `order`'s (lifecycle.ts decides which). */
  #outranked(order: PaymentOrder, now: number): boolean {
    const highest = this.#get(orderKey(order));
    return highest !== undefined && highest.expiresAt > now && laterRanks(order.rank).includes(Number(highest.token));
  }

  /** Frees the payment lock that the claim `token` of `entry` holds, if it still holds it. */
  #unlock(entry: Entry, token: string): void {
    if (entry.lock !== undefined && this.#get(entry.lock)?.token === token) this.#delete(entry.lock);
  }

  #delete(key: string): void {
    this.#current.delete(key);
    this.#previous.delete(key);
  }

  #get(key: string): Entry | undefined {
    return this.#current.get(key) ?? this.#previous.get(key);
  }

  #set(key: string, entry: Entry): void {
    if (this.#previous.size > 0) this.#previous.delete(key);
    if (this.#current.size >= this.#generation && !this.#current.has(key)) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, entry);
  }

  /** A secret-free view for logs (no tokens, no keys). */
  toJSON(): Record<string, unknown> {
    return { name: 'MemoryWebhookStore', size: this.size, maxEntries: this.maxEntries };
  }

  /** @internal */
  [INSPECT](): string {
    return `MemoryWebhookStore ${JSON.stringify(this.toJSON())}`;
  }
}
