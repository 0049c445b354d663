/**
 * The callback verifier: signature first, then headers, freshness and shape.
 *
 * @module
 */
import type * as NodeCryptoModule from 'node:crypto';
import { ConfigurationError } from '../core/errors/base.js';
import { hasTerminalStatus, toEvent, type WebhookEvent } from './events.js';
import {
  asVerificationError,
  assertHeadersAgree,
  fail,
  readSignedParts,
  type SignedParts,
  type WebhookRequest,
} from './request-parts.js';
import { matchingKeyNode, matchingKeyWeb } from './signature-match.js';
import { deriveSigningKeyNode, deriveSigningKeyWeb, nodeCrypto } from './signing-scheme.js';
import { assertFresh, DEFAULT_TOLERANCE_SECONDS } from './timestamp-freshness.js';
import { parseTimestamp } from './timestamp-parse.js';

type NodeCrypto = typeof NodeCryptoModule;

/** node:crypto and the derived KeyObjects, for the Node path. */
interface NodeState {
  readonly crypto: NodeCrypto;
  readonly keys: readonly NodeCryptoModule.KeyObject[];
}

/** Options of {@link WebhookVerifier}. Give `apiKey` or `apiKeys`. */
export interface WebhookVerifierOptions {
  /** The merchant's api_key; the root of the callback signing key. */
  apiKey?: string | undefined;
  /**
   * Several api keys accepted at once, for rotation: a callback verifies when any of
   * them produced its signature. Put the current key first (it is tried first).
   *
   * @example
   * ```ts
   * new WebhookVerifier({ apiKeys: [process.env.MYR_API_KEY_NEW!, process.env.MYR_API_KEY_OLD!] });
   * ```
   */
  apiKeys?: readonly string[] | undefined;
  /**
   * How far `timestamp` may be from the receiver's clock, in either direction.
   *
   * @default 300 (the spec's 5 minutes)
   */
  toleranceSeconds?: number | undefined;
  /**
   * The receiver's clock, in milliseconds since the epoch.
   *
   * @default Date.now
   */
  clock?: (() => number) | undefined;
  /**
   * Which HMAC implementation to use. `'auto'` takes node:crypto where the runtime has
   * it (Node, Bun, Deno) and Web Crypto elsewhere (Cloudflare Workers, Vercel Edge).
   *
   * @default 'auto'
   */
  crypto?: 'auto' | 'node' | 'web' | undefined;
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * Verifies the service's callbacks and turns them into typed events.
 *
 * The signing key is derived once per api key and kept in the runtime's fastest form
 * (a node:crypto `KeyObject`, or a non-extractable Web Crypto `CryptoKey`). The api
 * keys and signing keys live in private fields: `JSON.stringify`, `util.inspect` and
 * every error the verifier throws are free of them.
 *
 * Order of the checks, so that nothing is decided on the payload before the HMAC matches:
 * 1. read the body as a JSON object and find the signature (body `signature`, else the
 *    `X-Webhook-Signature` header); it must be 64 lowercase hex characters;
 * 2. read the eight signed fields, only to build the signed string (type checks, no `|`);
 * 3. HMAC-SHA256 under each configured key, compared in constant time as bytes
 *    (signature-match.ts);
 * 4. then headers against the body, timestamp freshness (both ways, timestamp-freshness.ts),
 *    and the values of the remaining fields.
 *
 * @example
 * ```ts
 * import { WebhookVerifier, WebhookVerificationError } from 'myr-gateway/webhooks';
 *
 * const verifier = new WebhookVerifier({ apiKey: process.env.MYR_API_KEY! });
 * const event = await verifier.verify({ body: rawBody, headers: req.headers });
 * if (event.transaction_type === 'DEPOSIT' && event.signed.status === 'SUCCESS') { … }
 * ```
 */
export class WebhookVerifier {
  /** The accepted clock skew in seconds, both ways. */
  readonly toleranceSeconds: number;
  readonly #toleranceMs: number;
  readonly #clock: () => number;
  readonly #keyCount: number;
  /** The invalid_signature message (with a hint when a configured key has the signing key's shape). */
  readonly #mismatch: string;
  /** node:crypto and the KeyObjects, when this verifier runs on the Node path. */
  readonly #node: NodeState | null;
  /** api keys kept only until the Web Crypto keys are derived. */
  #pendingApiKeys: readonly string[] | null;
  #webKeys: Promise<CryptoKey[]> | null = null;

  constructor(options: WebhookVerifierOptions) {
    // unknown: a JavaScript caller may pass anything (null, a string); the checks below establish
    // string[], and whatever is no options object has no keys, so is refused by the same check.
    const given: unknown = options?.apiKeys ?? (options?.apiKey === undefined ? undefined : [options.apiKey]);
    if (!Array.isArray(given) || given.length === 0) {
      throw new ConfigurationError('WebhookVerifier needs apiKey or a non-empty apiKeys', 'apiKey');
    }
    if (options.apiKeys !== undefined && options.apiKey !== undefined) {
      throw new ConfigurationError('give either apiKey or apiKeys, not both', 'apiKeys');
    }
    const keys: unknown[] = given;
    // A key read from a secret file often ends in a newline: it would fail every signature.
    if (!keys.every(isKey)) {
      throw new ConfigurationError('an api key is empty, not a string, or has whitespace around it', 'apiKeys');
    }
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance <= 0) {
      throw new ConfigurationError('toleranceSeconds must be a positive number', 'toleranceSeconds');
    }
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new ConfigurationError('clock must be a function returning milliseconds', 'clock');
    }
    const mode = options.crypto ?? 'auto';
    if (mode !== 'auto' && mode !== 'node' && mode !== 'web') {
      throw new ConfigurationError("crypto must be 'auto', 'node' or 'web'", 'crypto');
    }
    this.toleranceSeconds = tolerance;
    this.#toleranceMs = tolerance * 1000;
    this.#clock = options.clock ?? Date.now;
    this.#keyCount = keys.length;
    // Decided once here, not per callback: the sandbox prints the signing key (64 hex) beside the api key.
    this.#mismatch = `the signature does not match any configured api key${keys.some((key) => /^[\da-f]{64}$/i.test(key)) ? '; this looks like a signing key; pass the api key' : ''}`;

