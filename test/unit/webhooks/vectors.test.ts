/**
 * The signing scheme against vectors computed outside the project with the openssl CLI
 * (test/fixtures/make-webhook-vectors.sh): key derivation, signed string and signature,
 * on the node:crypto path and the Web Crypto path, and the verifier on both.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebhookVerifier, SignedStringError } from '../../../src/webhooks/index.js';
import {
  buildSignedString,
  deriveSigningKey,
  deriveSigningKeyBytesWeb,
  deriveSigningKeyWeb,
  signCallbackFields,
  type SignedCallbackFields,
} from '../../../src/webhooks/signing-scheme.js';
import { parseTimestamp } from '../../../src/webhooks/timestamp-parse.js';
import { hideNodeCrypto } from '../../fixtures/no-node-crypto.js';
import { vectorRawBody, vectors } from '../../fixtures/webhook-vectors-helpers.js';

afterEach(() => vi.restoreAllMocks());

describe('openssl vectors', () => {
  it('has enough vectors to mean something', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(10);
    expect(new Set(vectors.map((v) => v.signature)).size).toBe(vectors.length);
  });

  it('refuses, like the verifier, a field with "|" or a lone surrogate, so nothing it signs is refused later', () => {
    const fields = JSON.parse((vectors[0] as { raw_body: string }).raw_body) as SignedCallbackFields;
    expect(() => buildSignedString({ ...fields, reference_id: 'A|B' })).toThrow(SignedStringError);
    expect(() => buildSignedString({ ...fields, reference_id: 'A\uD800' })).toThrow('well-formed');
  });

  describe.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    const fields = JSON.parse(vector.raw_body) as SignedCallbackFields;

    it('builds the same signed string from the body', () => {
      expect(buildSignedString(fields)).toBe(vector.signed_string);
    });

    it('derives the same signing key on the Web Crypto path', async () => {
      expect(Buffer.from(await deriveSigningKeyBytesWeb(vector.api_key)).toString('hex')).toBe(vector.signing_key_hex);
    });

    it('derives the same signing key on the node:crypto path', async () => {
      const key = await deriveSigningKey(vector.api_key);
      expect(key.kind).toBe('node');
      if (key.kind !== 'node') return;
      expect(key.key.export().toString('hex')).toBe(vector.signing_key_hex);
    });

    it('signs identically on both paths', async () => {
      const node = await signCallbackFields(vector.api_key, fields);
      const web = await signCallbackFields(await deriveSigningKeyWeb(vector.api_key), fields);
      expect(node).toBe(vector.signature);
      expect(web).toBe(vector.signature);
      hideNodeCrypto();
      const fallback = await deriveSigningKey(vector.api_key);
      expect(fallback.kind).toBe('web');
      expect(await signCallbackFields(fallback, fields)).toBe(vector.signature);
      expect(await signCallbackFields(vector.api_key, fields)).toBe(vector.signature);
    });

    it('verifies on both paths with identical events, and rejects a one-bit change on both', async () => {
      const clock = () => parseTimestamp(fields.timestamp) + 1000;
      const node = new WebhookVerifier({ apiKey: vector.api_key, clock, crypto: 'node' });
      const web = new WebhookVerifier({ apiKey: vector.api_key, clock, crypto: 'web' });
      const raw = vectorRawBody(vector);
      const a = await node.verify({ body: raw });
      const b = await web.verify({ body: Buffer.from(raw) });
      expect(a).toEqual(b);
      expect(a.signature).toBe(vector.signature);
      const last = vector.signature.at(-1) as string;
      const flipped = raw.replace(vector.signature, vector.signature.slice(0, -1) + (last === '0' ? '1' : '0'));
      await expect(node.verify({ body: flipped })).rejects.toMatchObject({ reason: 'invalid_signature' });
      await expect(web.verify({ body: flipped })).rejects.toMatchObject({ reason: 'invalid_signature' });
    });
  });
});
