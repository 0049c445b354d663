import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, MyrGatewayError } from '../../../src/core/errors/base.js';
import {
  WebhookVerificationError,
  WebhookVerifier,
  type WebhookVerificationReason,
} from '../../../src/webhooks/index.js';
import { parseTimestamp } from '../../../src/webhooks/timestamp-parse.js';
import { deriveSigningKeyBytesWeb } from '../../../src/webhooks/signing-scheme.js';
import { hideNodeCrypto } from '../../fixtures/no-node-crypto.js';
import {
  API_KEY,
  NOW,
  OTHER_KEY,
  baseBody,
  callback,
  headersFor,
  sign,
  type Callback,
} from '../../fixtures/webhook-vectors-helpers.js';

const clock = () => NOW;
const verifier = new WebhookVerifier({ apiKey: API_KEY, clock });
const webVerifier = new WebhookVerifier({ apiKey: API_KEY, clock, crypto: 'web' });

async function reason(promise: Promise<unknown>): Promise<WebhookVerificationReason> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toBeInstanceOf(MyrGatewayError);
    return (error as WebhookVerificationError).reason;
  }
  throw new Error('verify() resolved but was expected to reject');
}

/** Expects the same rejection reason on the Node and the Web Crypto path. */
async function rejects(
  request: { body: unknown; headers?: unknown },
  expected: WebhookVerificationReason,
  v = verifier,
) {
  expect(await reason(v.verify(request as never))).toBe(expected);
  const web = v === verifier ? webVerifier : new WebhookVerifier({ apiKey: API_KEY, clock, crypto: 'web' });
  if (v === verifier) expect(await reason(web.verify(request as never))).toBe(expected);
}

function hmacWith(apiKey: string, message: string): Promise<string> {
  return deriveSigningKeyBytesWeb(apiKey).then((key) => createHmac('sha256', key).update(message).digest('hex'));
}

afterEach(() => vi.restoreAllMocks());

