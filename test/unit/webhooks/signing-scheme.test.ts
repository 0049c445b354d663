/**
 * src/webhooks/signing-scheme.ts on its own: the one builder of the signed string (the spec's field
 * order, amount and null rules, and the fields it refuses so that no two callbacks share a
 * string), the key derivation and the HMAC on both crypto paths. Expected signatures are
 * computed here with node:crypto directly, as the spec describes the scheme, never with the
 * code under test alone.
 */
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MyrGatewayError } from '../../../src/core/errors/base.js';
import {
  SIGNED_FIELDS,
  SignedStringError,
  buildSignedString,
  deriveSigningKey,
  deriveSigningKeyBytesWeb,
  deriveSigningKeyNode,
  deriveSigningKeyWeb,
  nodeCrypto,
  signCallbackFields,
  type SignedCallbackFields,
} from '../../../src/webhooks/signing-scheme.js';
import { hideNodeCrypto } from '../../fixtures/no-node-crypto.js';
import { SIGNED_CALLBACK_FIELDS as FIELDS } from '../../fixtures/webhook-vectors-helpers.js';

afterEach(() => vi.restoreAllMocks());

const API_KEY = 'sk_test_signature_unit_0001';

/** The spec's signing key, step by step with node:crypto: HKDF-SHA256(SHA-256(api_key), empty salt, "webhook-signature", 32). */
function specKey(apiKey: string): Buffer {
  const digest = createHash('sha256').update(apiKey, 'utf8').digest();
  return Buffer.from(hkdfSync('sha256', digest, Buffer.alloc(0), 'webhook-signature', 32));
}

/** The spec's signature of a signed string, computed without the module under test. */
function specSignature(apiKey: string, signedString: string): string {
  return createHmac('sha256', specKey(apiKey)).update(signedString, 'utf8').digest('hex');
}

/** The SignedStringError `run` throws (fails the test when it throws something else or nothing). */
function refusal(run: () => unknown): SignedStringError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SignedStringError);
    return error as SignedStringError;
  }
  throw new Error('expected a SignedStringError');
}

