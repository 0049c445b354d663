/**
 * Which configured api key signed a callback: the HMAC-SHA256 of the signed string under each
 * signing key, compared with the callback's signature in constant time (node:crypto's
 * `timingSafeEqual`, Web Crypto's `subtle.verify`), so how long a refusal takes says nothing
 * about how much of a forged signature was right. The verifier calls it before it reads
 * anything else of the payload.
 *
 * @module
 */
import type * as NodeCryptoModule from 'node:crypto';
import type { NodeCrypto } from '../core/node-crypto.js';
import { encoder } from './signing-scheme.js';

/**
 * The index of the first key whose HMAC of `message` equals `signature`, compared in constant
 * time; -1 when none does. Synchronous, for the Node path.
 *
 * @example
 * ```ts
 * matchingKeyNode(crypto, [deriveSigningKeyNode(crypto, apiKey).key], signedString, signatureBytes); // 0
 * ```
 */
export function matchingKeyNode(
  crypto: NodeCrypto,
  keys: readonly NodeCryptoModule.KeyObject[],
  message: string,
  signature: Uint8Array,
): number {
  for (let i = 0; i < keys.length; i++) {
    const mac = crypto
      .createHmac('sha256', keys[i] as NodeCryptoModule.KeyObject) // i < keys.length
      .update(message, 'utf8')
      .digest();
    // timingSafeEqual throws on a length difference; the signature was read as 32 bytes, as the MAC is.
    if (crypto.timingSafeEqual(mac, signature)) return i;
  }
  return -1;
}

/**
 * {@link matchingKeyNode} with Web Crypto (Workers, Edge, `crypto: 'web'`): `subtle.verify`
 * compares in constant time. Rejects when Web Crypto cannot compute the HMAC.
 *
 * @example
 * ```ts
 * await matchingKeyWeb([(await deriveSigningKeyWeb(apiKey)).key], signedString, signatureBytes); // 0
 * ```
 */
export async function matchingKeyWeb(
  keys: readonly CryptoKey[],
  message: string,
  signature: Uint8Array<ArrayBuffer>,
): Promise<number> {
  const subtle = globalThis.crypto.subtle;
  const data = encoder.encode(message);
  for (let i = 0; i < keys.length; i++) {
    if (await subtle.verify('HMAC', keys[i] as CryptoKey, signature, data)) return i; // i < keys.length
  }
  return -1;
}
