/**
 * The options of `RedisWebhookStore` and what they decide before any command: which MAC keys its
 * ledger values carry (`authenticateWith`, `writeWith`), and the `WAIT` after each write
 * (`waitForReplicas`). Each refused with a `ConfigurationError` naming the option.
 *
 * @module
 */
import { createHash, hkdfSync } from 'node:crypto';
import { ConfigurationError } from '../core/errors/base.js';
import { isMilliseconds } from '../core/milliseconds.js';
import type { RedisStoreOptions } from './client.js';

/** Options of `RedisWebhookStore`. */
export interface RedisWebhookStoreOptions extends RedisStoreOptions {
  /**
   * After a claim and after a completion, wait (Redis `WAIT`) until `replicas` replicas
   * acknowledged the write, at most `timeoutMs` (below the store's `timeoutMs`). Fewer in
   * time is reported as `under_replicated` (the handler's `onError`), not refused: the
   * write stands on the primary, and a failover before the replicas catch up can lose it
   * (see docs/fleet.md, "When Redis loses data").
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client, timeoutMs: 1000, waitForReplicas: { replicas: 1, timeoutMs: 200 } });
   * ```
   *
   * @default undefined (no WAIT: one round trip per claim and per completion)
   */
  waitForReplicas?:
    | {
        /** Replicas that must acknowledge each claim and completion (Redis `WAIT numreplicas`). @example 1 */
        readonly replicas: number;
        /** Milliseconds to wait for them before the write is reported as under-replicated (`WAIT timeout`). @example 200 */
        readonly timeoutMs: number;
      }
    | undefined;
  /**
   * Authenticates the ledger's own values: give the api key(s) the handler's verifier has.
   * Every key listed is accepted when reading; one is written (`writeWith`, by default the
   * last listed). The store derives its own key from each (HKDF-SHA256 over SHA-256 of the api
   * key, info `myr-gateway webhook-ledger v1`: never the signing key, and no key reaches Redis)
   * and writes `done:<mac>` and MAC'd per-payment high-water marks, so a `done` or a REFUNDED
   * mark written by anyone else is detected: replaced by the next claim and reported
   * (`foreign_value`) instead of suppressing fulfilment.
   *
   * Switch it on for the whole fleet at once: a process without it writes plain `done`,
   * which a process with it treats as foreign (the callback would run again). Rotating the
   * key takes two phases (docs/fleet.md): list `[newKey, oldKey]` everywhere (still writing
   * under the old key, which every instance reads), then, once every instance lists both,
   * `writeWith: newKey`; drop the old key only `paymentRecordTtlMs` (or `completedTtlMs`, if longer) after that.
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client, authenticateWith: process.env.MYR_API_KEY! });
   * ```
   *
   * @default undefined (values are checked for shape and TTL only; see docs/assumptions.md)
   */
  authenticateWith?: string | readonly string[] | undefined;
  /**
   * The api key, one of `authenticateWith`, whose MAC this store writes. Phase 2 of a key
   * rotation: set it to the new key only once every instance lists the new key, so no instance
   * meets a record it cannot read (it would take it for foreign and run the callback again).
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client, authenticateWith: [newKey, oldKey], writeWith: newKey });
   * ```
   *
   * @default the last key of `authenticateWith` (the one every instance of a rotation shares)
   */
  writeWith?: string | undefined;
  /**
   * How long, at least, a payment's handled callbacks and its high-water mark are kept, in ms:
   * what makes a resend of a handled SUCCESS or REFUNDED a duplicate, and a late SUCCESS after a
   * REFUNDED superseded. A resend from the gateway's dashboard is freshly signed, so past this
   * window the staleness check cannot stop it and the callback runs again. Applies to every
   * claim given its payment (the handler's callbacks, `runOnce` with `payment`); other keys keep
   * their `completedTtlMs`. A handled payment takes about 230 bytes of Redis memory, one in ten
   * refunded (docs/benchmarks.md): a million payments a month keep about 230 MB at the default.
   * A whole number of ms, at least 1.
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client, paymentRecordTtlMs: 90 * 86_400_000 }); // 90 days
   * ```
   *
   * @default 2_592_000_000 (30 days)
   */
  paymentRecordTtlMs?: number | undefined;
}

/** How long a payment's records are kept unless told otherwise: 30 days. */
export const PAYMENT_RECORD_TTL_MS = 30 * 86_400_000;

/**
 * `paymentRecordTtlMs`, checked: a TTL Redis keeps (not a timer, so above Node's 2^31 − 1 ms
 * ceiling), a whole number of ms from 1 up to 2^53 − 1.
 */
export function paymentRecordTtl(options: Pick<RedisWebhookStoreOptions, 'paymentRecordTtlMs'>): number {
  const ms = options.paymentRecordTtlMs ?? PAYMENT_RECORD_TTL_MS;
  if (!Number.isSafeInteger(ms) || ms < 1)
    throw new ConfigurationError('paymentRecordTtlMs must be a whole number of ms, at least 1', 'paymentRecordTtlMs');
  return ms;
}

/** The MAC keys derived from the api keys given, the one written first (none: plain values). */
export function ledgerKeys(options: Pick<RedisWebhookStoreOptions, 'authenticateWith' | 'writeWith'>): Buffer[] {
  const given = options.authenticateWith;
  const writeWith: unknown = options.writeWith;
  if (given === undefined) {
    if (writeWith !== undefined)
      throw new ConfigurationError('writeWith needs authenticateWith, the keys it is one of', 'writeWith');
    return [];
  }
  // unknown: a JavaScript caller may pass anything; the check below establishes string[].
  const apiKeys: unknown = typeof given === 'string' ? [given] : given;
  if (!isApiKeyList(apiKeys)) {
    throw new ConfigurationError('authenticateWith must be an api key or a non-empty list of them', 'authenticateWith');
  }
  // Written: the key every instance of a rotation already reads (the last), unless told.
  const written = writeWith === undefined ? apiKeys.length - 1 : apiKeys.findIndex((apiKey) => apiKey === writeWith);
  if (written < 0) throw new ConfigurationError('writeWith must be one of the authenticateWith keys', 'writeWith');
  const ordered = [apiKeys[written] as string, ...apiKeys.filter((_, index) => index !== written)]; // written is an index of apiKeys
  return ordered.map((apiKey) =>
    Buffer.from(
      hkdfSync(
        'sha256',
        createHash('sha256').update(apiKey).digest(),
        Buffer.alloc(0),
        'myr-gateway webhook-ledger v1',
        32,
      ),
    ),
  );
}

function isApiKeyList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.length > 0 && value.every((key) => typeof key === 'string' && key.length > 0);
}

/** The `WAIT` command asked for by `waitForReplicas` (checked against the store's `timeoutMs`), or none. */
export function replicaWait(
  options: Pick<RedisWebhookStoreOptions, 'waitForReplicas' | 'timeoutMs'>,
): [string, string, string] | undefined {
  const wait = options.waitForReplicas;
  if (wait === undefined) return undefined;
  const storeTimeout = options.timeoutMs ?? 1000;
  if (!Number.isInteger(wait.replicas) || wait.replicas < 1) {
    throw new ConfigurationError('waitForReplicas.replicas must be a whole number of at least 1', 'waitForReplicas');
  }
  if (!isMilliseconds(wait.timeoutMs, 1, storeTimeout - 1)) {
    throw new ConfigurationError(
      'waitForReplicas.timeoutMs must be a whole number of ms below the store timeoutMs',
      'waitForReplicas',
    );
  }
  return ['WAIT', String(wait.replicas), String(wait.timeoutMs)];
}