    const crypto = mode === 'web' ? null : nodeCrypto();
    if (mode === 'node' && !crypto) {
      throw new ConfigurationError("crypto is 'node', but this runtime has no node:crypto", 'crypto');
    }
    if (crypto) {
      this.#node = {
        crypto,
        keys: keys.map((key) => deriveSigningKeyNode(crypto, key).key),
      };
      this.#pendingApiKeys = null;
    } else {
      this.#node = null;
      this.#pendingApiKeys = [...keys];
    }
  }

  /** Which HMAC implementation this verifier uses. */
  get cryptoPath(): 'node' | 'web' {
    return this.#node ? 'node' : 'web';
  }

  /**
   * Verifies one callback and returns it as a typed event.
   *
   * @throws {@link WebhookVerificationError} for every failure, whatever the input; never anything else.
   *
   * @example
   * ```ts
   * const event = await verifier.verify({ body: req.body, headers: req.headers });
   * ```
   */
  verify(request: WebhookRequest): Promise<WebhookEvent> {
    try {
      return this.#node ? Promise.resolve(this.verifySync(request)) : this.#verifyWeb(readSignedParts(request));
    } catch (error) {
      return Promise.reject(asVerificationError(error));
    }
  }

  /**
   * Synchronous {@link verify}, for the Node path only (node:crypto available and not
   * `crypto: 'web'`). Saves a promise per callback on hot paths.
   *
   * @throws {@link WebhookVerificationError}; reason `internal` when this verifier is on the Web Crypto path.
   */
  verifySync(request: WebhookRequest): WebhookEvent {
    try {
      if (!this.#node) throw fail('internal', 'verifySync needs node:crypto; use verify()');
      const prepared = readSignedParts(request);
      return this.#finish(
        prepared,
        matchingKeyNode(this.#node.crypto, this.#node.keys, prepared.message, prepared.signatureBytes),
      );
    } catch (error) {
      throw asVerificationError(error);
    }
  }

  async #verifyWeb(prepared: SignedParts): Promise<WebhookEvent> {
    let keyIndex: number;
    try {
      keyIndex = await matchingKeyWeb(await this.#webSigningKeys(), prepared.message, prepared.signatureBytes);
    } catch {
      throw fail('internal', 'the HMAC could not be computed with Web Crypto');
    }
    try {
      return this.#finish(prepared, keyIndex);
    } catch (error) {
      throw asVerificationError(error);
    }
  }

  #webSigningKeys(): Promise<CryptoKey[]> {
    if (this.#webKeys) return this.#webKeys;
    const apiKeys = this.#pendingApiKeys ?? [];
    const derived = Promise.all(apiKeys.map(async (apiKey) => (await deriveSigningKeyWeb(apiKey)).key));
    this.#webKeys = derived;
    derived.then(
      () => {
        this.#pendingApiKeys = null;
      },
      () => {
        this.#webKeys = null; // try again on the next callback
      },
    );
    return derived;
  }

  /**
   * Step 3's verdict (`keyIndex`: the key that matched, -1 for none), then step 4 on an
   * authentic payload: headers, freshness, then the values of the fields.
   */
  #finish(parts: SignedParts, keyIndex: number): WebhookEvent {
    if (keyIndex < 0) throw fail('invalid_signature', this.#mismatch);
    assertHeadersAgree(parts);
    const { fields } = parts;

    const time = parseTimestamp(fields.timestamp);
    if (Number.isNaN(time)) throw fail('invalid_timestamp', 'timestamp is not an ISO 8601 date-time');
    const now = this.#clock();
    if (!Number.isFinite(now)) throw fail('internal', 'the clock did not return a number');
    assertFresh(time, now, this.#toleranceMs);

    if (!hasTerminalStatus(fields)) throw fail('malformed', 'status is not a terminal status');
    if (fields.webhook_id.length === 0 || fields.payment_id.length === 0) {
      throw fail('malformed', 'webhook_id and payment_id must not be empty');
    }
    // transaction_type is not signed, so the kind comes from the signed payment_id (deposits are
    // PAY_, assumption A19) and the body's field may only agree with it. A relabelled callback
    // must be refused here, before it can claim an idempotency key or reach the wrong handler.
    const kind = fields.payment_id.startsWith('PAY_') ? 'DEPOSIT' : 'WITHDRAWAL';
    const type = parts.body.transaction_type;
    if (type !== undefined && type !== null && type !== kind) {
      throw fail(
        'malformed',
        'transaction_type contradicts the signed payment_id (PAY_ ids are deposits, others withdrawals)',
      );
    }
    return toEvent(kind, fields, parts.body, parts.signature, keyIndex);
  }

  /** A secret-free view for logs. */
  toJSON(): Record<string, unknown> {
    return {
      name: 'WebhookVerifier',
      keys: this.#keyCount,
      toleranceSeconds: this.toleranceSeconds,
      crypto: this.cryptoPath,
    };
  }

  /** @internal Keeps `util.inspect` to the secret-free view. */
  [INSPECT](): string {
    return `WebhookVerifier ${JSON.stringify(this.toJSON())}`;
  }
}

/** A usable api key: a non-empty string with no whitespace around it. */
function isKey(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.trim() === value;
}
