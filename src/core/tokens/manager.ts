/**
 * Access tokens: cached, reused, refreshed shortly before they expire, and fetched
 * single-flight. Clients on the same store and key (by default: the same base URL, merchant
 * id and api key in one process) share the cache, the refresh and the local limiter of
 * `POST /auth/token`, so any number of clients and calls on a cold cache cause one request.
 * A failing or slow store never fails or hangs a call: the in-process token takes over. Stores
 * only ever see tokens sealed with a key derived from the api key (`seal.ts`).
 *
 * @module
 */
import { MyrGatewayError } from '../errors/base.js';
import { describeStoreFailure, watched } from '../store-budget.js';
import type { WarnSink } from '../observe/log.js';
import type { TokenSeal } from './seal.js';
import { type SharedTokens, sharedTokens, type TokenAttemptReport } from './shared.js';
import type { StoredToken, TokenStore } from './store.js';
import { type BudgetSource, CallBudgets, type SignalSource, signalOf, TokenVault } from './vault.js';

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
  /** The seal of this merchant's tokens (derived from the api key), computed on first use. */
  seal: () => Promise<TokenSeal>;
  /** Performs `POST /auth/token` under `signal`, calling `beforeAttempt` before each attempt. */
  fetchToken: (signal: AbortSignal, beforeAttempt: TokenAttemptHook) => Promise<StoredToken>;
  now: () => number;
  /** Refresh this long before expiry (at most half the token's lifetime). */
  refreshMarginMs: number;
  /** How long one call may wait on the store in all (get, refresh lock, set, delete) before the in-process token takes over. */
  storeTimeoutMs: number;
  /** How long a store's `refresh` may go without a sign of progress, once it showed one, before this process fetches its own token. */
  storeRefreshTimeoutMs: number;
  /** Where store warnings go (the client's logger); console.warn when absent. */
  warn?: WarnSink | undefined;
}

export class TokenManager {
  readonly #options: TokenManagerOptions;
  readonly #budgets: CallBudgets;
  #shared: SharedTokens | undefined;
  #vault!: TokenVault;
  #key = '';

  constructor(options: TokenManagerOptions) {
    this.#options = options;
    this.#budgets = new CallBudgets(options.storeTimeoutMs);
  }

