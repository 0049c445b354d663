/**
 * The callback signature scheme of the spec, in one place. The verifier, the request parser,
 * `signCallback` and the mock's callback sender all use this module, and its output is pinned by test
 * vectors computed with the openssl CLI (test/fixtures/webhook-vectors.json).
 *
 * - signing key = HKDF-SHA256(ikm = SHA-256(api_key), salt = empty, info = "webhook-signature", 32 bytes)
 * - signed string = webhook_id|payment_id|reference_id|amount|currency|status|timestamp|completed_at
 * - signature = lowercase hex HMAC-SHA256(signing key, signed string)
 *
 * Two implementations: node:crypto (synchronous, reached through
 * `process.getBuiltinModule` so this file has no static Node import) and Web Crypto
 * (Bun, Deno, Cloudflare Workers, Vercel Edge).
 *
 * @module
 */

import { MyrGatewayError } from '../core/errors/base.js';
import { nodeCrypto, type NodeCrypto } from '../core/node-crypto.js';

/** HKDF `info` of the spec's key derivation. */
export const SIGNING_KEY_INFO = 'webhook-signature';

/** The body fields covered by the signature, in signing order. */
export const SIGNED_FIELDS = [
  'webhook_id',
  'payment_id',
  'reference_id',
  'amount',
  'currency',
  'status',
  'timestamp',
  'completed_at',
] as const;

/** The signed subset of a callback body. */
export interface SignedCallbackFields {
  /** UUID of the callback; the same on every retry of one delivery. */
  webhook_id: string;
  /** The payment or withdrawal id. */
  payment_id: string;
  /** The merchant's reference. */
  reference_id: string;
  /** Amount in MYR. */
  amount: number;
  /** `MYR`. */
  currency: string;
  /** Terminal status: SUCCESS, FAILED, EXPIRED, CANCELLED or REFUNDED. */
  status: string;
  /** ISO 8601 time the callback was signed (checked against the tolerance). */
  timestamp: string;
  /** ISO 8601 completion time, or null. */
  completed_at: string | null;
}

/** What makes a signed field unusable: a `|` would shift the field boundaries; a lone surrogate encodes like any other. */
export type SignedStringProblem = 'separator' | 'unicode';

/**
 * Thrown by {@link signCallback} (and the mock's sender) when a callback field would make the
 * signed string ambiguous: a field containing `|`, or one that is not well-formed Unicode. The
 * verifier refuses the same fields, so nothing signed is refused there.
 *
 * @example
 * ```ts
 * try { await signCallback(apiKey, { ...body, reference_id: 'A|B' }); }
 * catch (error) { if (error instanceof SignedStringError) console.error(error.fieldName); }
 * ```
 */
export class SignedStringError extends MyrGatewayError {
  /** `'SignedStringError'`, so logs show which error it is. */
  override name = 'SignedStringError';
  /** The signed field that cannot be used. */
  readonly fieldName: string;
  /** Why it cannot be used. */
  readonly problem: SignedStringProblem;
  constructor(fieldName: string, problem: SignedStringProblem) {
    super(
      `callback field ${fieldName} ${problem === 'separator' ? 'must not contain "|"' : 'must be well-formed Unicode'}`,
      {
        code: 'INVALID_SIGNED_FIELD',
        field: fieldName,
      },
    );
    this.fieldName = fieldName;
    this.problem = problem;
  }
}

