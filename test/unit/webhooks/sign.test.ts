/**
 * src/webhooks/sign.ts on its own: `signCallback` builds the callback a merchant's test posts to
 * its endpoint (the spec's body, defaults, headers and signature) and `callbackHeaders` the
 * spec's callback headers. The expected signature is computed here from the spec's rules with
 * node:crypto, not with the module's own signing code.
 */
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebhookVerifier } from '../../../src/webhooks/verifier.js';
import { callbackHeaders, signCallback, type CallbackBody } from '../../../src/webhooks/sign.js';
import { SignedStringError } from '../../../src/webhooks/signing-scheme.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const API_KEY = 'sk_test_sign_unit_0001';
const NOW_ISO = '2026-03-01T10:00:00.000Z';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The spec's signature, from its three steps, with the signed string joined by hand. */
function specSignature(apiKey: string, body: CallbackBody): string {
  const digest = createHash('sha256').update(apiKey, 'utf8').digest();
  const key = Buffer.from(hkdfSync('sha256', digest, Buffer.alloc(0), 'webhook-signature', 32));
  const signed = [
    body.webhook_id,
    body.payment_id,
    body.reference_id,
    String(body.amount),
    body.currency,
    body.status,
    body.timestamp,
    body.completed_at ?? '',
  ].join('|');
  return createHmac('sha256', key).update(signed, 'utf8').digest('hex');
}

const verifierAt = (iso: string) => new WebhookVerifier({ apiKey: API_KEY, clock: () => Date.parse(iso) });