  /**
   * A valid token: cached if fresh, else one single-flight refresh shared by all callers.
   * `signal` may be a getter, so the hot path (a cached token) never builds one.
   */
  async get(signal?: SignalSource): Promise<string> {
    const shared = this.#shared ?? (await this.#resolve());
    const budget = this.#budgets.of(signal);
    const cached = await this.#vault.read(shared, signal, budget);
    if (cached && this.#fresh(cached, shared)) return cached.accessToken;
    try {
      return (await shared.join((s) => this.#run(shared, s, undefined, budget), signalOf(signal))).accessToken;
    } catch (error) {
      // An early refresh that failed (limit, outage) does not fail a call the current token can still serve.
      if (cached && cached.expiresAt > this.#options.now() && error instanceof MyrGatewayError)
        return cached.accessToken;
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
    const budget = this.#budgets.of(signal);
    this.#vault.refuse(shared, staleToken);
    const { token: cached, refusedInStore } = await this.#vault.lookup(shared, signal, budget);
    if (cached && cached.expiresAt > this.#options.now()) return cached.accessToken;
    // A store with `refresh` replaces the stale token itself, once for the fleet.
    if (refusedInStore && !this.#options.store.refresh) await this.#vault.remove(shared, signal, budget);
    return (await shared.join((s) => this.#run(shared, s, staleToken, budget), signal)).accessToken;
  }

  /** Forget the cached token (after a fresh one was refused too). Never throws for the store. */
  async forget(token: string): Promise<void> {
    const shared = this.#shared ?? (await this.#resolve());
    const budget = this.#budgets.of(undefined);
    this.#vault.refuse(shared, token);
    // Only the store's copy of this very token is deleted, never a replacement another process wrote.
    if ((await this.#vault.lookup(shared, undefined, budget)).refusedInStore)
      await this.#vault.remove(shared, undefined, budget);
  }

  async #resolve(): Promise<SharedTokens> {
    const [key, seal] = await Promise.all([this.#options.key(), this.#options.seal()]);
    this.#key = key;
    this.#vault = new TokenVault(this.#options.store, key, seal, this.#options.warn, this.#options.now);
    return (this.#shared = sharedTokens(this.#options.store, key));
  }

  #fresh(token: StoredToken, shared: SharedTokens): boolean {
    const lifetime = token.issuedAt !== undefined ? token.expiresAt - token.issuedAt : shared.lifetimeMs;
    const margin =
      lifetime === undefined ? this.#options.refreshMarginMs : Math.min(this.#options.refreshMarginMs, lifetime / 2);
    return token.expiresAt - margin > this.#options.now();
  }

  /** The body of one single-flight refresh; `budget` is what the starting call has left for the store. */
  async #run(
    shared: SharedTokens,
    signal: AbortSignal,
    staleToken: string | undefined,
    budget: BudgetSource,
  ): Promise<StoredToken> {
    const store = this.#options.store;
    let fetching: Promise<StoredToken> | undefined;
    let fetchFailure: { error: unknown } | undefined;
    // The service counts the lifetime from when it issued the token, which is before a slow
    // answer arrives: count it from the start of the attempt that got it, never later.
    let askedAt: number | undefined;
    const limiterHook = this.#limiterHook(shared, staleToken !== undefined);
    const beforeAttempt: TokenAttemptHook = () => {
      const report = limiterHook();
      askedAt = this.#options.now();
      return report;
    };
    // At most one token request per flight, whatever the store does with `fetchToken`.
    const fetchLocal = (): Promise<StoredToken> =>
      (fetching ??= this.#options.fetchToken(signal, beforeAttempt).then(
        (answer) => {
          const fetched = countedFrom(answer, askedAt);
          this.#vault.keepFetched(shared, fetched);
          return fetched;
        },
        (error: unknown) => {
          fetchFailure = { error };
          throw error;
        },
      ));
    if (store.refresh && budget().usable) {
      try {
        const token = await this.#refreshThroughStore(shared, signal, staleToken, budget, fetchLocal);
        this.#vault.keep(shared, token);
        return token;
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (fetchFailure) throw fetchFailure.error; // the service's answer, not the store's failure
        shared.warn(
          'store-refresh',
          `the token store's refresh ${describeStoreFailure(error)}; fetching a token in this process.`,
          this.#options.warn,
        );
        return await fetchLocal();
      }
    }
    const token = await fetchLocal();
    await this.#vault.write(shared, token, signal, budget);
    return token;
  }

  /**
   * The store's `refresh`: it has what is left of the call's store budget to show progress
   * (this process's token request starts, or another process is seen holding the lock), then
   * `storeRefreshTimeoutMs` between signs of progress; this process's own request is bounded
   * by its call, not by the store. A waiter thus waits as long as the holder is alive.
   */
  async #refreshThroughStore(
    shared: SharedTokens,
    signal: AbortSignal,
    staleToken: string | undefined,
    budget: BudgetSource,
    fetchLocal: () => Promise<StoredToken>,
  ): Promise<StoredToken> {
    const refresh = this.#options.store.refresh!.bind(this.#options.store);
    const sealedStale = staleToken === undefined ? undefined : this.#vault.sealedForm(shared, staleToken);
    // Once this process stops waiting (an answer, a stall), the store stops polling for it too.
    const done = new AbortController();
    const storeSignal = AbortSignal.any([signal, done.signal]);
    try {
      const answer = await watched(
        (watch) => {
          const options = {
            signal: storeSignal,
            progress: watch.alive,
            ...(sealedStale === undefined ? {} : { staleToken: sealedStale }),
          };
          return Promise.resolve(
            refresh(
              this.#key,
              () => watch.hold(fetchLocal().then((token) => this.#vault.seal(shared, token))),
              options,
            ),
          );
        },
        signal,
        budget().leftMs,
        this.#options.storeRefreshTimeoutMs,
      );
      const token = await this.#vault.open(shared, answer, true); // the refresh warning says it
      // A store that could not tell which token was refused may hand it back: not a replacement.
      if (!token || shared.refused.includes(token.accessToken)) throw new TypeError('not a usable token');
      return token;
    } finally {
      done.abort();
    }
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

/** `token` with its lifetime counted from `askedAt` when that is earlier than its `issuedAt`. */
function countedFrom(token: StoredToken, askedAt: number | undefined): StoredToken {
  if (token.issuedAt === undefined || askedAt === undefined || askedAt >= token.issuedAt) return token;
  return { ...token, issuedAt: askedAt, expiresAt: token.expiresAt - (token.issuedAt - askedAt) };
}
