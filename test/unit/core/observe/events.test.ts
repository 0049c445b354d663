/**
 * src/core/observe/events.ts withResponse: the response metadata a result carries as
 * `lastResponse` is readable but invisible to everything that copies or prints the result
 * (JSON.stringify, spreads, Object.keys, util.inspect), frozen, and replaceable when a payment
 * create recovers a lost answer by looking the payment up (docs/observability.md).
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { withResponse, type ResponseInfo } from '../../../../src/core/observe/events.js';
import { Observer } from '../../../../src/core/observe/observer.js';
import { VERSION } from '../../../../src/version.js';

const INFO: ResponseInfo = {
  status: 200,
  correlationId: 'corr-77',
  rateLimit: { limit: 100, remaining: 7, reset: 1_772_359_260, observedAt: 1_000 },
  attempts: 2,
  durationMs: 1_530,
};

function payment() {
  return { payment_id: 'PAY_123', reference_id: 'ORDER1001', payment_url: 'https://pay.example.test/PAY_123' };
}

describe('withResponse', () => {
  it('returns the same object, with lastResponse readable and equal to the info given', () => {
    const result = payment();
    const out = withResponse(result, INFO);
    expect(out).toBe(result);
    expect(out.lastResponse).toEqual(INFO);
    expect(out.lastResponse.rateLimit?.remaining).toBe(7);
  });

  it.each([
    ['JSON.stringify', (r: object) => JSON.stringify(r)],
    ['a spread', (r: object) => JSON.stringify({ ...r })],
    ['Object.keys', (r: object) => Object.keys(r).join(',')],
    ['util.inspect', (r: object) => inspect(r, { depth: Infinity })],
  ])('%s of the result shows its own fields and not lastResponse', (_how, show) => {
    const plain = show(payment());
    const shown = show(withResponse(payment(), INFO));
    expect(shown).toBe(plain);
    expect(shown).not.toContain('corr-77');
    expect(shown).not.toContain('lastResponse');
  });

  it('a stored result round-trips through JSON unchanged', () => {
    const stored = JSON.parse(JSON.stringify(withResponse(payment(), INFO)));
    expect(stored).toEqual(payment());
  });

  it('lastResponse is frozen: a merchant cannot alter what the SDK saw', () => {
    const out = withResponse(payment(), { ...INFO });
    expect(Object.isFrozen(out.lastResponse)).toBe(true);
    expect(() => {
      (out.lastResponse as { status: number }).status = 500;
    }).toThrow(TypeError);
    expect(out.lastResponse.status).toBe(200);
  });

  it('can be put again on the same result (a recovered create gets the lookup’s answer)', () => {
    const result = withResponse(payment(), INFO);
    const lookup: ResponseInfo = {
      status: 200,
      correlationId: 'corr-lookup',
      rateLimit: undefined,
      attempts: 1,
      durationMs: 40,
    };
    expect(() => withResponse(result, lookup)).not.toThrow();
    expect(result.lastResponse).toEqual(lookup);
    expect(Object.keys(result)).toEqual(Object.keys(payment()));
  });

  it('carries what a CallTrace returns for a successful call', async () => {
    let t = 0;
    const observer = new Observer({ tracer: false, now: () => t }, VERSION);
    const info = await observer.run(
      { method: 'POST', path: 'payment/request', operation: 'payments.create' },
      async (trace) => {
        trace.request();
        t += 25;
        trace.response(
          new Response('{}', { status: 201, headers: { 'x-correlation-id': 'corr-201' } }),
          undefined,
          undefined,
        );
        return trace.succeeded(201);
      },
    );
    const out = withResponse(payment(), info);
    expect(out.lastResponse).toEqual({
      status: 201,
      correlationId: 'corr-201',
      rateLimit: undefined,
      attempts: 1,
      durationMs: 25,
    });
  });
});
