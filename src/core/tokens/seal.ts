/**
 * Sealing access tokens before any {@link TokenStore} sees them: AES-256-GCM under a key derived from the api key with HKDF-SHA-256 (its own info string, so the key
 * serves nothing else), a random 96-bit IV per seal, and the store key as additional data
 * (a sealed token copied under another merchant's key does not open). Whoever reads the
 * store without the api key learns nothing usable.
 *
 * Two implementations with one format (`v1.<iv>.<ciphertext and 16-byte tag>`), so processes on
 * different runtimes share a store: node:crypto where the runtime has it, synchronous, and Web
 * Crypto elsewhere (Workers). On Node, Web Crypto's AES jobs run on the thread pool, and after a
 * failed decryption (a value sealed under another api key, or altered) a later job could abort
 * the whole process (`CipherJob::ToResult … errors->Empty()`, SIGABRT): a value in a shared
 * store must never be able to do that.
 *
 * @module
 */
import { ConfigurationError } from '../errors/base.js';
import { nodeCrypto, type NodeCrypto } from '../node-crypto.js';

const INFO = 'myr-gateway token-store v1';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals and opens tokens of one merchant (one api key). */
export interface TokenSeal {
  /** `v1.<iv>.<ciphertext and tag>` (base64url) of `token`, bound to `storeKey`. */
  seal(token: string, storeKey: string): Promise<string>;
  /** The token sealed in `sealed` under `storeKey`, or undefined when it is malformed, forged or sealed under another key. */
  open(sealed: string, storeKey: string): Promise<string | undefined>;
}

const utf8 = (text: string) => new TextEncoder().encode(text);

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}

/**
 * The seal of the merchant whose api key is `apiKey`. The derived key is not extractable.
 *
 * @example
 * ```ts
 * const seal = await tokenSeal(apiKey);
 * const sealed = await seal.seal(accessToken, storeKey); // what the store keeps
 * const clear = await seal.open(sealed, storeKey);       // undefined if tampered with
 * ```
 */
/** The IV and the ciphertext-with-tag of a sealed value, or undefined when it is not one. */
function parse(sealed: string): { iv: Uint8Array<ArrayBuffer>; data: Uint8Array<ArrayBuffer> } | undefined {
  const [version, ivText, dataText, extra] = sealed.split('.');
  if (version !== VERSION || extra !== undefined || ivText === undefined || dataText === undefined) return undefined;
  const iv = fromBase64Url(ivText);
  const data = fromBase64Url(dataText);
  if (iv?.length !== IV_BYTES || data === undefined || data.length < TAG_BYTES) return undefined;
  return { iv, data };
}

const decodeUtf8 = (bytes: Uint8Array) => new TextDecoder('utf-8', { fatal: true }).decode(bytes);

/** The seal on node:crypto: the same HKDF and AES-256-GCM, synchronous, off the thread pool. */
function nodeSeal(crypto: NodeCrypto, apiKey: string): TokenSeal {
  const key = new Uint8Array(crypto.hkdfSync('sha256', utf8(apiKey), new Uint8Array(0), utf8(INFO), 32));
  return {
    seal(token, storeKey) {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(utf8(storeKey));
      const body = concat([cipher.update(utf8(token)), cipher.final(), cipher.getAuthTag()]);
      return Promise.resolve(`${VERSION}.${toBase64Url(iv)}.${toBase64Url(body)}`);
    },
    open(sealed, storeKey) {
      const parts = parse(sealed);
      if (!parts) return Promise.resolve(undefined);
      const { iv, data } = parts;
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(utf8(storeKey));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        return Promise.resolve(
          decodeUtf8(concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()])),
        );
      } catch {
        return Promise.resolve(undefined); // forged, truncated or sealed under another key or api key
      }
    },
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

export async function tokenSeal(apiKey: string): Promise<TokenSeal> {
  const node = nodeCrypto();
  if (node) return nodeSeal(node, apiKey);
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    throw new ConfigurationError(
      'INVALID_CONFIGURATION: this runtime has no Web Crypto (crypto.subtle), which the token cache needs',
    );
  }
  const material = await subtle.importKey('raw', utf8(apiKey), 'HKDF', false, ['deriveKey']);
  const key = await subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: utf8(INFO) },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
  return {
    async seal(token, storeKey) {
      const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const sealed = await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: utf8(storeKey) }, key, utf8(token));
      return `${VERSION}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
    },
    async open(sealed, storeKey) {
      const parts = parse(sealed);
      if (!parts) return undefined;
      try {
        const clear = await subtle.decrypt(
          { name: 'AES-GCM', iv: parts.iv, additionalData: utf8(storeKey) },
          key,
          parts.data,
        );
        return decodeUtf8(new Uint8Array(clear));
      } catch {
        return undefined; // forged, truncated or sealed under another key or api key
      }
    },
  };
}
