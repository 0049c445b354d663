/**
 * The callback verifier: signature first, then headers, freshness and shape.
 *
 * @module
 */
import type * as NodeCryptoModule from 'node:crypto';
import { ConfigurationError } from '../core/errors.js';
import { WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
import {
  TERMINAL_STATUSES,
  type DepositEvent,
  type SignedEventFields,
  type TerminalStatus,
  type WebhookEvent,
  type WithdrawalEvent,
} from './events.js';
import { deriveSigningKeyNode, deriveSigningKeyWeb, isWellFormed, nodeCrypto, type SignedCallbackFields } from './signature.js';

const TERMINAL_STATUS_SET: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

type NodeCrypto = typeof NodeCryptoModule;

/** node:crypto and the derived KeyObjects, for the Node path. */
interface NodeState {
  readonly crypto: NodeCrypto;
  readonly keys: readonly NodeCryptoModule.KeyObject[];
}

/**
 * The callback body: the raw bytes or text as received, or the object a JSON body
 * parser already made of them. The signature covers fields, not bytes, so both verify.
 */
export type WebhookBody = string | Uint8Array | ArrayBuffer | Readonly<Record<string, unknown>>;

/** One header value as Node and the frameworks present it. */
export type WebhookHeaderValue = string | readonly string[] | number | null | undefined;

/**
 * Request headers: a Web `Headers` object (or anything with a case-insensitive
 * `get(name)`), or a Node-style record. Record keys are matched case-insensitively;
 * array values are accepted when all entries agree.
 */
export type WebhookHeaders =
  | {
      /** A header's value by name, case-insensitively, or null (a Web `Headers`). */
      get(name: string): string | null;
    }
  | Readonly<Record<string, WebhookHeaderValue>>;

/** What {@link WebhookVerifier.verify} takes. */
export interface WebhookRequest {
  /** Raw body (string, Buffer, Uint8Array, ArrayBuffer) or the already parsed JSON object. */
  body: WebhookBody | unknown;
  /** The request headers. Optional: the body carries `signature` too. */
  headers?: WebhookHeaders | undefined;
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
const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

function fail(reason: WebhookVerificationReason, message: string): WebhookVerificationError {
  return new WebhookVerificationError(reason, message);
}

/** The signed fields read from the body, before the signature has been checked. */
interface Prepared {
  readonly body: Record<string, unknown>;
  readonly headers: unknown;
  readonly fields: SignedCallbackFields;
  readonly message: string;
  readonly signature: string;
  /** The signature decoded to its 32 bytes. */
  readonly signatureBytes: Uint8Array<ArrayBuffer>;
  /** The signature came from the body (so a header, when present, must equal it). */
  readonly fromBody: boolean;
}


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
 * 3. HMAC-SHA256 under each configured key, compared in constant time as bytes;
 * 4. then headers against the body, timestamp freshness (both ways), and the values
 *    of the remaining fields.
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
  /** node:crypto and the KeyObjects, when this verifier runs on the Node path. */
  readonly #node: NodeState | null;
  /** api keys kept only until the Web Crypto keys are derived. */
  #pendingApiKeys: readonly string[] | null;
  #webKeys: Promise<CryptoKey[]> | null = null;

  constructor(options: WebhookVerifierOptions) {
    if (options === null || typeof options !== 'object') {
      throw new ConfigurationError('WebhookVerifier needs an options object with apiKey or apiKeys');
    }
    const keys = options.apiKeys ?? (options.apiKey === undefined ? undefined : [options.apiKey]);
    if (options.apiKeys !== undefined && options.apiKey !== undefined) {
      throw new ConfigurationError('give either apiKey or apiKeys, not both', 'apiKeys');
    }
    if (!Array.isArray(keys) || keys.length === 0) {
      throw new ConfigurationError('WebhookVerifier needs apiKey or a non-empty apiKeys', 'apiKey');
    }
    for (const key of keys) {
      if (typeof key !== 'string' || key.length === 0) {
        throw new ConfigurationError('every api key must be a non-empty string', 'apiKeys');
      }
    }
    const tolerance = options.toleranceSeconds ?? 300;
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

    const crypto = mode === 'web' ? null : nodeCrypto();
    if (mode === 'node' && !crypto) {
      throw new ConfigurationError("crypto: 'node' was asked for, but this runtime has no node:crypto", 'crypto');
    }
    if (crypto) {
      this.#node = {
        crypto,
        keys: keys.map((key) => (deriveSigningKeyNode(crypto, key) as { key: NodeCryptoModule.KeyObject }).key),
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
    let prepared: Prepared;
    try {
      prepared = this.#prepare(request);
      if (this.#node) return Promise.resolve(this.#finish(prepared, this.#matchNode(this.#node, prepared)));
    } catch (error) {
      return Promise.reject(asVerificationError(error));
    }
    return this.#verifyWeb(prepared);
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
      const prepared = this.#prepare(request);
      return this.#finish(prepared, this.#matchNode(this.#node, prepared));
    } catch (error) {
      throw asVerificationError(error);
    }
  }

  async #verifyWeb(prepared: Prepared): Promise<WebhookEvent> {
    let keyIndex = -1;
    try {
      const keys = await this.#webSigningKeys();
      const subtle = globalThis.crypto.subtle;
      const signature = prepared.signatureBytes;
      const data = encoder.encode(prepared.message);
      for (let i = 0; i < keys.length; i++) {
        // subtle.verify compares in constant time.
        if (await subtle.verify('HMAC', keys[i] as CryptoKey, signature, data)) {
          keyIndex = i;
          break;
        }
      }
    } catch {
      throw fail('internal', 'the HMAC could not be computed with Web Crypto');
    }
    if (keyIndex < 0) throw fail('invalid_signature', 'the signature does not match any configured api key');
    try {
      return this.#finish(prepared, keyIndex);
    } catch (error) {
      throw asVerificationError(error);
    }
  }

  #webSigningKeys(): Promise<CryptoKey[]> {
    if (this.#webKeys) return this.#webKeys;
    const apiKeys = this.#pendingApiKeys ?? [];
    const derived = Promise.all(
      apiKeys.map(async (apiKey) => {
        const key = await deriveSigningKeyWeb(apiKey);
        return key.key as CryptoKey;
      }),
    );
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

  /** Steps 1 and 2: everything needed to compute the HMAC, and nothing more. */
  #prepare(request: WebhookRequest): Prepared {
    if (request === null || typeof request !== 'object') throw fail('malformed', 'verify() takes { body, headers }');
    const headers = request.headers;
    if (headers !== undefined && headers !== null && typeof headers !== 'object') {
      throw fail('malformed', 'headers must be a Headers object or a record');
    }
    const body = readBody(request.body);

    const bodySignature = body.signature;
    let signature: string;
    let fromBody: boolean;
    if (bodySignature !== undefined && bodySignature !== null) {
      if (typeof bodySignature !== 'string') throw fail('invalid_signature', 'the body signature is not a string');
      signature = bodySignature;
      fromBody = true;
    } else {
      const fromHeader = getHeader(headers, 'x-webhook-signature');
      if (fromHeader === undefined) throw fail('missing_signature', 'the callback carries no signature');
      signature = fromHeader;
      fromBody = false;
    }
    const signatureBytes = decodeSignature(signature);
    if (signatureBytes === null) throw fail('invalid_signature', 'the signature is not 64 lowercase hex characters');

    const webhook_id = body.webhook_id;
    const payment_id = body.payment_id;
    const reference_id = body.reference_id;
    const amount = body.amount;
    const currency = body.currency;
    const status = body.status;
    const timestamp = body.timestamp;
    let completed_at = body.completed_at;
    if (completed_at === undefined) completed_at = null;
    if (
      typeof webhook_id !== 'string' ||
      typeof payment_id !== 'string' ||
      typeof reference_id !== 'string' ||
      typeof currency !== 'string' ||
      typeof status !== 'string' ||
      typeof timestamp !== 'string' ||
      (completed_at !== null && typeof completed_at !== 'string')
    ) {
      throw fail('malformed', 'a signed field is missing or is not a string');
    }
    if (typeof amount !== 'number' || !Number.isFinite(amount)) {
      throw fail('malformed', 'amount is missing or is not a finite number');
    }
    const message = `${webhook_id}|${payment_id}|${reference_id}|${amount}|${currency}|${status}|${timestamp}|${completed_at ?? ''}`;
    // Exactly the seven separators: a "|" inside a field would shift the field boundaries.
    let at = -1;
    for (let n = 0; n < 8; n++) {
      at = message.indexOf('|', at + 1);
      if (at < 0) break;
    }
    if (at >= 0) throw fail('malformed', 'a signed field contains "|"');
    // Lone surrogates would all encode to U+FFFD, so two different fields could share a signature.
    if (!isWellFormed(message)) {
      throw fail('malformed', 'a signed field is not well-formed Unicode');
    }
    return {
      body,
      headers,
      // -0 and 0, and "" and null for completed_at, sign identically: hand out one form of each.
      fields: {
        webhook_id,
        payment_id,
        reference_id,
        amount: amount === 0 ? 0 : amount,
        currency,
        status,
        timestamp,
        completed_at: completed_at === '' ? null : completed_at,
      },
      message,
      signature,
      signatureBytes,
      fromBody,
    };
  }

  /** Step 3 on Node: the index of the key that matches, or invalid_signature. */
  #matchNode(node: NodeState, prepared: Prepared): number {
    const expected = prepared.signatureBytes;
    const { crypto, keys } = node;
    for (let i = 0; i < keys.length; i++) {
      const mac = crypto
        .createHmac('sha256', keys[i] as NodeCryptoModule.KeyObject)
        .update(prepared.message, 'utf8')
        .digest();
      if (crypto.timingSafeEqual(mac, expected)) return i;
    }
    throw fail('invalid_signature', 'the signature does not match any configured api key');
  }

  /** Step 4, on an authentic payload. */
  #finish(prepared: Prepared, keyIndex: number): WebhookEvent {
    const { body, headers, fields } = prepared;

    if (prepared.fromBody) {
      const header = getHeader(headers, 'x-webhook-signature');
      if (header !== undefined && header !== prepared.signature) {
        throw fail('header_mismatch', 'X-Webhook-Signature differs from the body signature');
      }
    }
    const id = getHeader(headers, 'x-webhook-id');
    if (id !== undefined && id !== fields.webhook_id) throw fail('header_mismatch', 'X-Webhook-ID differs from webhook_id');
    const ts = getHeader(headers, 'x-webhook-timestamp');
    if (ts !== undefined && ts !== fields.timestamp) {
      throw fail('header_mismatch', 'X-Webhook-Timestamp differs from timestamp');
    }
    const pay = getHeader(headers, 'x-payment-id');
    if (pay !== undefined && pay !== fields.payment_id) throw fail('header_mismatch', 'X-Payment-ID differs from payment_id');

    const time = parseTimestamp(fields.timestamp);
    if (Number.isNaN(time)) throw fail('invalid_timestamp', 'timestamp is not an ISO 8601 date-time');
    const now = this.#clock();
    if (typeof now !== 'number' || !Number.isFinite(now)) throw fail('internal', 'the clock did not return a number');
    if (now - time > this.#toleranceMs) throw fail('stale', 'timestamp is older than the tolerance');
    if (time - now > this.#toleranceMs) throw fail('future', 'timestamp is further in the future than the tolerance');

    if (!TERMINAL_STATUS_SET.has(fields.status)) throw fail('malformed', 'status is not a terminal status');
    if (fields.webhook_id.length === 0 || fields.payment_id.length === 0) {
      throw fail('malformed', 'webhook_id and payment_id must not be empty');
    }

    const gateway_reference = optionalString(body.gateway_reference);
    const created_at = optionalString(body.created_at);
    // status was checked against the terminal statuses just above.
    const signed = fields as SignedCallbackFields as SignedEventFields;
    // transaction_type is not signed, so the kind comes from the signed payment_id (deposits are
    // PAY_, assumption A19) and the body's field may only agree with it. A relabelled callback
    // must be refused here, before it can claim an idempotency key or reach the wrong handler.
    const kind = fields.payment_id.startsWith('PAY_') ? 'DEPOSIT' : 'WITHDRAWAL';
    const type = body.transaction_type;
    if (type !== undefined && type !== null && type !== kind) {
      throw fail('malformed', 'transaction_type contradicts the signed payment_id (PAY_ ids are deposits, others withdrawals)');
    }
    if (kind === 'DEPOSIT') {
      const event: DepositEvent = {
        transaction_type: 'DEPOSIT',
        signed,
        unsigned: { transaction_type: 'DEPOSIT', gateway_reference, created_at },
        signature: prepared.signature,
        keyIndex,
      };
      return event;
    }
    const event: WithdrawalEvent = {
      transaction_type: 'WITHDRAWAL',
      signed,
      unsigned: {
        transaction_type: 'WITHDRAWAL',
        gateway_reference,
        created_at,
        bank_code: optionalString(body.bank_code),
        account_number: optionalString(body.account_number),
      },
      signature: prepared.signature,
      keyIndex,
    };
    return event;
  }

  /** A secret-free view for logs. */
  toJSON(): Record<string, unknown> {
    return { name: 'WebhookVerifier', keys: this.#keyCount, toleranceSeconds: this.toleranceSeconds, crypto: this.cryptoPath };
  }

  /** @internal Keeps `util.inspect` to the secret-free view. */
  [INSPECT](): string {
    return `WebhookVerifier ${JSON.stringify(this.toJSON())}`;
  }
}

/** Anything thrown while reading hostile input becomes a WebhookVerificationError. */
function asVerificationError(error: unknown): WebhookVerificationError {
  if (error instanceof WebhookVerificationError) return error;
  return fail('malformed', 'the callback could not be read');
}

function readBody(raw: unknown): Record<string, unknown> {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    value = parseJson(raw);
  } else if (raw instanceof Uint8Array) {
    value = parseJson(decodeUtf8(raw));
  } else if (raw instanceof ArrayBuffer) {
    value = parseJson(decodeUtf8(new Uint8Array(raw)));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw fail('malformed', 'the body is not a JSON object (pass the raw body or the parsed JSON object)');
  }
  return value as Record<string, unknown>;
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw fail('malformed', 'the body is not valid UTF-8');
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw fail('malformed', 'the body is not valid JSON');
  }
}


