/**
 * src/webhooks/tracing.ts traced: without a tracer the handler is returned as it is; with one,
 * each callback handled is a `myr-gateway webhook` span carrying the outcome, the status and
 * (once verified) the signed identifiers, never the body, the signature, a key or an account
 * number; a 5xx answer sets an error status; and a tracer that throws never changes the answer
 * nor runs the handler twice (docs/observability.md, "Webhooks").
 */
import { describe, expect, it } from 'vitest';
import type { TracerLike } from '../../../src/core/observe/trace.js';
import type { WebhookEvent } from '../../../src/webhooks/events.js';
import type { WebhookResponse } from '../../../src/webhooks/handler-options.js';
import type { WebhookRequest } from '../../../src/webhooks/request-parts.js';
import { traced } from '../../../src/webhooks/tracing.js';
import { recordingTracer } from '../../helpers/recording-tracer.js';

const API_KEY = 'sk_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const SIGNATURE = 'a3f1c2d4e5b60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const ACCOUNT = '512345678901';
const JSON_HEADERS = { 'content-type': 'application/json' };

function withdrawalEvent(): WebhookEvent {
  return {
    transaction_type: 'WITHDRAWAL',
    signed: {
      webhook_id: '7f1c9a52-0b6e-4d8e-9a1f-2c3b4d5e6f70',
      payment_id: 'WD_8841',
      reference_id: 'WD1001',
      amount: 250.5,
      currency: 'MYR',
      status: 'SUCCESS',
      timestamp: '2026-03-01T10:00:00Z',
      completed_at: '2026-03-01T09:59:58Z',
    },
    unsigned: {
      transaction_type: 'WITHDRAWAL',
      gateway_reference: 'GW-1',
      created_at: null,
      bank_code: 'MBBEMYKL',
      account_number: ACCOUNT,
    },
    signature: SIGNATURE,
    keyIndex: 0,
  };
}

const REQUEST: WebhookRequest = {
  body: JSON.stringify({ payment_id: 'WD_8841', signature: SIGNATURE, account_number: ACCOUNT, api_key: API_KEY }),
  headers: { 'x-signature': SIGNATURE },
};