/** `String.prototype.isWellFormed`, absent before ES2024 (checked before use). */
function nativeWellFormedOf(): (() => boolean) | undefined {
  return (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;
}

// Read once, at load; marked pure because the client's bundle shares this module's chunk and
// never signs, and esbuild would keep a top-level property read it cannot prove pure.
const nativeWellFormed = /* @__PURE__ */ nativeWellFormedOf();
// In Unicode mode a well-formed pair is one astral code point, so only a lone surrogate is Cs.
// In a class: esbuild's node22 target writes a bare \p{…} as new RegExp(), which it keeps.
const LONE_SURROGATE = /[\p{Cs}]/u;

/**
 * `String.prototype.isWellFormed`, with a regex fallback for runtimes that lack it. Lone
 * surrogates all encode to U+FFFD, so two different fields could share a signature.
 */
function isWellFormed(text: string): boolean {
  return nativeWellFormed ? nativeWellFormed.call(text) : !LONE_SURROGATE.test(text);
}

/** Why `fields` cannot be signed: the first field at fault, in signing order, and its problem. */
function refusal(fields: SignedCallbackFields): [field: string, problem: SignedStringProblem] | undefined {
  for (const name of SIGNED_FIELDS) {
    const part = String(fields[name] ?? '');
    if (part.includes('|')) return [name, 'separator'];
    if (!isWellFormed(part)) return [name, 'unicode'];
  }
  return undefined;
}

/** A field as the signed string writes it: `String()` of its value, '' for null (a string as it is, without a call). */
const part = (value: string | number | null): string => (typeof value === 'string' ? value : String(value ?? ''));

/**
 * @internal The signed string of `fields`, or the first field that would make it ambiguous and
 * why. The verifier refuses with its own error; every signer goes through
 * {@link buildSignedString}, so what one refuses the other refuses.
 */
export function signedStringOf(fields: SignedCallbackFields): string | [field: string, problem: SignedStringProblem] {
  // Every callback passes here: one template (what the service writes), then one count of the
  // separators (a field's own "|" adds one) and one Unicode scan of the whole string (a "|"
  // between fields pairs no surrogates). Only a refusal goes back to find the field at fault.
  const message = `${part(fields.webhook_id)}|${part(fields.payment_id)}|${part(fields.reference_id)}|${part(fields.amount)}|${part(fields.currency)}|${part(fields.status)}|${part(fields.timestamp)}|${part(fields.completed_at)}`;
  let separators = 0;
  for (let at = message.indexOf('|'); at >= 0; at = message.indexOf('|', at + 1)) separators++;
  if (separators === 7 && isWellFormed(message)) return message;
  return refusal(fields) ?? message;
}

/**
 * The exact string the service signs: the spec's fields joined with `|`, `amount` in
 * JavaScript's number-to-string form (100.00 becomes `100`), a null `completed_at` as ''.
 * A field containing `|` is refused, because it could shift the boundaries between fields.
 *
 * @example
 * ```ts
 * buildSignedString({ webhook_id: 'w', payment_id: 'PAY_1', reference_id: 'R1', amount: 100,
 *   currency: 'MYR', status: 'SUCCESS', timestamp: '2026-01-01T00:00:00.000Z', completed_at: null });
 * // 'w|PAY_1|R1|100|MYR|SUCCESS|2026-01-01T00:00:00.000Z|'
 * ```
 */
export function buildSignedString(fields: SignedCallbackFields): string {
  const message = signedStringOf(fields);
  if (typeof message !== 'string') throw new SignedStringError(...message);
  return message;
}

export { nodeCrypto };

/**
 * @internal UTF-8, for the Web Crypto paths (the verifier's too). Pure: the client's bundle
 * shares this module's chunk and never encodes, so it drops the encoder.
 */
export const encoder = /* @__PURE__ */ new TextEncoder();

/** A signing key as a node:crypto `KeyObject`. */
export interface NodeSigningKey {
  /** node:crypto. */
  readonly kind: 'node';
  /** The derived key as a KeyObject. */
  readonly key: ReturnType<NodeCrypto['createSecretKey']>;
}

/** A signing key as a non-extractable Web Crypto HMAC key. */
export interface WebSigningKey {
  /** Web Crypto. */
  readonly kind: 'web';
  /** The derived key as a non-extractable HMAC CryptoKey. */
  readonly key: CryptoKey;
}

/** A derived signing key, in the fastest form the runtime offers. */
export type SigningKey = NodeSigningKey | WebSigningKey;

/**
 * Derives the raw 32-byte signing key from an api_key with Web Crypto.
 * Works on every runtime with `crypto.subtle`.
 */
export async function deriveSigningKeyBytesWeb(apiKey: string): Promise<Uint8Array<ArrayBuffer>> {
  const subtle = globalThis.crypto.subtle;
  const digest = await subtle.digest('SHA-256', encoder.encode(apiKey));
  const ikm = await subtle.importKey('raw', digest, 'HKDF', false, ['deriveBits']);
  const bits = await subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode(SIGNING_KEY_INFO) },
    ikm,
    256,
  );
  return new Uint8Array(bits);
}

/** Derives the signing key with node:crypto, synchronously, as a KeyObject. */
export function deriveSigningKeyNode(crypto: NodeCrypto, apiKey: string): NodeSigningKey {
  const digest = crypto.createHash('sha256').update(apiKey, 'utf8').digest();
  const okm = crypto.hkdfSync('sha256', digest, Buffer.alloc(0), SIGNING_KEY_INFO, 32);
  return { kind: 'node', key: crypto.createSecretKey(Buffer.from(okm)) };
}

/** Derives the signing key with Web Crypto, as a non-extractable HMAC CryptoKey. */
export async function deriveSigningKeyWeb(apiKey: string): Promise<WebSigningKey> {
  const bytes = await deriveSigningKeyBytesWeb(apiKey);
  const key = await globalThis.crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
  return { kind: 'web', key };
}

/**
 * Derives the signing key on the best path this runtime has.
 *
 * @example
 * ```ts
 * const key = await deriveSigningKey(process.env.MYR_API_KEY!);
 * ```
 */
export async function deriveSigningKey(apiKey: string): Promise<SigningKey> {
  const crypto = nodeCrypto();
  return crypto ? deriveSigningKeyNode(crypto, apiKey) : deriveSigningKeyWeb(apiKey);
}

// Pure: a bundle that never signs (the verifier's) drops the table.
const HEX: string[] = /* @__PURE__ */ Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i] as number]; // i < length
  return out;
}

/** HMAC-SHA256 of `message` as raw bytes, on the key's own path. */
async function hmac(key: SigningKey, message: string): Promise<Uint8Array> {
  if (key.kind === 'web')
    return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key.key, encoder.encode(message)));
  // A KeyObject is only ever made where node:crypto exists.
  const crypto = nodeCrypto();
  if (!crypto) throw new Error('a node:crypto signing key was used on a runtime without node:crypto');
  return crypto.createHmac('sha256', key.key).update(message, 'utf8').digest();
}

/**
 * The spec's `signature` for a callback body: lowercase hex HMAC-SHA256 of the signed
 * string under the key derived from `apiKey` (or an already derived key).
 *
 * @example
 * ```ts
 * const signature = await signCallbackFields(apiKey, body);
 * ```
 */
export async function signCallbackFields(
  apiKeyOrKey: string | SigningKey,
  fields: SignedCallbackFields,
): Promise<string> {
  const key = typeof apiKeyOrKey === 'string' ? await deriveSigningKey(apiKeyOrKey) : apiKeyOrKey;
  return toHex(await hmac(key, buildSignedString(fields)));
}