describe('WebhookVerifier: accepted callbacks', () => {
  it('verifies a raw string body on both crypto paths and returns the typed event', async () => {
    const cb = await callback();
    for (const v of [verifier, webVerifier]) {
      const event = await v.verify({ body: cb.raw, headers: cb.headers });
      expect(event.transaction_type).toBe('DEPOSIT');
      expect(event.signed).toEqual({
        webhook_id: cb.body.webhook_id,
        payment_id: 'PAY_8F3K2M9Q',
        reference_id: 'ORDER1001',
        amount: 120.5,
        currency: 'MYR',
        status: 'SUCCESS',
        timestamp: cb.body.timestamp,
        completed_at: cb.body.completed_at,
      });
      expect(event.unsigned).toEqual({
        transaction_type: 'DEPOSIT',
        gateway_reference: 'GW123456',
        created_at: '2026-03-01T09:55:00.000Z',
      });
      expect(event.signature).toBe(cb.body.signature);
      expect(event.keyIndex).toBe(0);
    }
    expect(verifier.cryptoPath).toBe('node');
    expect(webVerifier.cryptoPath).toBe('web');
  });

  it.each([
    ['Buffer', (cb: Callback) => Buffer.from(cb.raw)],
    ['Uint8Array', (cb: Callback) => new TextEncoder().encode(cb.raw)],
    ['ArrayBuffer', (cb: Callback) => new TextEncoder().encode(cb.raw).buffer],
    ['parsed object', (cb: Callback) => JSON.parse(cb.raw) as unknown],
    ['body with a UTF-8 BOM', (cb: Callback) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(cb.raw)])],
    ['pretty-printed JSON', (cb: Callback) => JSON.stringify(cb.body, null, 2)],
  ])('accepts the body as %s', async (_name, toBody) => {
    const cb = await callback();
    const event = await verifier.verify({ body: toBody(cb), headers: cb.headers });
    expect(event.signed.webhook_id).toBe(cb.body.webhook_id);
    expect((await webVerifier.verify({ body: toBody(cb), headers: cb.headers })).signed).toEqual(event.signed);
  });

  it('reads headers from a Headers object, mixed-case records and array values', async () => {
    const cb = await callback();
    const web = new Headers(cb.headers);
    expect((await verifier.verify({ body: cb.raw, headers: web })).signed.webhook_id).toBe(cb.body.webhook_id);
    const mixed = {
      'X-Webhook-Signature': cb.body.signature,
      'X-WEBHOOK-ID': cb.body.webhook_id,
      'x-Webhook-Timestamp': [cb.body.timestamp],
      'X-Payment-Id': [cb.body.payment_id, cb.body.payment_id],
    };
    expect((await verifier.verify({ body: cb.raw, headers: mixed })).signed.webhook_id).toBe(cb.body.webhook_id);
  });

  it('works without headers (the body carries the signature) and with the signature only in the header', async () => {
    const cb = await callback();
    await expect(verifier.verify({ body: cb.raw })).resolves.toBeTruthy();
    const { signature: _s, ...withoutSignature } = cb.body;
    await expect(verifier.verify({ body: withoutSignature, headers: cb.headers })).resolves.toBeTruthy();
    await expect(webVerifier.verify({ body: withoutSignature, headers: cb.headers })).resolves.toBeTruthy();
  });

  it('returns a withdrawal event with its unsigned bank fields', async () => {
    const cb = await callback({
      payment_id: 'WD_1',
      transaction_type: 'WITHDRAWAL',
      bank_code: 'MBBEMYKL',
      account_number: '****6789',
      status: 'FAILED',
      completed_at: null,
    });
    const event = await verifier.verify({ body: cb.raw, headers: cb.headers });
    expect(event.transaction_type).toBe('WITHDRAWAL');
    if (event.transaction_type !== 'WITHDRAWAL') throw new Error('narrowing');
    expect(event.unsigned).toEqual({
      transaction_type: 'WITHDRAWAL',
      gateway_reference: 'GW123456',
      created_at: '2026-03-01T09:55:00.000Z',
      bank_code: 'MBBEMYKL',
      account_number: '****6789',
    });
    expect(event.signed.completed_at).toBeNull();
  });

  it('treats a missing completed_at, gateway_reference and created_at as null', async () => {
    const cb = await callback({ completed_at: null });
    const { completed_at: _c, gateway_reference: _g, created_at: _cr, ...rest } = cb.body;
    const event = await verifier.verify({ body: rest, headers: cb.headers });
    expect(event.signed.completed_at).toBeNull();
    expect(event.unsigned.gateway_reference).toBeNull();
    expect(event.unsigned.created_at).toBeNull();
  });

  it('hands out an empty completed_at as null (the spec signs both as "")', async () => {
    const cb = await callback({ completed_at: '' });
    expect((await verifier.verify({ body: cb.raw })).signed.completed_at).toBeNull();
    const asNull = await verifier.verify({ body: { ...cb.body, completed_at: null } });
    expect(asNull.signed.completed_at).toBeNull();
  });

  it('signs amount in number-to-string form: 100.00 in the raw body verifies as 100', async () => {
    const cb = await callback({ amount: 100 });
    const raw = cb.raw.replace('"amount":100,', '"amount":100.00,');
    expect(raw).toContain('100.00');
    expect((await verifier.verify({ body: raw, headers: cb.headers })).signed.amount).toBe(100);
  });

  it('does not cover the unsigned fields: changing them keeps the signature valid', async () => {
    const cb = await callback();
    const changed = { ...cb.body, gateway_reference: 'OTHER', created_at: '2000-01-01T00:00:00Z', extra: 1 };
    const event = await verifier.verify({ body: changed, headers: cb.headers });
    expect(event.unsigned.gateway_reference).toBe('OTHER');
  });

  it('normalises amount -0 to 0', async () => {
    const cb = await callback({ amount: 0 });
    const event = await verifier.verify({ body: cb.raw.replace('"amount":0', '"amount":-0'), headers: cb.headers });
    expect(Object.is(event.signed.amount, 0)).toBe(true);
  });
});

