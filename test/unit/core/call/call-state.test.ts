/**
 * src/core/call/call-state.ts: what a call starts with. Its body is serialized once, before the
 * first attempt, so every attempt sends the same bytes (a retried payment create must carry the
 * same reference_id); and nothing is decided yet.
 */
import { describe, expect, it } from 'vitest';
import { CallDeadline } from '../../../../src/core/call/call-deadline.js';
import type { CallSpec } from '../../../../src/core/call/call-spec.js';
import { CallState } from '../../../../src/core/call/call-state.js';
import { CallTrace, Observer } from '../../../../src/core/observe/observer.js';

function start(spec: CallSpec): CallState {
  const observer = new Observer({ now: () => 0, tracer: false, logLevel: 'off' }, 'unit');
  const settings = { maxRetries: 2, attemptTimeout: 500, judge: { redact: (text: string) => text } };
  return new CallState(
    spec,
    new CallDeadline(undefined, 1000),
    new CallTrace(observer, spec, undefined),
    settings,
    undefined,
  );
}

describe('a call as it starts', () => {
  it('holds its body as the JSON every attempt sends, and no body for a lookup', () => {
    const body = { reference_id: 'ORDER8001', amount: 150, currency: 'MYR' };
    expect(
      start({ method: 'POST', path: 'payment/request', body, authenticated: true, operation: 'payment.create' }).body,
    ).toBe(JSON.stringify(body));
    expect(
      start({ method: 'GET', path: 'payment/status/ORDER8001', authenticated: true, operation: 'status' }).body,
    ).toBeUndefined();
  });

  it('has no retry, no token, no attempt and no error yet, and the settings it was started with', () => {
    const state = start({ method: 'GET', path: 'payment/status/ORDER8001', authenticated: true, operation: 'status' });
    expect(state).toMatchObject({
      retries: 0,
      tokenRenewed: false,
      renewNext: false,
      delayMs: 0,
      maybeProcessed: false,
      decided: false,
      maxRetries: 2,
      attemptTimeout: 500,
    });
    expect([state.token, state.last, state.final, state.paced, state.reported, state.preparing]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
