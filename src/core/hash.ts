/**
 * SHA-256 with Web Crypto (Node, Bun, Deno and Workers alike), for the keys under which clients
 * of one merchant share a token and a pacing budget: the api key is never held in clear as a key.
 *
 * @module
 */
import { ConfigurationError } from './errors/base.js';

/** SHA-256 (hex) of a list of strings, with Web Crypto. */
export async function sha256Hex(parts: string[]): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    throw new ConfigurationError(
      'INVALID_CONFIGURATION: this runtime has no Web Crypto (crypto.subtle), which the token cache needs',
    );
  }
  const digest = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(parts))));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