describe('WebhookVerifier: signature', () => {
  it('rejects a callback without any signature as missing_signature', async () => {
    const cb = await callback();
    const { signature: _s, ...unsigned } = cb.body;
    const { 'x-webhook-signature': _h, ...headers } = cb.headers;
    await rejects({ body: unsigned, headers }, 'missing_signature');
    await rejects({ body: { ...unsigned, signature: null } }, 'missing_signature');
  });

  it.each([
    ['uppercase hex', (s: string) => s.toUpperCase()],
    ['63 characters', (s: string) => s.slice(1)],
    ['65 characters', (s: string) => `${s}0`],
    ['non-hex character', (s: string) => `${s.slice(0, 63)}g`],
    ['a flipped bit', (s: string) => `${s.slice(0, 63)}${((Number.parseInt(s.slice(63), 16) ^ 1) & 15).toString(16)}`],
    ['a sha256= prefix', (s: string) => `sha256=${s}`],
    ['surrounding whitespace', (s: string) => ` ${s}`],
    ['empty', () => ''],
  ])('rejects a signature with %s as invalid_signature', async (_name, change) => {
    const cb = await callback();
    const signature = change(cb.body.signature);
    await rejects(
      { body: { ...cb.body, signature }, headers: { ...cb.headers, 'x-webhook-signature': signature } },
      'invalid_signature',
    );
  });

  it('rejects a signature that is not a string', async () => {
    const cb = await callback();
    await rejects({ body: { ...cb.body, signature: 12 } }, 'invalid_signature');
  });

  it('rejects a callback signed with another api key', async () => {
    const cb = await callback({}, OTHER_KEY);
    await rejects({ body: cb.raw, headers: cb.headers }, 'invalid_signature');
  });

  it('accepts any key of a rotation and reports which one matched', async () => {
    const rotating = new WebhookVerifier({ apiKeys: [OTHER_KEY, API_KEY], clock });
    const rotatingWeb = new WebhookVerifier({ apiKeys: [OTHER_KEY, API_KEY], clock, crypto: 'web' });
    for (const [key, index] of [
      [OTHER_KEY, 0],
      [API_KEY, 1],
    ] as const) {
      const cb = await callback({}, key);
      expect((await rotating.verify({ body: cb.raw, headers: cb.headers })).keyIndex).toBe(index);
      expect((await rotatingWeb.verify({ body: cb.raw, headers: cb.headers })).keyIndex).toBe(index);
    }
    const third = await callback({}, 'sk_test_third');
    expect(await reason(rotating.verify({ body: third.raw, headers: third.headers }))).toBe('invalid_signature');
    expect(await reason(rotatingWeb.verify({ body: third.raw, headers: third.headers }))).toBe('invalid_signature');
  });

  it('checks the signature before anything else: a forged callback that is also stale, mismatched and malformed is invalid_signature, and the clock is never read', async () => {
    const spy = vi.fn(() => NOW);
    const v = new WebhookVerifier({ apiKey: API_KEY, clock: spy });
    const cb = await callback();
    const forged = {
      ...cb.body,
      amount: 9999,
      timestamp: '1999-01-01T00:00:00Z',
      status: 'WHATEVER',
      transaction_type: 'NOPE',
    };
    expect(await reason(v.verify({ body: forged, headers: { ...cb.headers, 'x-webhook-id': 'other' } }))).toBe(
      'invalid_signature',
    );
    expect(spy).not.toHaveBeenCalled();
  });

  it('rejects a signed field containing "|" even when the sender really signed it', async () => {
    // A field with "|" makes the signed string ambiguous: sign it by hand, as a careless sender would.
    const body = baseBody({ reference_id: 'A|B' });
    const message = [
      body.webhook_id,
      body.payment_id,
      body.reference_id,
      body.amount,
      body.currency,
      body.status,
      body.timestamp,
      body.completed_at ?? '',
    ].join('|');
    const signature = await hmacWith(API_KEY, message);
    await rejects({ body: { ...body, signature } }, 'malformed');
    // ...and the split that would collide with it is rejected too.
    const shifted = { ...body, payment_id: `${body.payment_id}|A`, reference_id: 'B', signature };
    await rejects({ body: shifted }, 'malformed');
  });

  it('rejects a signed field with a lone surrogate (it would collide with U+FFFD)', async () => {
    const body = baseBody({ reference_id: 'A\uD800' });
    const message = [
      body.webhook_id,
      body.payment_id,
      body.reference_id,
      body.amount,
      body.currency,
      body.status,
      body.timestamp,
      body.completed_at ?? '',
    ].join('|');
    const signature = await hmacWith(API_KEY, message);
    await rejects({ body: { ...body, signature } }, 'malformed');
    await rejects({ body: JSON.stringify({ ...body, signature }) }, 'malformed');
  });
});

