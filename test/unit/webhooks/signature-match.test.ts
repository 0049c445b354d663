/**
 * src/webhooks/signature-match.ts on its own: which configured key signed a callback, on both
 * crypto paths. Expected signatures are computed here with node:crypto directly, as the spec
 * describes the scheme, never with the code under test.
 */
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { matchingKeyNode, matchingKeyWeb } from '../../../src/webhooks/signature-match.js';
import { deriveSigningKeyNode, deriveSigningKeyWeb, nodeCrypto } from '../../../src/webhooks/signing-scheme.js';

const KEYS = ['sk_test_match_current_0001', 'sk_test_match_previous_0002'];
const MESSAGE = 'wh_1|PAY_1|ORDER1|100|MYR|SUCCESS|2026-01-01T00:00:00.000Z|';

/** The spec's signature of `message` under `apiKey`, as bytes, without the module under test. */
function specSignature(apiKey: string, message: string): Uint8Array<ArrayBuffer> {
  const key = Buffer.from(
    hkdfSync('sha256', createHash('sha256').update(apiKey, 'utf8').digest(), Buffer.alloc(0), 'webhook-signature', 32),
  );
  return new Uint8Array(createHmac('sha256', key).update(message, 'utf8').digest());
}

/** `bytes` with one bit of byte `at` flipped. */
function flipped(bytes: Uint8Array<ArrayBuffer>, at: number): Uint8Array<ArrayBuffer> {
  const copy = new Uint8Array(bytes);
  copy[at] = (copy[at] as number) ^ 1;
  return copy;
}

const crypto = nodeCrypto();
if (!crypto) throw new Error('these tests run on Node');
const nodeKeys = KEYS.map((apiKey) => deriveSigningKeyNode(crypto, apiKey).key);
const paths = [
  [
    'node',
    (message: string, signature: Uint8Array<ArrayBuffer>) =>
      Promise.resolve(matchingKeyNode(crypto, nodeKeys, message, signature)),
  ],
  [
    'web',
    async (message: string, signature: Uint8Array<ArrayBuffer>) =>
      matchingKeyWeb(
        await Promise.all(KEYS.map(async (apiKey) => (await deriveSigningKeyWeb(apiKey)).key)),
        message,
        signature,
      ),
  ],
] as const;

describe.each(paths)('matchingKey on the %s path', (_path, match) => {
  it('answers the index of the key that signed, the current key first', async () => {
    expect(await match(MESSAGE, specSignature(KEYS[0] as string, MESSAGE))).toBe(0);
    expect(await match(MESSAGE, specSignature(KEYS[1] as string, MESSAGE))).toBe(1);
  });

  it.each([
    ['another api key', () => specSignature('sk_test_match_stranger_0003', MESSAGE)],
    ['another signed string', () => specSignature(KEYS[0] as string, MESSAGE.replace('100', '1000'))],
    ['the first byte changed', () => flipped(specSignature(KEYS[0] as string, MESSAGE), 0)],
    ['the last byte changed', () => flipped(specSignature(KEYS[1] as string, MESSAGE), 31)],
  ])('answers -1 for a signature made with %s', async (_case, signature) => {
    expect(await match(MESSAGE, signature())).toBe(-1);
  });
});
