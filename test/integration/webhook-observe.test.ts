/**
 * Each callback handled is a span when the merchant passes a tracer: outcome, status and the
 * signed identifiers, never the api key, the derived signing key or a full account number.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { signCallback } from '../../src/testing/index.js';
import { deriveSigningKeyBytesWeb } from '../../src/webhooks/signing-scheme.js';
import { createWebhookHandler } from '../../src/webhooks/index.js';
import { expectNoSecret } from '../helpers/observe-capture.js';

const API_KEY = 'sk_webhook_observe_secret';
const ACCOUNT_NUMBER = '5140123456789';

describe('webhook handler spans', () => {
  it('one span per delivery: processed, duplicate, forged, failing handler; no secret in any', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    let fail = true;
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      tracer: provider.getTracer('shop'),
      onEvent: (event) => {
        if (event.transaction_type === 'WITHDRAWAL' && fail) {
          fail = false;
          throw new Error(`handler bug with ${ACCOUNT_NUMBER}`);
        }
      },
    });
    const deposit = await signCallback(API_KEY, {
      payment_id: 'PAY_OBS1',
      reference_id: 'ORDER_OBS1',
      amount: 120.5,
      status: 'SUCCESS',
    });
    const payout = await signCallback(API_KEY, {
      payment_id: 'WD_OBS2',
      reference_id: 'PAYOUT_OBS2',
      amount: 250,
      status: 'SUCCESS',
      transaction_type: 'WITHDRAWAL',
      bank_code: 'PBBEMYKL',
      account_number: ACCOUNT_NUMBER,
    });
    const forged = await signCallback('sk_someone_else', {
      payment_id: 'PAY_OBS3',
      reference_id: 'ORDER_OBS3',
      amount: 1,
      status: 'SUCCESS',
    });
    const answers = [];
    for (const cb of [deposit, deposit, forged, payout, payout])
      answers.push((await handler.handle({ body: cb.rawBody, headers: cb.headers })).status);
    expect(answers).toEqual([200, 200, 401, 500, 200]);

    const spans = exporter.getFinishedSpans();
    expect(
      spans.map((s) => [s.name, s.attributes['myr.webhook.outcome'], s.attributes['http.response.status_code']]),
    ).toEqual([
      ['myr-gateway webhook', 'processed', 200],
      ['myr-gateway webhook', 'duplicate', 200],
      ['myr-gateway webhook', 'rejected', 401],
      ['myr-gateway webhook', 'failed', 500],
      ['myr-gateway webhook', 'processed', 200],
    ]);
    expect(spans[0]?.attributes).toMatchObject({
      'myr.reference_id': 'ORDER_OBS1',
      'myr.payment_id': 'PAY_OBS1',
      'myr.webhook_id': deposit.body.webhook_id,
      'myr.transaction_type': 'DEPOSIT',
      'myr.status': 'SUCCESS',
    });
    expect(spans[2]?.attributes).toMatchObject({ 'myr.webhook.reason': 'invalid_signature' });
    expect(spans[2]?.attributes['myr.reference_id']).toBeUndefined(); // unverified fields are not told
    expect(spans[3]?.status).toEqual({ code: 2, message: 'failed' });

    const key = await deriveSigningKeyBytesWeb(API_KEY);
    const text =
      inspect(
        spans.map((s) => [s.name, s.attributes, s.events, s.status]),
        { depth: 9 },
      ) + JSON.stringify(spans.map((s) => s.attributes));
    expectNoSecret(text, {
      API_KEY,
      'signing key (hex)': Buffer.from(key).toString('hex'),
      'signing key (base64)': Buffer.from(key).toString('base64'),
      'full account number': ACCOUNT_NUMBER,
      signature: String(deposit.body.signature),
    });
    await provider.forceFlush();
  });

  it('refuses a tracer that is not one', () => {
    expect(() =>
      createWebhookHandler({ verifier: { apiKey: API_KEY }, onEvent: () => undefined, tracer: {} as never }),
    ).toThrow(ConfigurationError);
  });
});