describe('WebhookVerifier: headers against the body', () => {
  it.each(['x-webhook-signature', 'x-webhook-id', 'x-webhook-timestamp', 'x-payment-id'])(
    'rejects a differing %s as header_mismatch',
    async (name) => {
      const cb = await callback();
      const other = name === 'x-webhook-signature' ? 'a'.repeat(64) : 'different';
      await rejects({ body: cb.raw, headers: { ...cb.headers, [name]: other } }, 'header_mismatch');
      await rejects({ body: cb.raw, headers: new Headers({ ...cb.headers, [name]: other }) }, 'header_mismatch');
    },
  );

  it('rejects a header repeated with different values', async () => {
    const cb = await callback();
    await rejects(
      { body: cb.raw, headers: { ...cb.headers, 'x-webhook-id': [cb.body.webhook_id, 'x'] } },
      'header_mismatch',
    );
  });

  it('uses the header signature only when the body has none, and then needs it to be right', async () => {
    const cb = await callback();
    const { signature: _s, ...unsigned } = cb.body;
    await rejects(
      { body: unsigned, headers: { ...cb.headers, 'x-webhook-signature': 'b'.repeat(64) } },
      'invalid_signature',
    );
  });

  it('rejects headers that are not an object, and header values that are not strings', async () => {
    const cb = await callback();
    await rejects({ body: cb.raw, headers: 'x-webhook-id: 1' }, 'malformed');
    await rejects(
      { body: cb.raw, headers: { ...cb.headers, 'x-webhook-id': { toString: () => cb.body.webhook_id } } },
      'malformed',
    );
  });
});

