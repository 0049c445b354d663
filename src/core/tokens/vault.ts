/**
 * The token manager's side of the {@link TokenStore}: every token is sealed (see `seal.ts`)
 * before a store sees it and opened when read back, and every store operation of a call is
 * bounded by that call's {@link StoreBudget}. A store that fails, hangs, returns garbage or a
 * token that does not open is a miss: the token held in this process serves, with one warning.
 *
 * @module
 */
import { callStoreBudget, describeStoreFailure, StoreBudget } from '../store-budget.js';
import type { WarnSink } from '../observe/log.js';
import type { TokenSeal } from './seal.js';
import type { SharedTokens } from './shared.js';
import { isStoredToken, type StoredToken, type TokenStore } from './store.js';

/** A store operation that failed, timed out or was not tried (the budget was spent). */
export const FAILED = Symbol('store failed');

/** A signal, or a getter that builds one only when needed (the hot path builds none). */
export type SignalSource = AbortSignal | undefined | (() => AbortSignal);

export function signalOf(source: SignalSource): AbortSignal | undefined {
  return typeof source === 'function' ? source() : source;
}

/**
 * The store budget of one call, found when first needed (a synchronous store never needs it).
 * A call's reads, renewal and writes go through the manager separately but under the same
 * signal, so the budget is kept per signal: they all share one, with the call's rate limiter.
 */
export class CallBudgets {
  readonly #ms: number;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** A getter of the budget of the call behind `signal` (a budget of its own without one). */
  of(signal: SignalSource): () => StoreBudget {
    let budget: StoreBudget | undefined;
    return () => {
      if (budget) return budget;
      const call = signalOf(signal);
      return (budget = call ? callStoreBudget(call, this.#ms) : new StoreBudget(this.#ms));
    };
  }
}

/** The budget a store operation runs under, found when first needed. */
export type BudgetSource = () => StoreBudget;

function isThenable<T>(value: Promise<T> | T): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function'; // a guard: only reads the property it checks
}

/** What a store hands back before it is opened: a sealed token and its expiry. */
function isSealedShape(value: unknown): value is StoredToken {
  if (value === null || typeof value !== 'object') return false;
  const { accessToken, expiresAt, issuedAt } = value as Partial<StoredToken>; // a guard: the fields are checked below
  return (
    typeof accessToken === 'string' &&
    Number.isFinite(expiresAt) &&
    (issuedAt === undefined || Number.isFinite(issuedAt))
  );
}

/** One manager's view of its store: sealed on the way in, opened on the way out, bounded per call. */
export class TokenVault {
  readonly #store: TokenStore;
  readonly #key: string;
  readonly #seal: TokenSeal;
  readonly #warn: WarnSink | undefined;
  readonly #now: () => number;

  constructor(store: TokenStore, key: string, seal: TokenSeal, warn: WarnSink | undefined, now: () => number) {
    this.#store = store;
    this.#key = key;
    this.#seal = seal;
    this.#warn = warn;
    this.#now = now;
  }

  /** The store's token (opened), or the in-process one when the store has none, fails or is slow. */
  async read(shared: SharedTokens, signal: SignalSource, budget: BudgetSource): Promise<StoredToken | undefined> {
    return (await this.lookup(shared, signal, budget)).token;
  }

