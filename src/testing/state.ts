/**
 * In-memory state of the mock: merchants, tokens, payments, withdrawals, rate windows
 * and gateway availability. No HTTP here.
 *
 * @module
 */
import { PUBLISHED_LIMITS, PUBLISHED_WINDOW_MS } from '../core/pacing/limiter-contract.js';
import type { GatewayChannel, MerchantStatus, MockMerchant, MockRateLimits } from './types/options.js';
import type { MockPaymentRecord, MockWithdrawalRecord } from './types/records.js';

/** The spec's limits per sliding window: the ones the client paces to, from the one table of them. */
export const DEFAULT_RATE_LIMITS: MockRateLimits = {
  auth: PUBLISHED_LIMITS.token,
  paymentRequest: PUBLISHED_LIMITS.payment,
  withdraw: PUBLISHED_LIMITS.withdraw,
  other: PUBLISHED_LIMITS.other,
};

/** Length of the sliding rate window. */
export const RATE_WINDOW_MS = PUBLISHED_WINDOW_MS;

/** A merchant with its status resolved. */
export interface MerchantState {
  merchantId: string;
  apiKey: string;
  status: MerchantStatus;
  defaultCallbackUrl: string | undefined;
}

/** An issued access token. */
export interface TokenState {
  merchantId: string;
  expiresAt: number;
  revoked: boolean;
}

/** Result of a rate check. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the oldest request in the window leaves it. */
  reset: number;
  /** Seconds until a slot frees (only meaningful when not allowed). */
  retryAfter: number;
}

/** Any stored transaction. */
export type MockRecord = MockPaymentRecord | MockWithdrawalRecord;

/** The part of the state that outlives a sandbox restart. */
export interface StateSnapshot {
  records: MockRecord[];
  tokens: Array<TokenState & { token: string }>;
}

/** Hex of `bytes` random bytes, upper case. */
export function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(buf);
  let out = '';
  for (const b of buf) out += b.toString(16).padStart(2, '0');
  return out.toUpperCase();
}

/** Mutable state of one mock gateway. */
export class MockState {
  readonly merchants = new Map<string, MerchantState>();
  readonly tokens = new Map<string, TokenState>();
  /** Payments and withdrawals by id, in creation order. */
  readonly records = new Map<string, MockRecord>();
  readonly unavailable = new Set<GatewayChannel>();
  private readonly windows = new Map<string, number[]>();

  constructor(private readonly initialMerchants: readonly MockMerchant[]) {
    this.resetMerchants();
  }

  /** Restores the merchants (and their statuses) given at construction. */
  resetMerchants(): void {
    this.merchants.clear();
    for (const m of this.initialMerchants) {
      this.merchants.set(m.merchantId, {
        merchantId: m.merchantId,
        apiKey: m.apiKey,
        status: m.status ?? 'ACTIVE',
        defaultCallbackUrl: m.defaultCallbackUrl,
      });
    }
  }

  /**
   * Clears transactions, rate windows and availability switches. Issued tokens stay (expired
   * ones stay expired): a client that cached one before `mock.reset()` is still authenticated,
   * as it would be by the service, so a reset between tests costs no 401 and no new token.
   */
  clear(): void {
    this.records.clear();
    this.windows.clear();
    this.unavailable.clear();
    this.resetMerchants();
  }

  issueToken(merchantId: string, expiresAt: number): string {
    const token = `mock_at_${randomHex(24).toLowerCase()}`;
    this.tokens.set(token, { merchantId, expiresAt, revoked: false });
    return token;
  }

  expireAllTokens(): void {
    for (const t of this.tokens.values()) t.revoked = true;
  }

  /** Counts a request in the window `key` if a slot is free. */
  rateCheck(key: string, limit: number, now: number, windowMs = RATE_WINDOW_MS): RateDecision {
    const since = now - windowMs;
    let hits = this.windows.get(key);
    if (!hits) {
      hits = [];
      this.windows.set(key, hits);
    }
    while (hits.length > 0 && (hits[0] as number) <= since) hits.shift(); // length > 0
    const allowed = hits.length < limit;
    if (allowed) hits.push(now);
    const oldest = hits[0] ?? now;
    const freesAt = oldest + windowMs;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - hits.length),
      reset: Math.ceil(freesAt / 1000),
      retryAfter: Math.max(1, Math.ceil((freesAt - now) / 1000)),
    };
  }

  /** The transaction with this id owned by `merchantId`, else the one with this reference. */
  lookup(merchantId: string, identifier: string): MockRecord | undefined {
    const byId = this.records.get(identifier);
    if (byId && byId.merchantId === merchantId) return byId;
    return this.findByReference(merchantId, identifier);
  }

  findByReference(merchantId: string | undefined, reference: string): MockRecord | undefined {
    for (const r of this.records.values()) {
      if (r.reference_id === reference && (merchantId === undefined || r.merchantId === merchantId)) return r;
    }
    return undefined;
  }

  /** A deposit still PROCESSING when the clock passes `expires_at` becomes EXPIRED (A8). */
  applyExpiry<T extends MockRecord | undefined>(record: T, now: number): T {
    if (record?.kind === 'DEPOSIT' && record.status === 'PROCESSING' && now >= Date.parse(record.expires_at)) {
      record.status = 'EXPIRED';
    }
    return record;
  }

  /** Payments, withdrawals and tokens as plain data, for the sandbox's `--data` file. */
  snapshot(): StateSnapshot {
    return {
      records: [...this.records.values()].map((r) => ({ ...r })),
      tokens: [...this.tokens].map(([token, t]) => ({ token, ...t })),
    };
  }

  /** Puts back what {@link snapshot} returned (replacing payments, withdrawals and tokens). */
  restore(snapshot: StateSnapshot): void {
    this.records.clear();
    this.tokens.clear();
    for (const record of snapshot.records) this.records.set(record.payment_id, { ...record });
    for (const { token, ...rest } of snapshot.tokens) this.tokens.set(token, rest);
  }

  /** Lookup for the test-side API: any merchant, id first, then reference. */
  find(idOrReference: string): MockRecord | undefined {
    return this.records.get(idOrReference) ?? this.findByReference(undefined, idOrReference);
  }
}