describe('WebhookVerifier: timestamp', () => {
  const at = (ms: number) => new Date(ms).toISOString();

  it('accepts exactly the tolerance in both directions and rejects one millisecond more', async () => {
    for (const [offset, expected] of [
      [-300_000, null],
      [300_000, null],
      [-300_001, 'stale'],
      [300_001, 'future'],
    ] as const) {
      const cb = await callback({ timestamp: at(NOW + offset) });
      if (expected === null) await expect(verifier.verify({ body: cb.raw, headers: cb.headers })).resolves.toBeTruthy();
      else await rejects({ body: cb.raw, headers: cb.headers }, expected);
    }
  });

  it('honours toleranceSeconds and the clock option', async () => {
    const strict = new WebhookVerifier({ apiKey: API_KEY, toleranceSeconds: 10, clock: () => NOW + 11_000 });
    const cb = await callback();
    expect(await reason(strict.verify({ body: cb.raw }))).toBe('stale');
    const lenient = new WebhookVerifier({ apiKey: API_KEY, toleranceSeconds: 20, clock: () => NOW + 11_000 });
    await expect(lenient.verify({ body: cb.raw })).resolves.toBeTruthy();
  });

  it('uses Date.now by default', async () => {
    const v = new WebhookVerifier({ apiKey: API_KEY });
    const cb = await callback({ timestamp: new Date().toISOString() });
    await expect(v.verify({ body: cb.raw })).resolves.toBeTruthy();
    const old = await callback();
    expect(await reason(v.verify({ body: old.raw }))).toBe('stale');
  });

  it.each([
    ['no zone (UTC, as the spec defines it)', '2026-03-01T10:00:00.123456'],
    ['a space separator', '2026-03-01 10:00:00Z'],
    ['lowercase t and z', '2026-03-01t10:00:00z'],
    ['+0000', '2026-03-01T10:00:00+0000'],
    ['+00', '2026-03-01T10:00:00+00'],
    ['+08:00 for the same instant', '2026-03-01T18:00:00+08:00'],
  ])('accepts a timestamp with %s', async (_label, timestamp) => {
    const cb = await callback({ timestamp });
    const event = await verifier.verify({ body: cb.raw });
    expect(event.signed.timestamp).toBe(timestamp);
  });

  it('understands zone offsets', async () => {
    const cb = await callback({ timestamp: '2026-03-01T18:00:00.000+08:00' });
    await expect(verifier.verify({ body: cb.raw })).resolves.toBeTruthy();
    const off = await callback({ timestamp: '2026-03-01T10:00:00.000+08:00' });
    expect(await reason(verifier.verify({ body: off.raw }))).toBe('stale');
  });

  it.each([
    'yesterday',
    '2026-03-01',
    '2026-03-01T10:00:00+0',
    '2026-03-01_10:00:00Z',
    '2026-03-01T10:00:00ZZ',
    '2026-02-30T10:00:00Z',
    '2026-03-01T24:00:00Z',
    '2026-03-01T10:60:00Z',
    '2026-13-01T10:00:00Z',
    '2026-03-01T10:00:00+25:00',
    '1772359200000',
    '',
  ])('rejects the unparseable timestamp %j as invalid_timestamp', async (timestamp) => {
    const cb = await callback({ timestamp });
    await rejects({ body: cb.raw }, 'invalid_timestamp');
  });

  it('parseTimestamp is strict and exact', () => {
    expect(parseTimestamp('2026-03-01T10:00:00.000Z')).toBe(NOW);
    expect(parseTimestamp('2026-03-01T10:00:00Z')).toBe(NOW);
    expect(parseTimestamp('2026-03-01T10:00:00.123456Z')).toBe(NOW + 123);
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseTimestamp('2023-02-29T00:00:00Z')).toBeNaN();
    expect(parseTimestamp('2026-03-01T05:30:00-04:30')).toBe(NOW);
  });

  it('fails closed when the clock returns something that is not a number', async () => {
    const broken = new WebhookVerifier({ apiKey: API_KEY, clock: () => Number.NaN });
    const cb = await callback();
    expect(await reason(broken.verify({ body: cb.raw }))).toBe('internal');
  });
});

describe('WebhookVerifier: malformed input', () => {
  it.each([
    ['not JSON', 'not json'],
    ['empty string', ''],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['a JSON number', '42'],
    ['null', null],
    ['undefined', undefined],
    ['a number', 12],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
  ])('rejects a body that is %s', async (_name, body) => {
    await rejects({ body, headers: { 'x-webhook-signature': 'a'.repeat(64) } }, 'malformed');
  });

  it.each([
    ['amount as a string', { amount: '120.5' }],
    ['amount missing', { amount: undefined }],
    ['amount NaN', { amount: Number.NaN }],
    ['amount Infinity', { amount: Number.POSITIVE_INFINITY }],
    ['webhook_id a number', { webhook_id: 7 }],
    ['status null', { status: null }],
    ['completed_at a number', { completed_at: 5 }],
    ['timestamp missing', { timestamp: undefined }],
  ])('rejects a signed field with %s as malformed', async (_name, change) => {
    const cb = await callback();
    await rejects({ body: { ...cb.body, ...change } }, 'malformed');
  });

  it.each([
    ['a non-terminal status', { status: 'PROCESSING' }],
    ['an unknown transaction_type', { transaction_type: 'REFUND' }],
    ['a DEPOSIT whose payment_id is not PAY_', { payment_id: 'WD_1' }],
    ['an empty webhook_id', { webhook_id: '' }],
  ])('rejects an authentic callback with %s as malformed', async (_name, change) => {
    const cb = await callback(change);
    await rejects({ body: cb.raw }, 'malformed');
  });

  it('keeps an authentic callback whose unsigned fields have unexpected types (number as string, else null)', async () => {
    const deposit = await callback({ gateway_reference: 5 as unknown as string, created_at: {} as unknown as string });
    const event = await verifier.verify({ body: deposit.raw });
    expect(event.unsigned.gateway_reference).toBe('5');
    expect(event.unsigned.created_at).toBeNull();
    const payout = await callback({
      payment_id: 'WD_2',
      transaction_type: 'WITHDRAWAL',
      bank_code: 1 as unknown as string,
    });
    const withdrawal = await verifier.verify({ body: payout.raw });
    expect(withdrawal.transaction_type === 'WITHDRAWAL' && withdrawal.unsigned.bank_code).toBe('1');
  });

  it('turns throwing getters and proxies into malformed, never their own error', async () => {
    const cb = await callback();
    const hostile = Object.defineProperty({ ...cb.body }, 'amount', {
      get() {
        throw new TypeError('boom');
      },
    });
    await rejects({ body: hostile }, 'malformed');
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    await rejects({ body: cb.raw, headers: proxy }, 'malformed');
    await rejects(proxy as never, 'malformed');
    expect(await reason(verifier.verify(null as never))).toBe('malformed');
    expect(() => verifier.verifySync(null as never)).toThrow(WebhookVerificationError);
  });
});