describe('signCallback', () => {
  it('fills the defaults a deposit callback has: MYR, DEPOSIT, no gateway reference, now as timestamp and creation time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(NOW_ISO));
    const { body } = await signCallback(API_KEY, {
      payment_id: 'PAY_1',
      reference_id: 'ORDER1',
      amount: 100,
      status: 'SUCCESS',
    });
    expect(body).toMatchObject({
      payment_id: 'PAY_1',
      reference_id: 'ORDER1',
      amount: 100,
      status: 'SUCCESS',
      currency: 'MYR',
      transaction_type: 'DEPOSIT',
      gateway_reference: null,
      timestamp: NOW_ISO,
      created_at: NOW_ISO,
    });
    expect(body.webhook_id).toMatch(UUID_V4);
    expect(body).not.toHaveProperty('bank_code');
    expect(body).not.toHaveProperty('account_number');
    expect(body).not.toHaveProperty('metadata');
  });

  it.each([
    ['SUCCESS', NOW_ISO],
    ['FAILED', null],
    ['EXPIRED', null],
    ['CANCELLED', null],
    ['REFUNDED', null],
  ])('defaults completed_at for %s to %s', async (status, completedAt) => {
    const { body } = await signCallback(API_KEY, {
      payment_id: 'PAY_1',
      reference_id: 'ORDER1',
      amount: 100,
      status,
      timestamp: NOW_ISO,
    });
    expect(body.completed_at).toBe(completedAt);
  });

  it('keeps an explicit null completed_at on SUCCESS, and an explicit time on FAILED', async () => {
    const base = { payment_id: 'PAY_1', reference_id: 'ORDER1', amount: 100, timestamp: NOW_ISO };
    expect(
      (await signCallback(API_KEY, { ...base, status: 'SUCCESS', completed_at: null })).body.completed_at,
    ).toBeNull();
    const failed = await signCallback(API_KEY, { ...base, status: 'FAILED', completed_at: '2026-03-01T09:00:00.000Z' });
    expect(failed.body.completed_at).toBe('2026-03-01T09:00:00.000Z');
  });

  it('gives every callback its own webhook_id unless one is given', async () => {
    const input = { payment_id: 'PAY_1', reference_id: 'ORDER1', amount: 100, status: 'SUCCESS', timestamp: NOW_ISO };
    const [a, b] = await Promise.all([signCallback(API_KEY, input), signCallback(API_KEY, input)]);
    expect(a.body.webhook_id).not.toBe(b.body.webhook_id);
    expect(a.body.signature).not.toBe(b.body.signature);
    const fixed = await signCallback(API_KEY, { ...input, webhook_id: 'w-1' });
    expect(fixed.body.webhook_id).toBe('w-1');
  });

  it('signs the eight signed fields as the spec does', async () => {
    const { body } = await signCallback(API_KEY, {
      payment_id: 'WD_7',
      reference_id: 'PAYOUT7',
      amount: 250.0,
      status: 'FAILED',
      transaction_type: 'WITHDRAWAL',
      bank_code: 'MBBEMYKL',
      account_number: '****6789',
      gateway_reference: 'GW1',
      timestamp: NOW_ISO,
    });
    expect(body.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(body.signature).toBe(specSignature(API_KEY, body));
    expect(body).toMatchObject({
      transaction_type: 'WITHDRAWAL',
      bank_code: 'MBBEMYKL',
      account_number: '****6789',
      gateway_reference: 'GW1',
    });
  });

  it('leaves the unsigned fields out of the signature', async () => {
    const input = {
      webhook_id: 'w-1',
      payment_id: 'WD_7',
      reference_id: 'PAYOUT7',
      amount: 250,
      status: 'SUCCESS',
      timestamp: NOW_ISO,
    };
    const plain = await signCallback(API_KEY, input);
    const decorated = await signCallback(API_KEY, {
      ...input,
      transaction_type: 'WITHDRAWAL',
      gateway_reference: 'GW-other',
      bank_code: 'CIBBMYKL',
      account_number: '****0000',
      created_at: '2020-01-01T00:00:00.000Z',
    });
    expect(decorated.body.signature).toBe(plain.body.signature);
  });

  it('hands back the body as JSON text and the spec headers, which the verifier accepts', async () => {
    const signed = await signCallback(API_KEY, {
      payment_id: 'PAY_9',
      reference_id: 'ORDER9',
      amount: 120.5,
      status: 'SUCCESS',
      timestamp: NOW_ISO,
    });
    expect(signed.rawBody).toBe(JSON.stringify(signed.body));
    expect(signed.headers).toEqual(callbackHeaders(signed.body));
    const event = await verifierAt(NOW_ISO).verify({ body: signed.rawBody, headers: signed.headers });
    expect(event.signed).toMatchObject({
      payment_id: 'PAY_9',
      reference_id: 'ORDER9',
      amount: 120.5,
      status: 'SUCCESS',
    });
    expect(event.signature).toBe(signed.body.signature);
  });

  it('never puts the api key into the body, the headers or the raw text', async () => {
    const signed = await signCallback(API_KEY, {
      payment_id: 'PAY_9',
      reference_id: 'ORDER9',
      amount: 5,
      status: 'FAILED',
    });
    expect(signed.rawBody).not.toContain(API_KEY);
    expect(JSON.stringify(signed.headers)).not.toContain(API_KEY);
  });

  it('refuses, with SignedStringError naming the field, a reference that would make the signed string ambiguous', async () => {
    const input = { payment_id: 'PAY_1', amount: 5, status: 'SUCCESS' };
    await expect(signCallback(API_KEY, { ...input, reference_id: 'A|B' })).rejects.toBeInstanceOf(SignedStringError);
    await expect(signCallback(API_KEY, { ...input, reference_id: 'A\uD800' })).rejects.toMatchObject({
      fieldName: 'reference_id',
      problem: 'unicode',
    });
  });
});

describe('callbackHeaders', () => {
  it('repeats signature, webhook_id, timestamp and payment_id under the spec header names, with a JSON content type', () => {
    const headers = callbackHeaders({
      signature: 'ab'.repeat(32),
      webhook_id: 'w-1',
      timestamp: NOW_ISO,
      payment_id: 'PAY_1',
    });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-Webhook-Signature': 'ab'.repeat(32),
      'X-Webhook-ID': 'w-1',
      'X-Webhook-Timestamp': NOW_ISO,
      'X-Payment-ID': 'PAY_1',
    });
  });

  it('takes only the four repeated fields from a full body (nothing unsigned becomes a header)', async () => {
    const { body } = await signCallback(API_KEY, {
      payment_id: 'WD_1',
      reference_id: 'R',
      amount: 50,
      status: 'SUCCESS',
      bank_code: 'MBBEMYKL',
      account_number: '****6789',
      timestamp: NOW_ISO,
    });
    const values = Object.values(callbackHeaders(body));
    expect(values).not.toContain('MBBEMYKL');
    expect(values).not.toContain('****6789');
    expect(Object.keys(callbackHeaders(body))).toHaveLength(5);
  });
});