describe('buildSignedString', () => {
  it('joins the eight signed fields with "|" in the order the spec lists them', () => {
    expect(buildSignedString(FIELDS)).toBe(
      '6f1c2a9e-3b1d-4c8e-9a51-000000000001|PAY_8F3K2M9Q|ORDER1001|120.5|MYR|SUCCESS|2026-03-01T10:00:00.000Z|2026-03-01T09:59:58.000Z',
    );
    expect(SIGNED_FIELDS).toEqual([
      'webhook_id',
      'payment_id',
      'reference_id',
      'amount',
      'currency',
      'status',
      'timestamp',
      'completed_at',
    ]);
  });

  it('writes a null completed_at as an empty last field', () => {
    expect(buildSignedString({ ...FIELDS, completed_at: null })).toBe(
      '6f1c2a9e-3b1d-4c8e-9a51-000000000001|PAY_8F3K2M9Q|ORDER1001|120.5|MYR|SUCCESS|2026-03-01T10:00:00.000Z|',
    );
    expect(buildSignedString({ ...FIELDS, completed_at: '' })).toBe(
      buildSignedString({ ...FIELDS, completed_at: null }),
    );
  });

  // The spec: "amount is its plain number-to-string form (100.00 becomes 100)".
  it.each([
    [100.0, '100'],
    [120.5, '120.5'],
    [0.1 + 0.2, '0.30000000000000004'],
    [50_000, '50000'],
    [-0, '0'],
    [1e21, '1e+21'],
    [5e-7, '5e-7'],
  ])('writes amount %s as %s', (amount, text) => {
    expect(buildSignedString({ ...FIELDS, amount }).split('|')[3]).toBe(text);
  });

  it.each(SIGNED_FIELDS.filter((name) => name !== 'amount'))('refuses a "|" in %s, naming the field', (name) => {
    const error = refusal(() => buildSignedString({ ...FIELDS, [name]: 'A|B' }));
    expect(error.fieldName).toBe(name);
    expect(error.field).toBe(name);
    expect(error.problem).toBe('separator');
    expect(error.code).toBe('INVALID_SIGNED_FIELD');
    expect(error.message).toContain(name);
  });

  it('refuses the "|" that would otherwise let two different callbacks share one signed string', () => {
    // Moving the boundary between reference_id and amount is what the refusal prevents.
    const shifted = { ...FIELDS, payment_id: 'PAY_1|ORDER1001', reference_id: '' };
    expect(refusal(() => buildSignedString(shifted)).fieldName).toBe('payment_id');
  });

  it.each([
    ['a lone high surrogate', 'ORDER\uD800'],
    ['a lone low surrogate', '\uDC00ORDER'],
    ['a reversed pair', '\uDC00\uD800'],
    ['a high surrogate before a plain character', '\uD83DA'],
  ])('refuses %s (it would encode to U+FFFD like any other)', (_name, text) => {
    const error = refusal(() => buildSignedString({ ...FIELDS, reference_id: text }));
    expect(error.fieldName).toBe('reference_id');
    expect(error.problem).toBe('unicode');
    expect(error.message).toContain('well-formed Unicode');
  });

  it('accepts well-formed non-ASCII text, surrogate pairs included', () => {
    const text = 'Kedai Kopi \u{1F375} caf\u00E9 \u4E2D\u6587';
    expect(buildSignedString({ ...FIELDS, reference_id: text }).split('|')[2]).toBe(text);
  });

  it('reports the first field at fault, in signing order', () => {
    const error = refusal(() => buildSignedString({ ...FIELDS, currency: 'M|R', webhook_id: 'w\uD800' }));
    expect(error.fieldName).toBe('webhook_id');
    expect(error.problem).toBe('unicode');
  });

  it('is a MyrGatewayError whose message and JSON never quote the refused value', () => {
    const secretish = 'ORDER|sk_live_do_not_log';
    const error = refusal(() => buildSignedString({ ...FIELDS, reference_id: secretish }));
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.name).toBe('SignedStringError');
    expect(error.retryable).toBe(false);
    expect(error.message).not.toContain('sk_live');
    expect(JSON.stringify(error)).not.toContain('sk_live');
    expect(inspect(error)).not.toContain('sk_live');
  });

  it('refuses lone surrogates the same way where String.prototype.isWellFormed is missing (pre-ES2024 runtimes)', async () => {
    const descriptor = Object.getOwnPropertyDescriptor(String.prototype, 'isWellFormed');
    expect(descriptor).toBeDefined();
    delete (String.prototype as { isWellFormed?: unknown }).isWellFormed;
    try {
      vi.resetModules();
      const fallback = await import('../../../src/webhooks/signing-scheme.js');
      expect(fallback.SignedStringError).not.toBe(SignedStringError); // a fresh evaluation, which saw no isWellFormed
      for (const text of ['ORDER\uD800', '\uDC00ORDER', '\uDC00\uD800', '\uD83DA', 'x\uDBFF']) {
        let problem: unknown;
        try {
          fallback.buildSignedString({ ...FIELDS, reference_id: text });
        } catch (error) {
          problem = (error as { problem?: unknown }).problem;
        }
        expect(problem, JSON.stringify(text)).toBe('unicode');
      }
      for (const text of ['\u{1F375}', '\uD800\uDC00', 'caf\u00E9', '']) {
        expect(fallback.buildSignedString({ ...FIELDS, reference_id: text }).split('|')[2]).toBe(text);
      }
    } finally {
      Object.defineProperty(String.prototype, 'isWellFormed', descriptor as PropertyDescriptor);
      vi.resetModules();
    }
  });
});

