/**
 * src/webhooks/request-parts.ts on its own: turning a framework request (raw bytes, text or a
 * parsed object; Web Headers or a Node record) into the signed string and the 32 signature bytes
 * before anything is trusted, and checking afterwards that the repeated headers agree with the
 * signed body. Everything here runs on hostile input: it fails only with a
 * WebhookVerificationError whose fixed message never quotes what the sender sent.
 */
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, type WebhookVerificationReason } from '../../../src/webhooks/errors.js';
import { assertHeadersAgree, readSignedParts, type WebhookRequest } from '../../../src/webhooks/request-parts.js';
import { DEPOSIT_BODY } from '../../fixtures/webhook-vectors-helpers.js';

const SIGNATURE = '0123456789abcdef'.repeat(4);
const BODY = { ...DEPOSIT_BODY, signature: SIGNATURE };
/** The spec's signed string of BODY, written out by hand. */
const MESSAGE =
  '6f1c2a9e-3b1d-4c8e-9a51-000000000001|PAY_8F3K2M9Q|ORDER1001|120.5|MYR|SUCCESS|2026-03-01T10:00:00.000Z|2026-03-01T09:59:58.000Z';
const HEADERS = {
  'x-webhook-signature': SIGNATURE,
  'x-webhook-id': BODY.webhook_id,
  'x-webhook-timestamp': BODY.timestamp,
  'x-payment-id': BODY.payment_id,
};

/** The WebhookVerificationError `run` throws (fails the test when it throws something else or nothing). */
function refusal(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error('expected a WebhookVerificationError');
}

const reasonOf = (request: unknown): WebhookVerificationReason =>
  refusal(() => readSignedParts(request as WebhookRequest)).reason;
const withBody = (changes: Record<string, unknown>) => ({ body: JSON.stringify({ ...BODY, ...changes }) });