  /**
   * {@link read}, also saying whether the store holds a token the service refused (a store whose
   * delete or write failed): that one is never served, and the caller may delete it.
   */
  async lookup(
    shared: SharedTokens,
    signal: SignalSource,
    budget: BudgetSource,
  ): Promise<{ token: StoredToken | undefined; refusedInStore: boolean }> {
    const got = await this.op(shared, 'get', () => this.#store.get(this.#key), signal, budget);
    if (got === undefined || got === FAILED) return { token: shared.local, refusedInStore: false };
    const token = await this.open(shared, got);
    if (!token) return { token: shared.local, refusedInStore: false };
    if (shared.refused.includes(token.accessToken)) return { token: shared.local, refusedInStore: true };
    shared.hold(token);
    return { token, refusedInStore: false };
  }

  /** Holds a token this process fetched (the shared state's one writer is this vault). */
  keepFetched(shared: SharedTokens, token: StoredToken): void {
    shared.holdFetched(token);
  }

  /** Holds a token the store's refresh handed back. */
  keep(shared: SharedTokens, token: StoredToken): void {
    shared.hold(token);
  }

  /** Notes that the service refused `accessToken`: it is dropped, and never served from the store again. */
  refuse(shared: SharedTokens, accessToken: string): void {
    shared.refuse(accessToken);
  }

  /** Seals `token` and stores it, within what is left of the call's budget. */
  async write(shared: SharedTokens, token: StoredToken, signal: AbortSignal, budget: BudgetSource): Promise<void> {
    if (!budget().usable) return;
    const sealed = await this.seal(shared, token);
    await this.op(shared, 'set', () => this.#store.set(this.#key, sealed), signal, budget);
  }

  /** Deletes the store's token, within what is left of the call's budget. */
  async remove(shared: SharedTokens, signal: SignalSource, budget: BudgetSource): Promise<void> {
    if (budget().usable) await this.op(shared, 'delete', () => this.#store.delete(this.#key), signal, budget);
  }

  /**
   * What the store keeps of `token`: the access token sealed, the same expiry, and `issuedAt`
   * now, so that `expiresAt - issuedAt` is the time it has left as of this write: a shared store
   * keeps it that long from the write, which needs no clock shared with other processes.
   */
  async seal(shared: SharedTokens, token: StoredToken): Promise<StoredToken> {
    const accessToken = await this.#seal.seal(token.accessToken, this.#key);
    const sealed: StoredToken = { accessToken, expiresAt: token.expiresAt, issuedAt: this.#now() };
    shared.rememberOpened(sealed, token);
    return sealed;
  }

  /** The sealed form of `accessToken` as the store holds it, when this process saw it. */
  sealedForm(shared: SharedTokens, accessToken: string): string | undefined {
    return shared.opened?.token.accessToken === accessToken ? shared.opened.stored.accessToken : undefined;
  }

  /** The token in a store's answer, or undefined (warned once unless `quiet`) when it is garbage or does not open. */
  async open(shared: SharedTokens, stored: unknown, quiet = false): Promise<StoredToken | undefined> {
    const last = shared.opened;
    if (last && stored === last.stored) return last.token; // the in-memory store's hot path: no decryption
    if (!isSealedShape(stored)) {
      if (!quiet)
        shared.warn('garbage', 'the token store returned something that is not a token; ignoring it.', this.#warn);
      return undefined;
    }
    const clear =
      last?.stored.accessToken === stored.accessToken
        ? last.token.accessToken
        : await this.#seal.open(stored.accessToken, this.#key);
    const token: StoredToken | undefined =
      clear === undefined
        ? undefined
        : {
            accessToken: clear,
            expiresAt: stored.expiresAt,
            ...(stored.issuedAt === undefined ? {} : { issuedAt: stored.issuedAt }),
          };
    if (!token || !isStoredToken(token)) {
      if (!quiet)
        shared.warn(
          'unsealed',
          'the token store returned a token this client cannot open (sealed with another api key, or altered); ignoring it.',
          this.#warn,
        );
      return undefined;
    }
    shared.rememberOpened(stored, token);
    return token;
  }

  /**
   * Runs a store operation: synchronous results pass straight through (the hot path of the
   * in-memory store); promises are bounded by the call's signal and what is left of its budget.
   */
  async op<T>(
    shared: SharedTokens,
    name: string,
    run: () => Promise<T> | T,
    signal: SignalSource,
    budget: BudgetSource,
  ): Promise<T | typeof FAILED> {
    try {
      const result = run();
      if (!isThenable(result)) return result;
      const left = budget();
      // The call already spent its time on the store (and was warned about): not waited on again.
      // Nobody awaits that answer now, so a late failure must not become an unhandled rejection,
      // which ends a Node process.
      if (!left.usable) {
        Promise.resolve(result).catch(() => undefined);
        return FAILED;
      }
      return await left.spend(Promise.resolve(result), signalOf(signal));
    } catch (error) {
      const caller = signalOf(signal);
      if (caller?.aborted) throw caller.reason;
      shared.warn(
        `store-${name}`,
        `the token store's ${name} ${describeStoreFailure(error)}; using the token held in this process.`,
        this.#warn,
      );
      return FAILED;
    }
  }
}
