/**
 * Reading a callback's parts before anything is trusted: the body as a JSON object, the
 * headers case-insensitively, the signature as 32 bytes, and the eight signed fields joined
 * into the signed string. Everything here runs on hostile input and fails with a
 * {@link WebhookVerificationError}.
 *
 * @module
 */
import { WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
import { signedStringOf, type SignedCallbackFields } from './signing-scheme.js';

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
  /**
   * Raw body (string, Buffer, Uint8Array, ArrayBuffer) or the already parsed JSON object: a
   * {@link WebhookBody}. Typed `unknown` because whatever a framework hands over is checked here.
   */
  body: unknown;
  /** The request headers. Optional: the body carries `signature` too. */
  headers?: WebhookHeaders | undefined;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

export function fail(reason: WebhookVerificationReason, message: string): WebhookVerificationError {
  return new WebhookVerificationError(reason, message);
}

/** Anything thrown while reading hostile input becomes a WebhookVerificationError. */
export function asVerificationError(error: unknown): WebhookVerificationError {
  if (error instanceof WebhookVerificationError) return error;
  return fail('malformed', 'the callback could not be read');
}

/** The signed fields read from the body, before the signature has been checked. */
export interface SignedParts {
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
 * Steps 1 and 2 of the verifier: everything needed to compute the HMAC, and nothing more.
 * Nothing read here is trusted until the HMAC over `message` matched.
 */
export function readSignedParts(request: WebhookRequest): SignedParts {
  if (request === null || typeof request !== 'object') throw fail('malformed', 'verify() takes { body, headers }');
  const headers = request.headers;
  if (headers !== undefined && headers !== null && typeof headers !== 'object') {
    throw fail('malformed', 'headers must be a Headers object or a record');
  }
  const body = readBody(request.body);

  // The body's signature when it has one (a header, when present, must then equal it), else the header's.
  const fromBody = body.signature !== undefined && body.signature !== null;
  const signature = fromBody ? body.signature : getHeader(headers, 'x-webhook-signature');
  if (signature === undefined) throw fail('missing_signature', 'the callback carries no signature');
  if (typeof signature !== 'string') throw fail('invalid_signature', 'the body signature is not a string');
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
  // -0 and 0, and "" and null for completed_at, sign identically: one form of each is signed and handed out.
  const fields: SignedCallbackFields = {
    webhook_id,
    payment_id,
    reference_id,
    amount: amount === 0 ? 0 : amount,
    currency,
    status,
    timestamp,
    completed_at: completed_at === '' ? null : completed_at,
  };
  const message = signedStringOf(fields);
  if (typeof message !== 'string') {
    throw fail(
      'malformed',
      message[1] === 'separator' ? 'a signed field contains "|"' : 'a signed field is not well-formed Unicode',
    );
  }
  return {
    body,
    headers,
    fields,
    message,
    signature,
    signatureBytes,
    fromBody,
  };
}

function readBody(raw: unknown): Record<string, unknown> {
  const value: unknown =
    typeof raw === 'string'
      ? parseJson(raw)
      : raw instanceof Uint8Array || raw instanceof ArrayBuffer
        ? parseJson(decodeUtf8(raw))
        : raw;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw fail('malformed', 'the body is not a JSON object (pass the raw body, or its parsed object)');
  }
  return value as Record<string, unknown>; // checked just above: a non-null, non-array object
}

function decodeUtf8(bytes: Uint8Array | ArrayBuffer): string {
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

/** One header, case-insensitively; undefined when absent. */
function getHeader(headers: unknown, name: string): string | undefined {
  if (headers === undefined || headers === null) return undefined;
  // Framework headers: a Headers-like object with get(), or a plain record; values are checked.
  const record = headers as Record<string, unknown> & { get?: unknown };
  let value: unknown;
  if (typeof record.get === 'function') {
    value = (record as { get(name: string): unknown }).get(name); // get is a function, checked above
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

/**
 * Step 4a, on an authentic payload: each `X-Webhook-*` / `X-Payment-ID` header, when
 * present, must equal the signed field it repeats (and a header signature the body's).
 */
export function assertHeadersAgree(parts: SignedParts): void {
  const { headers, fields } = parts;
  if (parts.fromBody)
    agree(headers, 'x-webhook-signature', parts.signature, 'X-Webhook-Signature differs from the body signature');
  agree(headers, 'x-webhook-id', fields.webhook_id, 'X-Webhook-ID differs from webhook_id');
  agree(headers, 'x-webhook-timestamp', fields.timestamp, 'X-Webhook-Timestamp differs from timestamp');
  agree(headers, 'x-payment-id', fields.payment_id, 'X-Payment-ID differs from payment_id');
}

/** The header `name`, when present, equals `value`; else header_mismatch with `message`. */
function agree(headers: unknown, name: string, value: string, message: string): void {
  const header = getHeader(headers, name);
  if (header !== undefined && header !== value) throw fail('header_mismatch', message);
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