describe('readSignedParts: the body', () => {
  const raw = JSON.stringify(BODY);

  it.each([
    ['a string', raw],
    ['a Buffer', Buffer.from(raw)],
    ['a Uint8Array', new TextEncoder().encode(raw)],
    ['an ArrayBuffer', new TextEncoder().encode(raw).buffer],
    ['a parsed object', JSON.parse(raw) as unknown],
    ['bytes with a UTF-8 BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(raw)])],
  ])('reads %s into the same signed string', (_name, body) => {
    const parts = readSignedParts({ body });
    expect(parts.message).toBe(MESSAGE);
    expect(parts.body).toEqual(BODY);
  });

  it.each([
    ['not JSON', 'signature=abc'],
    ['truncated JSON', raw.slice(0, -1)],
    ['a JSON array', '[1,2]'],
    ['JSON null', 'null'],
    ['a JSON string', '"text"'],
    ['a JSON number', '42'],
    ['invalid UTF-8 bytes', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ['undefined', undefined],
    ['null', null],
    ['a number', 5],
    ['an array object', [BODY]],
  ])('refuses a body that is %s as malformed', (_name, body) => {
    expect(reasonOf({ body })).toBe('malformed');
  });

  it.each([
    ['null', null],
    ['a string', 'body'],
  ])('refuses a request that is %s', (_name, request) => {
    expect(reasonOf(request)).toBe('malformed');
  });

  it('refuses headers that are neither a Headers object nor a record', () => {
    expect(reasonOf({ body: raw, headers: 'x-webhook-signature: abc' })).toBe('malformed');
  });
});

describe('readSignedParts: the signature', () => {
  it('decodes the 64 hex characters into their 32 bytes', () => {
    const parts = readSignedParts({ body: BODY });
    expect(parts.signature).toBe(SIGNATURE);
    expect(Buffer.from(parts.signatureBytes).toString('hex')).toBe(SIGNATURE);
    expect(parts.signatureBytes.byteLength).toBe(32);
    expect(parts.fromBody).toBe(true);
  });

  it('prefers the body signature to the header', () => {
    const parts = readSignedParts({ body: BODY, headers: { 'x-webhook-signature': 'ff'.repeat(32) } });
    expect(parts.signature).toBe(SIGNATURE);
    expect(parts.fromBody).toBe(true);
  });

  it.each([
    ['absent', undefined],
    ['null', null],
  ])('falls back to X-Webhook-Signature when the body signature is %s', (_name, signature) => {
    const parts = readSignedParts({
      body: { ...BODY, signature },
      headers: new Headers({ 'X-Webhook-Signature': SIGNATURE }),
    });
    expect(parts.signature).toBe(SIGNATURE);
    expect(parts.fromBody).toBe(false);
  });

  it('refuses a callback with a signature in neither place as missing_signature', () => {
    const { signature: _s, ...unsigned } = BODY;
    expect(reasonOf({ body: unsigned })).toBe('missing_signature');
    expect(reasonOf({ body: unsigned, headers: { 'x-webhook-id': BODY.webhook_id } })).toBe('missing_signature');
    expect(reasonOf({ body: unsigned, headers: { 'x-webhook-signature': [] } })).toBe('missing_signature');
  });

  it.each([
    ['uppercase hex', SIGNATURE.toUpperCase()],
    ['63 characters', SIGNATURE.slice(1)],
    ['65 characters', `${SIGNATURE}0`],
    ['a non-hex letter', `g${SIGNATURE.slice(1)}`],
    ['a 0x prefix', `0x${SIGNATURE.slice(2)}`],
    ['base64 of 32 bytes', Buffer.from(SIGNATURE, 'hex').toString('base64')],
    ['an empty string', ''],
    ['a number', 42],
    ['an array', [SIGNATURE]],
  ])('refuses a body signature that is %s as invalid_signature', (_name, signature) => {
    expect(reasonOf({ body: { ...BODY, signature } })).toBe('invalid_signature');
  });
});

describe('readSignedParts: the signed fields', () => {
  it('hands out the eight signed fields as read', () => {
    expect(readSignedParts({ body: BODY }).fields).toEqual({
      webhook_id: BODY.webhook_id,
      payment_id: BODY.payment_id,
      reference_id: BODY.reference_id,
      amount: 120.5,
      currency: 'MYR',
      status: 'SUCCESS',
      timestamp: BODY.timestamp,
      completed_at: BODY.completed_at,
    });
  });

  it.each([
    ['absent', undefined],
    ['null', null],
    ['empty', ''],
  ])('signs a completed_at that is %s as an empty last field and hands it out as null', (_name, completed_at) => {
    const parts = readSignedParts({ body: { ...BODY, completed_at } });
    expect(parts.message).toBe(`${MESSAGE.slice(0, MESSAGE.lastIndexOf('|'))}|`);
    expect(parts.fields.completed_at).toBeNull();
  });

  it('signs -0 as 0 and hands out 0', () => {
    const parts = readSignedParts({ body: { ...BODY, amount: -0 } });
    expect(parts.message.split('|')[3]).toBe('0');
    expect(Object.is(parts.fields.amount, 0)).toBe(true);
  });

  it('signs 100.00 as 100, as the spec says', () => {
    expect(
      readSignedParts({
        body:
          '{"webhook_id":"w","payment_id":"P","reference_id":"R","amount":100.00,"currency":"MYR","status":"SUCCESS","timestamp":"t","signature":"' +
          SIGNATURE +
          '"}',
      }).message,
    ).toBe('w|P|R|100|MYR|SUCCESS|t|');
  });

  it.each(['webhook_id', 'payment_id', 'reference_id', 'currency', 'status', 'timestamp'])(
    'refuses %s missing or not a string as malformed',
    (name) => {
      expect(reasonOf(withBody({ [name]: undefined }))).toBe('malformed');
      expect(reasonOf(withBody({ [name]: 1 }))).toBe('malformed');
      expect(reasonOf(withBody({ [name]: null }))).toBe('malformed');
      expect(reasonOf({ body: { ...BODY, [name]: ['x'] } })).toBe('malformed');
    },
  );

  it.each([
    ['a string', '120.5'],
    ['missing', undefined],
    ['null', null],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('refuses an amount that is %s as malformed', (_name, amount) => {
    expect(reasonOf({ body: { ...BODY, amount } })).toBe('malformed');
  });

  it('refuses a completed_at that is neither a string nor null', () => {
    expect(reasonOf(withBody({ completed_at: 0 }))).toBe('malformed');
    expect(reasonOf(withBody({ completed_at: {} }))).toBe('malformed');
  });

  it.each(['webhook_id', 'payment_id', 'reference_id', 'currency', 'status', 'timestamp', 'completed_at'])(
    'refuses a "|" in %s as malformed, before any HMAC is computed',
    (name) => {
      const error = refusal(() => readSignedParts(withBody({ [name]: 'A|B' })));
      expect(error.reason).toBe('malformed');
      expect(error.message).toContain('"|"');
    },
  );

  it.each([
    ['a lone high surrogate', '\uD800'],
    ['a lone low surrogate', '\uDFFF'],
  ])('refuses %s in a signed field as malformed', (_name, text) => {
    // JSON escapes reach the parser intact, so a raw body can carry them too.
    const escaped = JSON.stringify({ ...BODY, reference_id: 'x' }).replace(
      '"reference_id":"x"',
      `"reference_id":"\\u${text.charCodeAt(0).toString(16)}"`,
    );
    for (const body of [escaped, { ...BODY, reference_id: `ORDER${text}` }]) {
      const error = refusal(() => readSignedParts({ body }));
      expect(error.reason).toBe('malformed');
      expect(error.message).toContain('well-formed Unicode');
    }
  });

  it("never quotes the sender's text in a refusal", () => {
    const hostile = 'ORDER<script>alert(1)</script>|sk_live_zzz';
    for (const request of [
      withBody({ reference_id: hostile }),
      { body: hostile },
      { body: { ...BODY, signature: hostile } },
    ]) {
      const error = refusal(() => readSignedParts(request));
      expect(error.message).not.toContain('script');
      expect(error.message).not.toContain('sk_live_zzz');
    }
  });
});

describe('readSignedParts: reading headers', () => {
  const { signature: _s, ...unsigned } = BODY;

  it.each([
    ['a Web Headers object', new Headers({ 'X-Webhook-Signature': SIGNATURE })],
    ['a lowercase record (Node)', { 'x-webhook-signature': SIGNATURE }],
    ['a mixed-case record', { 'X-Webhook-Signature': SIGNATURE }],
    ['an upper-case record', { 'X-WEBHOOK-SIGNATURE': SIGNATURE }],
    ['an array of one value', { 'x-webhook-signature': [SIGNATURE] }],
    ['an array of equal values', { 'x-webhook-signature': [SIGNATURE, SIGNATURE] }],
    ['any object with get()', { get: (name: string) => (name === 'x-webhook-signature' ? SIGNATURE : null) }],
  ])('finds the signature header in %s', (_name, headers) => {
    expect(readSignedParts({ body: unsigned, headers }).signature).toBe(SIGNATURE);
  });

  it('refuses a signature header repeated with different values as header_mismatch', () => {
    expect(reasonOf({ body: unsigned, headers: { 'x-webhook-signature': [SIGNATURE, 'ff'.repeat(32)] } })).toBe(
      'header_mismatch',
    );
  });

  it.each([
    ['an object', { value: SIGNATURE }],
    ['a boolean', true],
    ['an array of numbers', [1, 1]],
  ])('refuses a signature header that is %s as malformed', (_name, value) => {
    expect(reasonOf({ body: unsigned, headers: { 'x-webhook-signature': value } })).toBe('malformed');
  });
});

describe('assertHeadersAgree', () => {
  const agree =
    (headers: unknown, body: Record<string, unknown> = BODY) =>
    () =>
      assertHeadersAgree(readSignedParts({ body, headers } as WebhookRequest));

  it.each([
    ['no headers', undefined],
    ['the spec headers', HEADERS],
    ['the spec headers as Web Headers', new Headers(HEADERS)],
    ['unrelated headers only', { 'content-type': 'application/json' }],
    ['only some of the headers', { 'x-payment-id': BODY.payment_id }],
  ])('accepts %s', (_name, headers) => {
    expect(agree(headers)).not.toThrow();
  });

  it.each([
    ['X-Webhook-Signature', 'x-webhook-signature', 'ff'.repeat(32)],
    ['X-Webhook-ID', 'x-webhook-id', '6f1c2a9e-3b1d-4c8e-9a51-000000000002'],
    ['X-Webhook-Timestamp', 'x-webhook-timestamp', '2026-03-01T10:00:01.000Z'],
    ['X-Payment-ID', 'x-payment-id', 'PAY_OTHER'],
  ])('refuses %s differing from the signed body as header_mismatch', (label, name, value) => {
    const error = refusal(agree({ ...HEADERS, [name]: value }));
    expect(error.reason).toBe('header_mismatch');
    expect(error.message).toContain(label);
    expect(error.message).not.toContain(value);
  });

  it('compares the timestamp header as text, not as an instant', () => {
    expect(refusal(agree({ 'x-webhook-timestamp': '2026-03-01T18:00:00.000+08:00' })).reason).toBe('header_mismatch');
  });

  it('does not compare the signature header with itself when the signature came from the header', () => {
    const { signature: _s, ...unsigned } = BODY;
    expect(agree(HEADERS, unsigned)).not.toThrow();
  });

  it('reads a numeric header value as its text', () => {
    const numeric = { ...BODY, payment_id: '12345' };
    expect(agree({ 'x-payment-id': 12345 }, numeric)).not.toThrow();
    expect(refusal(agree({ 'x-payment-id': 12346 }, numeric)).reason).toBe('header_mismatch');
  });

  it('refuses a header repeated with different values', () => {
    expect(refusal(agree({ 'x-webhook-id': [BODY.webhook_id, 'other'] })).reason).toBe('header_mismatch');
  });
});
