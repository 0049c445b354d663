/**
 * What clients of one merchant share inside a process: the default token store, one
 * single-flight refresh and one token-request limiter per (store, key), and the
 * once-per-process warnings. Keys are SHA-256 digests (see `../hash.ts`): the api key is
 * never held in clear as a key.
 *
 * @module
 */
import { RateLimitError } from '../errors/service.js';
import type { StoredToken, TokenStore } from './store.js';
import { consoleWarn, type WarnSink } from '../observe/log.js';
import { sha256Hex } from '../hash.js';
import { within } from '../wait.js';
import { PUBLISHED_LIMITS, PUBLISHED_WINDOW_MS } from '../pacing/limiter-contract.js';

/** Token endpoint limit from the spec: 5 requests in any 60 s (the pacing table's `token` bucket). */
export const TOKEN_REQUESTS_PER_MINUTE = PUBLISHED_LIMITS.token;
const WINDOW_MS = PUBLISHED_WINDOW_MS;

/** What the transport saw of one token request attempt. */
export interface TokenAttemptReport {
  /** The server may have seen it (an answer, a timeout, a drop after connecting). */
  sent: boolean;
  status?: number | undefined;
  /** The `Retry-After` of a 429, in milliseconds. */
  retryAfterMs?: number | undefined;
}

/**
 * The local guard for `POST /auth/token`. It counts only requests the server may have
 * seen (not ones refused here or never connected) and not the ones the server refused with
 * 429 (the service does not count those); after a 429 it follows the server's Retry-After.
 */
export class TokenLimiter {
  readonly #seen: number[] = [];
  #notBefore = 0;

