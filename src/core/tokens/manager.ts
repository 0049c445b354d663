/**
 * Access tokens: cached, reused, refreshed shortly before they expire, and fetched
 * single-flight. Clients on the same store and key (by default: the same base URL, merchant
 * id and api key in one process) share the cache, the refresh and the local limiter of
 * `POST /auth/token`, so any number of clients and calls on a cold cache cause one request.
 * A failing or slow store never fails or hangs a call: the in-process token takes over.
 *
 * @module
 */
import { MyrGatewayError } from '../errors/base.js';
import { bounded, describeStoreFailure } from '../abortable.js';
import type { WarnSink } from '../observe/log.js';
import { type SharedTokens, sharedTokens, type TokenAttemptReport } from './shared.js';
import { isStoredToken, type StoredToken, type TokenStore } from './store.js';

export { TOKEN_REQUESTS_PER_MINUTE } from './shared.js';

/** A {@link TokenStore} in a Map in this process; clients given no store share one. */
export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, StoredToken>();
  /** The token stored under `key`, or undefined. */
  get(key: string): StoredToken | undefined {
    return this.#tokens.get(key);
  }
  /** Stores `token` under `key`. */
  set(key: string, token: StoredToken): void {
    this.#tokens.set(key, token);
  }
  /** Forgets the token under `key`. */
  delete(key: string): void {
    this.#tokens.delete(key);
  }
  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MemoryTokenStore { size: ${this.#tokens.size} }`;
  }
  /** A secret-free view for logs (no tokens, no keys). */
  toJSON(): Record<string, unknown> {
    return { size: this.#tokens.size };
  }
}

let defaultStore: MemoryTokenStore | undefined;

/** The process-wide store of clients given none. */
export function defaultTokenStore(): MemoryTokenStore {
  return (defaultStore ??= new MemoryTokenStore());
}

/** Called before each token request attempt; returns the callback for what the attempt met. */
export type TokenAttemptHook = () => (report: TokenAttemptReport) => void;

export interface TokenManagerOptions {
  store: TokenStore;
  /** The (hashed) cache key, computed on first use. */
  key: () => Promise<string>;
  /** Performs `POST /auth/token` under `signal`, calling `beforeAttempt` before each attempt. */
  fetchToken: (signal: AbortSignal, beforeAttempt: TokenAttemptHook) => Promise<StoredToken>;
  now: () => number;
  /** Refresh this long before expiry (at most half the token's lifetime). */
  refreshMarginMs: number;
  /** How long one store get/set/delete may take before the in-process token takes over. */
  storeTimeoutMs: number;
  /** How long a store's `refresh` may take before this process fetches its own token. */
  storeRefreshTimeoutMs: number;
  /** Where store warnings go (the client's logger); console.warn when absent. */
  warn?: WarnSink | undefined;
}

type SignalSource = AbortSignal | undefined | (() => AbortSignal);

export class TokenManager {
  readonly #options: TokenManagerOptions;
  #shared: SharedTokens | undefined;
  #key = '';

  constructor(options: TokenManagerOptions) {
    this.#options = options;
  }

  /**
   * A valid token: cached if fresh, else one single-flight refresh shared by all callers.
   * `signal` may be a getter, so the hot path (a cached token) never builds one.
   */
  async get(signal?: SignalSource): Promise<string> {
    const shared = this.#shared ?? (await this.#resolve());
    const cached = await this.#read(shared, signal);
    if (cached && this.#fresh(cached, shared)) return cached.accessToken;
    try {
      return (await shared.join((s) => this.#run(shared, s, undefined), signalOf(signal))).accessToken;
    } catch (error) {
      // An early refresh that failed (limit, outage) does not fail a call the current token can still serve.
      if (cached && cached.expiresAt > this.#options.now() && error instanceof MyrGatewayError) return cached.accessToken;
      throw error;
    }
  }

  /**
   * Drops `staleToken` after the service refused it (TOKEN_EXPIRED/UNAUTHORIZED), unless
   * another caller already replaced it, then returns a fresh token (single-flight). Only the
   * server's own Retry-After holds a renewal back, never the local count.
   */
  async renew(staleToken: string, signal?: AbortSignal): Promise<string> {
    const shared = this.#shared ?? (await this.#resolve());
    if (shared.local?.accessToken === staleToken) shared.local = undefined;
    const cached = await this.#read(shared, signal);
    if (cached && cached.accessToken !== staleToken && cached.expiresAt > this.#options.now()) return cached.accessToken;
    // A store with `refresh` replaces the stale token itself, once for the fleet.
    if (cached?.accessToken === staleToken && !this.#options.store.refresh) await this.#storeOp(shared, 'delete', () => this.#options.store.delete(this.#key), signal);
    return (await shared.join((s) => this.#run(shared, s, staleToken), signal)).accessToken;
  }

  /** Forget the cached token (after a fresh one was refused too). Never throws for the store. */
  async forget(token: string): Promise<void> {
    const shared = this.#shared ?? (await this.#resolve());
    const cached = await this.#read(shared, undefined);
    // After the read: it copies the store's token into the process, which may be this one.
    if (shared.local?.accessToken === token) shared.local = undefined;
    if (cached?.accessToken === token) await this.#storeOp(shared, 'delete', () => this.#options.store.delete(this.#key), undefined);
  }

  async #resolve(): Promise<SharedTokens> {
    this.#key = await this.#options.key();
    return (this.#shared = sharedTokens(this.#options.store, this.#key));
  }

  #fresh(token: StoredToken, shared: SharedTokens): boolean {
    const lifetime = token.issuedAt !== undefined ? token.expiresAt - token.issuedAt : shared.lifetimeMs;
    const margin = lifetime === undefined ? this.#options.refreshMarginMs : Math.min(this.#options.refreshMarginMs, lifetime / 2);
    return token.expiresAt - margin > this.#options.now();
  }

  /** The store's token, or the in-process one when the store has none, fails or is slow. */
  async #read(shared: SharedTokens, signal: SignalSource): Promise<StoredToken | undefined> {
    const got = await this.#storeOp(shared, 'get', () => this.#options.store.get(this.#key), signal);
    if (got === undefined || got === FAILED) return shared.local;
    if (!isStoredToken(got)) {
      shared.warn('garbage', 'the token store returned something that is not a token; ignoring it.', this.#options.warn);
      return shared.local;
    }
    shared.local = got;
    return got;
  }

  /**
   * Runs a store operation: synchronous results pass straight through (the hot path of the
   * in-memory store); promises are bounded by the call's signal and the store timeout.
   */
  async #storeOp<T>(shared: SharedTokens, name: string, op: () => Promise<T> | T, signal: SignalSource): Promise<T | typeof FAILED> {
    try {
      const result = op();
      if (!isThenable(result)) return result;
      return await bounded(Promise.resolve(result), signalOf(signal), this.#options.storeTimeoutMs);
    } catch (error) {
      const caller = signalOf(signal);
      if (caller?.aborted) throw caller.reason;
      shared.warn(`store-${name}`, `the token store's ${name} ${describeStoreFailure(error)}; using the token held in this process.`, this.#options.warn);
      return FAILED;
    }
  }

  /** The body of one single-flight refresh. */
  async #run(shared: SharedTokens, signal: AbortSignal, staleToken: string | undefined): Promise<StoredToken> {
    const store = this.#options.store;
    let fetched: StoredToken | undefined;
    let fetchFailure: { error: unknown } | undefined;
    const fetchLocal = async (): Promise<StoredToken> => {
      try {
        fetched = await this.#options.fetchToken(signal, this.#limiterHook(shared, staleToken !== undefined));
      } catch (error) {
        fetchFailure = { error };
        throw error;
      }
      shared.lifetimeMs = fetched.issuedAt === undefined ? undefined : fetched.expiresAt - fetched.issuedAt;
      shared.local = fetched;
      return fetched;
    };
    if (store.refresh) {
      try {
        const options = staleToken === undefined ? { signal } : { signal, staleToken };
        const token = await bounded(Promise.resolve(store.refresh(this.#key, fetchLocal, options)), signal, this.#options.storeRefreshTimeoutMs);
        if (!isStoredToken(token)) throw new TypeError('not a token');
        shared.local = token;
        return token;
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (fetchFailure) throw fetchFailure.error; // the service's answer, not the store's failure
        shared.warn('store-refresh', `the token store's refresh ${describeStoreFailure(error)}; fetching a token in this process.`, this.#options.warn);
        return fetched ?? (await fetchLocal());
      }
    }
    const token = await fetchLocal();
    await this.#storeOp(shared, 'set', () => store.set(this.#key, token), signal);
    return token;
  }

  #limiterHook(shared: SharedTokens, renewal: boolean): TokenAttemptHook {
    let serverWaited = false;
    return () => {
      shared.limiter.check(this.#options.now(), renewal, serverWaited);
      return (report) => {
        serverWaited = shared.limiter.record(this.#options.now(), report);
      };
    };
  }
}

const FAILED = Symbol('store failed');

function isThenable<T>(value: Promise<T> | T): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

function signalOf(source: SignalSource): AbortSignal | undefined {
  return typeof source === 'function' ? source() : source;
}