/**
 * An unsigned, display-only field. A number is kept as its string; any other non-string is
 * null. Refusing an authentic callback over the type of a field nobody signed would lose it.
 */
function optionalString(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** One header, case-insensitively; undefined when absent. */
function getHeader(headers: unknown, name: string): string | undefined {
  if (headers === undefined || headers === null) return undefined;
  const record = headers as Record<string, unknown> & { get?: unknown };
  let value: unknown;
  if (typeof record.get === 'function') {
    value = (record as { get(name: string): unknown }).get(name);
  } else {
    value = record[name];
    if (value === undefined) {
      for (const key in record) {
        if (key.length === name.length && key.toLowerCase() === name) {
          value = record[key];
          break;
        }
      }
    }
  }
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    const first: unknown = value[0];
    for (const item of value) {
      if (item !== first) throw fail('header_mismatch', 'a callback header is repeated with different values');
    }
    if (typeof first !== 'string') throw fail('malformed', 'a callback header is not a string');
    return first;
  }
  throw fail('malformed', 'a callback header is not a string');
}

/** Two or four ASCII digits at `at`, or -1. */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = 0; i < count; i++) {
    const digit = text.charCodeAt(at + i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

const CUMULATIVE_DAYS = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * ISO 8601 date-time (`YYYY-MM-DD(T|t| )HH:MM:SS[.fraction][Z|z|±hh:mm|±hhmm|±hh]`) to
 * milliseconds since the epoch; NaN for anything else. A missing zone means UTC: the spec
 * says the timestamp is UTC, and a sender that leaves the `Z` off (Python's
 * `utcnow().isoformat()`) must not lose its callbacks. The timestamp is signed, so leniency
 * in its spelling gives an attacker nothing. `Date.parse` would accept `Feb 30`, `24:00` and
 * free text. Hand-rolled because it runs on every callback: no regex, no Date object.
 */
export function parseTimestamp(text: string): number {
  const length = text.length;
  if (length < 19 || length > 40) return Number.NaN;
  const separator = text.charCodeAt(10);
  if (
    text.charCodeAt(4) !== 45 /* - */ ||
    text.charCodeAt(7) !== 45 ||
    (separator !== 84 /* T */ && separator !== 116 /* t */ && separator !== 32) /* space */ ||
    text.charCodeAt(13) !== 58 /* : */ ||
    text.charCodeAt(16) !== 58
  ) {
    return Number.NaN;
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return Number.NaN;
  }
  const leap = isLeap(year);
  const monthDays = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  if (day > monthDays) return Number.NaN;

  let at = 19;
  let ms = 0;
  if (text.charCodeAt(at) === 46 /* . */) {
    const start = ++at;
    while (at < length && at - start < 9) {
      const digit = text.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) break;
      if (at - start < 3) ms = ms * 10 + digit;
      at++;
    }
    const count = at - start;
    if (count === 0) return Number.NaN;
    if (count === 1) ms *= 100;
    else if (count === 2) ms *= 10;
  }

  let offset = 0;
  const zone = text.charCodeAt(at);
  if (at === length) {
    // No zone: UTC, as the spec defines the timestamp.
  } else if (zone === 90 /* Z */ || zone === 122 /* z */) {
    if (at + 1 !== length) return Number.NaN;
  } else if (zone === 43 /* + */ || zone === 45 /* - */) {
    const rest = length - at; // ±hh:mm (6), ±hhmm (5) or ±hh (3)
    if (rest !== 6 && rest !== 5 && rest !== 3) return Number.NaN;
    if (rest === 6 && text.charCodeAt(at + 3) !== 58) return Number.NaN;
    const offsetHours = digitsAt(text, at + 1, 2);
    const offsetMinutes = rest === 3 ? 0 : digitsAt(text, at + (rest === 6 ? 4 : 3), 2);
    if (offsetHours < 0 || offsetHours > 23 || offsetMinutes < 0 || offsetMinutes > 59) return Number.NaN;
    offset = (offsetHours * 60 + offsetMinutes) * 60_000;
    if (zone === 43) offset = -offset;
  } else {
    return Number.NaN;
  }

  // Days since 1970-01-01 (proleptic Gregorian).
  const y = year - 1;
  const daysBeforeYear = 365 * (year - 1970) + (Math.floor(y / 4) - Math.floor(y / 100) + Math.floor(y / 400)) - 477;
  const days = daysBeforeYear + (CUMULATIVE_DAYS[month - 1] as number) + (leap && month > 2 ? 1 : 0) + day - 1;
  return days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + ms + offset;
}

/** Lowercase hex digit value, or -1 (uppercase is refused: the spec's hex is lowercase). */
function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

/**
 * The 32 bytes of a signature that is exactly 64 lowercase hex characters, else null.
 * One pass, validating and decoding together (cheaper than a regex plus a decoder).
 */
function decodeSignature(hex: string): Uint8Array<ArrayBuffer> | null {
  if (hex.length !== 64) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    const high = nibble(hex.charCodeAt(2 * i));
    const low = nibble(hex.charCodeAt(2 * i + 1));
    if (high < 0 || low < 0) return null;
    out[i] = (high << 4) | low;
  }
  return out;
}

export type { TerminalStatus };