describe('traced', () => {
  it('without a tracer returns the handler itself: nothing wraps a callback', () => {
    const handle = async (): Promise<WebhookResponse> => ({
      status: 200,
      body: { ok: true, outcome: 'processed' },
      headers: JSON_HEADERS,
    });
    expect(traced(undefined, handle)).toBe(handle);
  });

  it('a processed withdrawal: one ended span with the outcome, the status and the signed identifiers, no error status', async () => {
    const { tracer, spans } = recordingTracer();
    const response: WebhookResponse = {
      status: 200,
      body: { ok: true, outcome: 'processed' },
      headers: JSON_HEADERS,
      event: withdrawalEvent(),
    };
    const seen: WebhookRequest[] = [];
    const handle = traced(tracer, async (request) => {
      seen.push(request);
      return response;
    });
    expect(await handle(REQUEST)).toBe(response);
    expect(seen).toEqual([REQUEST]);
    expect(spans).toEqual([
      {
        name: 'myr-gateway webhook',
        options: {},
        attributes: {
          'http.response.status_code': 200,
          'myr.webhook.outcome': 'processed',
          'myr.transaction_type': 'WITHDRAWAL',
          'myr.webhook_id': '7f1c9a52-0b6e-4d8e-9a1f-2c3b4d5e6f70',
          'myr.payment_id': 'WD_8841',
          'myr.reference_id': 'WD1001',
          'myr.status': 'SUCCESS',
        },
        events: [],
        statuses: [],
        ended: 1,
      },
    ]);
  });

  it('never puts the body, the signature, a key or an account number on the span', async () => {
    const { tracer, spans } = recordingTracer();
    const handle = traced(tracer, async () => ({
      status: 200,
      body: { ok: true, outcome: 'duplicate' },
      headers: JSON_HEADERS,
      event: withdrawalEvent(),
    }));
    await handle(REQUEST);
    const text = JSON.stringify(spans);
    for (const secret of [SIGNATURE, ACCOUNT, API_KEY]) expect(text).not.toContain(secret);
    expect(Object.keys(spans[0]?.attributes ?? {}).sort()).toEqual([
      'http.response.status_code',
      'myr.payment_id',
      'myr.reference_id',
      'myr.status',
      'myr.transaction_type',
      'myr.webhook.outcome',
      'myr.webhook_id',
    ]);
  });

  // A 5xx tells the gateway to deliver again, so it is the span's error; a refusal (4xx) or an
  // in-flight 409 is the handler doing its job.
  it.each([
    [
      { status: 401, body: { ok: false, outcome: 'rejected', reason: 'invalid_signature' } },
      { 'myr.webhook.reason': 'invalid_signature' },
      [],
    ],
    [
      { status: 400, body: { ok: false, outcome: 'rejected', reason: 'malformed' } },
      { 'myr.webhook.reason': 'malformed' },
      [],
    ],
    [{ status: 409, body: { ok: false, outcome: 'in_flight' } }, {}, []],
    [{ status: 500, body: { ok: false, outcome: 'failed' } }, {}, [{ code: 2, message: 'failed' }]],
    [{ status: 503, body: { ok: false, outcome: 'unavailable' } }, {}, [{ code: 2, message: 'unavailable' }]],
    [{ status: 503, body: { ok: false, outcome: 'in_flight' } }, {}, [{ code: 2, message: 'in_flight' }]],
  ] as const)(
    'an unverified answer %o: status and outcome attributes, error status %j',
    async (answer, extra, statuses) => {
      const { tracer, spans } = recordingTracer();
      const response: WebhookResponse = { ...answer, headers: JSON_HEADERS };
      expect(await traced(tracer, async () => response)(REQUEST)).toBe(response);
      // No event: no signed identifier is set, not even as undefined.
      expect(spans[0]?.attributes).toEqual({
        'http.response.status_code': answer.status,
        'myr.webhook.outcome': answer.body.outcome,
        ...extra,
      });
      expect(spans[0]?.statuses).toEqual(statuses);
      expect(spans[0]?.ended).toBe(1);
    },
  );

  it('a tracer that throws before running the handler: the handler runs once, untraced, and its answer stands', async () => {
    let runs = 0;
    const tracer: TracerLike = {
      startActiveSpan: () => {
        throw new Error('exporter misconfigured');
      },
    };
    const response: WebhookResponse = {
      status: 200,
      body: { ok: true, outcome: 'processed' },
      headers: JSON_HEADERS,
      event: withdrawalEvent(),
    };
    const answer = await traced(tracer, async () => {
      runs += 1;
      return response;
    })(REQUEST);
    expect(answer).toBe(response);
    expect(runs).toBe(1);
  });

  it('a tracer that throws after starting the handler does not run it twice', async () => {
    let runs = 0;
    const { tracer: inner, spans } = recordingTracer();
    const tracer: TracerLike = {
      startActiveSpan: (name, options, fn) => {
        inner.startActiveSpan(name, options, fn);
        throw new Error('context manager broke');
      },
    };
    const response: WebhookResponse = { status: 500, body: { ok: false, outcome: 'failed' }, headers: JSON_HEADERS };
    const answer = await traced(tracer, async () => {
      runs += 1;
      return response;
    })(REQUEST);
    expect(answer).toBe(response);
    expect(runs).toBe(1);
    expect(spans[0]?.ended).toBe(1);
  });

  it('span methods that throw never change the answer', async () => {
    const { tracer, spans } = recordingTracer({ broken: true });
    const response: WebhookResponse = {
      status: 503,
      body: { ok: false, outcome: 'unavailable' },
      headers: { 'retry-after': '5' },
    };
    expect(await traced(tracer, async () => response)(REQUEST)).toBe(response);
    expect(spans[0]?.ended).toBe(1);
  });

  it('each callback is its own span', async () => {
    const { tracer, spans } = recordingTracer();
    const handle = traced(tracer, async () => ({
      status: 200,
      body: { ok: true, outcome: 'processed' as const },
      headers: JSON_HEADERS,
    }));
    await Promise.all([handle(REQUEST), handle(REQUEST), handle(REQUEST)]);
    expect(spans.map((s) => [s.name, s.ended])).toEqual(Array(3).fill(['myr-gateway webhook', 1]));
  });
});
