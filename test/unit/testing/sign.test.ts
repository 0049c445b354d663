import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signCallback } from '../../../src/testing/index.js';
import { buildSignedString } from '../../../src/webhooks/signing-scheme.js';

function independentSignature(apiKey: string, body: Parameters<typeof buildSignedString>[0]): string {
  const digest = createHash('sha256').update(apiKey, 'utf8').digest();
  const key = Buffer.from(hkdfSync('sha256', digest, Buffer.alloc(0), 'webhook-signature', 32));
  return createHmac('sha256', key).update(buildSignedString(body), 'utf8').digest('hex');
}

describe('signCallback', () => {
  it('fills defaults and signs like the service', async () => {
    const before = Date.now();
    const { body, headers, rawBody } = await signCallback('sk_test_x', {
      payment_id: 'PAY_1',
      reference_id: 'ORDER1',
      amount: 100,
      status: 'SUCCESS',
    });
    expect(body.webhook_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Date.parse(body.timestamp)).toBeGreaterThanOrEqual(before - 1);
    expect(body).toMatchObject({
      currency: 'MYR',
      transaction_type: 'DEPOSIT',
      gateway_reference: null,
      completed_at: body.timestamp,
      created_at: body.timestamp,
    });
    expect(body).not.toHaveProperty('bank_code');
    expect(body.signature).toBe(independentSignature('sk_test_x', body));
    expect(JSON.parse(rawBody)).toEqual(body);
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-Webhook-Signature': body.signature,
      'X-Webhook-ID': body.webhook_id,
      'X-Webhook-Timestamp': body.timestamp,
      'X-Payment-ID': 'PAY_1',
    });
  });

  it('keeps given fields, a null completed_at for non-success, and the withdrawal fields', async () => {
    const { body } = await signCallback('sk_test_y', {
      webhook_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      payment_id: 'WD_9',
      reference_id: 'PAYOUT9',
      amount: 250.5,
      status: 'FAILED',
      transaction_type: 'WITHDRAWAL',
      bank_code: 'PBBEMYKL',
      account_number: '****6789',
      timestamp: '2026-01-01T00:00:00.000Z',
      created_at: '2025-12-31T23:00:00.000Z',
    });
    expect(body).toEqual({
      webhook_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      payment_id: 'WD_9',
      reference_id: 'PAYOUT9',
      amount: 250.5,
      currency: 'MYR',
      status: 'FAILED',
      transaction_type: 'WITHDRAWAL',
      gateway_reference: null,
      bank_code: 'PBBEMYKL',
      account_number: '****6789',
      completed_at: null,
      created_at: '2025-12-31T23:00:00.000Z',
      timestamp: '2026-01-01T00:00:00.000Z',
      signature: independentSignature('sk_test_y', {
        webhook_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
        payment_id: 'WD_9',
        reference_id: 'PAYOUT9',
        amount: 250.5,
        currency: 'MYR',
        status: 'FAILED',
        timestamp: '2026-01-01T00:00:00.000Z',
        completed_at: null,
      }),
    });
  });

  it('a different api key gives a different signature', async () => {
    const fields = {
      payment_id: 'P',
      reference_id: 'R',
      amount: 5,
      status: 'SUCCESS',
      webhook_id: 'w',
      timestamp: 't',
    };
    const a = await signCallback('key-a', fields);
    const b = await signCallback('key-b', fields);
    expect(a.body.signature).not.toBe(b.body.signature);
  });
});