describe('WebhookVerifier: secrets and errors', () => {
  it('keeps the api keys and signing keys out of inspect, JSON and errors', async () => {
    const v = new WebhookVerifier({ apiKeys: [API_KEY, OTHER_KEY], clock });
    const keyHex = Buffer.from(await deriveSigningKeyBytesWeb(API_KEY)).toString('hex');
    // String(v) is what a careless log line does: the default stringification is the point.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    const views = [inspect(v, { depth: 10, showHidden: true }), JSON.stringify(v), String(v)];
    const cb = await callback({ amount: 1 });
    const forged = { ...cb.body, amount: 2 };
    const expectedForForged = await sign({ ...cb.body, amount: 2 });
    for (const body of [forged, { ...cb.body, timestamp: 'x' }, 'nope']) {
      const error = await v.verify({ body, headers: cb.headers }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebhookVerificationError);
      views.push(
        inspect(error, { depth: 10, showHidden: true }),
        JSON.stringify(error),
        String((error as Error).stack),
      );
    }
    for (const text of views) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(OTHER_KEY);
      expect(text).not.toContain(keyHex);
      expect(text).not.toContain(expectedForForged.body.signature);
    }
    expect(JSON.parse(JSON.stringify(v))).toEqual({
      name: 'WebhookVerifier',
      keys: 2,
      toleranceSeconds: 300,
      crypto: 'node',
    });
  });

  it('throws errors with code WEBHOOK_VERIFICATION_FAILED and the reason in toJSON', async () => {
    const error = (await verifier.verify({ body: 'x' }).catch((e: unknown) => e)) as WebhookVerificationError;
    expect(error.code).toBe('WEBHOOK_VERIFICATION_FAILED');
    expect(error.name).toBe('WebhookVerificationError');
    expect(error.retryable).toBe(false);
    expect(error.toJSON()).toMatchObject({ reason: 'malformed', code: 'WEBHOOK_VERIFICATION_FAILED' });
  });

  it('never quotes attacker-controlled text in messages', async () => {
    const cb = await callback();
    const marker = 'ATTACKER_TEXT_\u001b[31m';
    const error = (await verifier
      .verify({ body: cb.raw, headers: { ...cb.headers, 'x-webhook-id': marker } })
      .catch((e: unknown) => e)) as Error;
    expect(error.message).not.toContain('ATTACKER_TEXT');
  });
});