describe('signing key derivation', () => {
  it.each(['sk_test_signature_unit_0001', 'k', 'sk_live_\u00E9\u{1F511}', 'x'.repeat(300)])(
    'derives the spec key for api key %j on both paths',
    async (apiKey) => {
      const expected = specKey(apiKey).toString('hex');
      expect(Buffer.from(await deriveSigningKeyBytesWeb(apiKey)).toString('hex')).toBe(expected);
      const crypto = nodeCrypto();
      if (!crypto) throw new Error('node:crypto is expected under Node');
      expect(deriveSigningKeyNode(crypto, apiKey).key.export().toString('hex')).toBe(expected);
    },
  );

  it('keeps the Web Crypto key non-extractable, usable only to sign and verify', async () => {
    const key = await deriveSigningKeyWeb(API_KEY);
    expect(key.kind).toBe('web');
    expect(key.key.extractable).toBe(false);
    expect([...key.key.usages].sort()).toEqual(['sign', 'verify']);
    await expect(globalThis.crypto.subtle.exportKey('raw', key.key)).rejects.toThrow();
  });

  it('takes node:crypto where the runtime has it, and Web Crypto where it does not', async () => {
    expect((await deriveSigningKey(API_KEY)).kind).toBe('node');
    hideNodeCrypto();
    expect(nodeCrypto()).toBeNull();
    expect((await deriveSigningKey(API_KEY)).kind).toBe('web');
  });
});

describe('signCallbackFields', () => {
  const expected = specSignature(API_KEY, buildSignedString(FIELDS));

  it('answers the spec signature: lowercase hex HMAC-SHA256 of the signed string', async () => {
    const hand = specSignature(
      API_KEY,
      '6f1c2a9e-3b1d-4c8e-9a51-000000000001|PAY_8F3K2M9Q|ORDER1001|120.5|MYR|SUCCESS|2026-03-01T10:00:00.000Z|2026-03-01T09:59:58.000Z',
    );
    const signature = await signCallbackFields(API_KEY, FIELDS);
    expect(signature).toBe(hand);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
  });

  it('signs identically from an api key, a node:crypto key and a Web Crypto key', async () => {
    const crypto = nodeCrypto();
    if (!crypto) throw new Error('node:crypto is expected under Node');
    expect(await signCallbackFields(deriveSigningKeyNode(crypto, API_KEY), FIELDS)).toBe(expected);
    expect(await signCallbackFields(await deriveSigningKeyWeb(API_KEY), FIELDS)).toBe(expected);
    hideNodeCrypto();
    expect(await signCallbackFields(API_KEY, FIELDS)).toBe(expected);
  });

  it('refuses to use a node:crypto key on a runtime that has lost node:crypto, without naming the key', async () => {
    const crypto = nodeCrypto();
    if (!crypto) throw new Error('node:crypto is expected under Node');
    const key = deriveSigningKeyNode(crypto, API_KEY);
    hideNodeCrypto();
    const error = await signCallbackFields(key, FIELDS).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('node:crypto');
    expect((error as Error).message).not.toContain(API_KEY);
  });

  it.each(SIGNED_FIELDS)('gives a different signature when %s changes', async (name) => {
    const changed: SignedCallbackFields =
      name === 'amount'
        ? { ...FIELDS, amount: 120.51 }
        : name === 'completed_at'
          ? { ...FIELDS, completed_at: null }
          : { ...FIELDS, [name]: `${FIELDS[name]}x` };
    const signature = await signCallbackFields(API_KEY, changed);
    expect(signature).not.toBe(expected);
    expect(signature).toBe(specSignature(API_KEY, buildSignedString(changed)));
  });

  it('gives a different signature under another api key', async () => {
    const other = await signCallbackFields('sk_test_signature_unit_0002', FIELDS);
    expect(other).not.toBe(expected);
    expect(other).toBe(specSignature('sk_test_signature_unit_0002', buildSignedString(FIELDS)));
  });

  it('rejects with SignedStringError, signing nothing, when a field contains "|"', async () => {
    await expect(signCallbackFields(API_KEY, { ...FIELDS, status: 'SUCCESS|FAILED' })).rejects.toMatchObject({
      name: 'SignedStringError',
      fieldName: 'status',
      problem: 'separator',
    });
  });
});