  /**
   * Throws a RateLimitError when a token request now would break the limit.
   * `renewal`: replacing a token the service refused; only the server's Retry-After holds it back.
   * `serverWaited`: this flight has just waited out the server's Retry-After.
   */
  check(now: number, renewal: boolean, serverWaited: boolean): void {
    if (!serverWaited && now < this.#notBefore) {
      const seconds = Math.ceil((this.#notBefore - now) / 1000);
      throw new RateLimitError(
        `RATE_LIMITED: the service asked (Retry-After) for no token request before ${seconds} s from now; not sending one.`,
        { code: 'RATE_LIMITED', retryable: true, retryAfter: seconds },
      );
    }
    while (this.#seen.length > 0 && (this.#seen[0] as number) <= now - WINDOW_MS) this.#seen.shift();
    if (renewal || this.#seen.length < TOKEN_REQUESTS_PER_MINUTE) return;
    const seconds = Math.ceil(((this.#seen[0] as number) + WINDOW_MS - now) / 1000);
    throw new RateLimitError(
      `RATE_LIMITED: ${TOKEN_REQUESTS_PER_MINUTE} token requests for this merchant in the last minute, the limit of POST /auth/token; ` +
        `not sending another. Check the credentials; retry in ${seconds} s.`,
      { code: 'RATE_LIMITED', retryable: true, retryAfter: seconds },
    );
  }

  /** Records an attempt; returns whether the server asked to wait (a 429 with Retry-After). */
  record(now: number, report: TokenAttemptReport): boolean {
    if (report.status === 429) {
      if (report.retryAfterMs === undefined) return false;
      this.#notBefore = Math.max(this.#notBefore, now + report.retryAfterMs);
      return true;
    }
    if (report.sent) this.#seen.push(now);
    return false;
  }
}

interface Flight {
  readonly controller: AbortController;
  readonly promise: Promise<StoredToken>;
  waiters: number;
}

/**
 * The state every client on one store and key in this process shares. Its token state has one
 * writer, the {@link TokenVault} (vault.ts): the manager reads it and asks the vault to change it.
 */
export class SharedTokens {
  readonly limiter = new TokenLimiter();
  #local: StoredToken | undefined;
  #lifetimeMs: number | undefined;
  readonly #refused: string[] = [];
  #opened: { stored: StoredToken; token: StoredToken } | undefined;
  #flight: Flight | undefined;

  /** The last token this process fetched or read: used when the store fails. */
  get local(): StoredToken | undefined {
    return this.#local;
  }

  /** Lifetime of the last token this process fetched, for the refresh margin. */
  get lifetimeMs(): number | undefined {
    return this.#lifetimeMs;
  }

  /** The last tokens the service refused (TOKEN_EXPIRED/UNAUTHORIZED): never taken from the store again. */
  get refused(): readonly string[] {
    return this.#refused;
  }

  /** The last token sealed for or opened from the store, in both forms (opening it again costs nothing). */
  get opened(): { readonly stored: StoredToken; readonly token: StoredToken } | undefined {
    return this.#opened;
  }

  /** Holds `token` as the process's own (read from the store, or replacing a refused one). */
  hold(token: StoredToken): void {
    this.#local = token;
  }

  /** Holds a token this process fetched, and its lifetime for the refresh margin. */
  holdFetched(token: StoredToken): void {
    this.#lifetimeMs = token.issuedAt === undefined ? undefined : token.expiresAt - token.issuedAt;
    this.#local = token;
  }

  /** Remembers the last token sealed for or opened from the store, in both forms. */
  rememberOpened(stored: StoredToken, token: StoredToken): void {
    this.#opened = { stored, token };
  }
  readonly #warned = new Set<string>();

  /**
   * Joins the refresh in flight or starts one. The flight belongs to no single caller: it is
   * aborted only when every caller waiting on it has left, so nothing keeps running (or keeps
   * the process alive) for nobody.
   */
  join(start: (signal: AbortSignal) => Promise<StoredToken>, signal: AbortSignal | undefined): Promise<StoredToken> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    let flight = this.#flight;
    if (!flight) {
      const controller = new AbortController();
      const created: Flight = {
        controller,
        waiters: 0,
        promise: start(controller.signal).finally(() => {
          if (this.#flight === created) this.#flight = undefined;
        }),
      };
      created.promise.catch(() => undefined); // every waiter may have left; nobody else observes it
      this.#flight = flight = created;
    }
    const joined = flight;
    joined.waiters += 1;
    // The caller leaves on its abort; the last one to leave stops the flight.
    return within(joined.promise, {
      signal,
      done: (end) => {
        if (end !== 'aborted') return;
        joined.waiters -= 1;
        if (joined.waiters === 0) {
          if (this.#flight === joined) this.#flight = undefined;
          joined.controller.abort(signal?.reason);
        }
      },
    });
  }

  /** Notes that the service refused `accessToken`, and drops it from the process. */
  refuse(accessToken: string): void {
    if (this.#local?.accessToken === accessToken) this.#local = undefined;
    if (this.#refused.includes(accessToken)) return;
    this.#refused.push(accessToken);
    if (this.#refused.length > 4) this.#refused.shift();
  }

  /** One warning per kind for this merchant and store, to the client's logger (console.warn by default); never carries a secret. */
  warn(kind: string, message: string, log: WarnSink = consoleWarn): void {
    if (this.#warned.has(kind)) return;
    this.#warned.add(kind);
    log(message);
  }
}

const registry = new WeakMap<TokenStore, Map<string, SharedTokens>>();
/** The shared state of `key` on `store` in this process. */
export function sharedTokens(store: TokenStore, key: string): SharedTokens {
  let byKey = registry.get(store);
  if (!byKey) registry.set(store, (byKey = new Map<string, SharedTokens>()));
  let shared = byKey.get(key);
  if (!shared) byKey.set(key, (shared = new SharedTokens()));
  return shared;
}

/** `myr-gateway:token:<sha256 hex>` of the base URL, merchant id and api key. */
export async function tokenKey(baseUrl: string, merchantId: string, apiKey: string): Promise<string> {
  return `myr-gateway:token:${await sha256Hex(['myr-gateway token v1', baseUrl, merchantId, apiKey])}`;
}