describe('WebhookVerifier: configuration', () => {
  it.each([
    [{}],
    [{ apiKey: '' }],
    [{ apiKeys: [] }],
    [{ apiKeys: ['a', ''] }],
    [{ apiKey: 'a', apiKeys: ['b'] }],
    [{ apiKey: 'a', toleranceSeconds: 0 }],
    [{ apiKey: 'a', toleranceSeconds: Number.NaN }],
    [{ apiKey: 'a', clock: 5 }],
    [{ apiKey: 'a', crypto: 'wasm' }],
  ])('rejects %j with a ConfigurationError', (options) => {
    expect(() => new WebhookVerifier(options as never)).toThrow(ConfigurationError);
  });

  it.each([
    ['a trailing newline (a secret file, an echo into an env file)', 'sk_test_verifier_key\n'],
    ['a leading space', ' sk_test_verifier_key'],
    ['a trailing tab', 'sk_test_verifier_key\t'],
  ])(
    'refuses an api key with %s at construction, naming the whitespace and never the key: every callback would fail its signature',
    (_what, apiKey) => {
      const refusal = (() => {
        try {
          new WebhookVerifier({ apiKeys: ['sk_test_other', apiKey] });
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(refusal).toBeInstanceOf(ConfigurationError);
      expect(String(refusal)).toMatch(/whitespace around it/);
      expect(JSON.stringify(refusal) + String(refusal)).not.toContain('sk_test_verifier_key');
    },
  );

  it('rejects a null options object', () => {
    expect(() => new WebhookVerifier(null as never)).toThrow(ConfigurationError);
  });

  it("falls back to Web Crypto where node:crypto is missing, and refuses crypto: 'node' there", async () => {
    const cb = await callback();
    hideNodeCrypto();
    const v = new WebhookVerifier({ apiKey: API_KEY, clock });
    expect(v.cryptoPath).toBe('web');
    expect(() => new WebhookVerifier({ apiKey: API_KEY, crypto: 'node' })).toThrow(ConfigurationError);
    await expect(v.verify({ body: cb.raw })).resolves.toBeTruthy();
    expect(() => v.verifySync({ body: cb.raw })).toThrow(expect.objectContaining({ reason: 'internal' }));
  });

  it('verifySync gives the same event as verify on the Node path', async () => {
    const cb = await callback();
    expect(verifier.verifySync({ body: cb.raw, headers: cb.headers })).toEqual(
      await verifier.verify({ body: cb.raw, headers: cb.headers }),
    );
  });

  it('headersFor in the fixtures matches the spec header names', async () => {
    const cb = await callback();
    expect(Object.keys(headersFor(cb.body)).sort()).toEqual([
      'content-type',
      'x-payment-id',
      'x-webhook-id',
      'x-webhook-signature',
      'x-webhook-timestamp',
    ]);
  });
});

describe('the signing key passed in place of the api key (issue 23)', () => {
  // The sandbox prints both; the signing key is the spec's HKDF-SHA256 over SHA-256(api_key), as 64 hex.
  const signingKeyHex = Buffer.from(
    hkdfSync('sha256', createHash('sha256').update(API_KEY).digest(), Buffer.alloc(0), 'webhook-signature', 32),
  ).toString('hex');

  it.each(['node', 'web'] as const)(
    'the invalid_signature refusal says to pass the api key (%s crypto)',
    async (crypto) => {
      const cb = await callback();
      const confused = new WebhookVerifier({ apiKey: signingKeyHex, clock, crypto });
      const error = await confused.verify({ body: cb.raw, headers: cb.headers }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(error).toMatchObject({
        reason: 'invalid_signature',
        message: expect.stringContaining('this looks like a signing key; pass the api key'),
      });
      expect(String((error as Error).message)).not.toContain(signingKeyHex);
    },
  );

  it('also among rotated keys, in upper case; an ordinary wrong key gets no such hint', async () => {
    const cb = await callback();
    const rotated = new WebhookVerifier({ apiKeys: [OTHER_KEY, signingKeyHex.toUpperCase()], clock });
    await expect(rotated.verify({ body: cb.raw, headers: cb.headers })).rejects.toThrow(
      'this looks like a signing key; pass the api key',
    );
    const wrong = new WebhookVerifier({ apiKey: OTHER_KEY, clock });
    const error = await wrong.verify({ body: cb.raw, headers: cb.headers }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'invalid_signature' });
    expect((error as Error).message).not.toContain('signing key');
  });
});
