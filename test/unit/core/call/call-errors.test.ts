/**
 * src/core/call/call-errors.ts: the error a call ends with when its signal or its total timeout
 * stopped it, or when a money-moving request may have been processed; through the transport
 * (test/helpers/transport-harness.ts), and on its own for the messages.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MyrGatewayError } from '../../../../src/core/errors/base.js';
import { CallDeadline } from '../../../../src/core/call/call-deadline.js';
import type { CallSpec } from '../../../../src/core/call/call-spec.js';
import { CallState } from '../../../../src/core/call/call-state.js';
import { outcomeUnknownError, stoppedError } from '../../../../src/core/call/call-errors.js';
import { CallTrace, Observer } from '../../../../src/core/observe/observer.js';
import { OutcomeUnknownError } from '../../../../src/core/errors/outcome.js';
import { AbortError, ServiceUnavailableError, TimeoutError } from '../../../../src/core/errors/service.js';
import {
  failure,
  hang,
  harness,
  status,
  createPayment,
  withdraw,
  rejection,
} from '../../../helpers/transport-harness.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('a call stopped by its total timeout or its signal', () => {
  it('ends with a TimeoutError naming the total timeout when the call runs out of time, without another attempt', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, timeout: 30_000, totalTimeout: 1000, realSleep: true, then: hang });
    const settled = h.transport.outcomeOf(status(undefined, false));
    await vi.advanceTimersByTimeAsync(1000);
    const outcome = await settled;

    expect(h.sent).toHaveLength(1);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    expect(outcome.error).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect((outcome.error as Error).message).toMatch(/total timeout/);
    expect(outcome.remainingMs).toBeLessThanOrEqual(0);
  });

  it("ends with an AbortError when the caller's signal aborts an attempt in flight, and aborts the request", async () => {
    const h = harness({ noTokens: true, then: hang });
    const controller = new AbortController();
    const pending = h.transport.call(status(undefined, false), { signal: controller.signal });
    await vi.waitFor(() => expect(h.sent).toHaveLength(1));
    controller.abort(new Error('customer left'));
    const error = await rejection(pending);

    expect(error).toBeInstanceOf(AbortError);
    expect(error.code).toBe('ABORTED');
    expect(h.sent[0]?.signal.aborted).toBe(true);
    expect(h.sent).toHaveLength(1);
  });

  it('an aborted payment create whose earlier attempt may have been processed says so, with what to do', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, realSleep: true, then: () => failure(502, 'GATEWAY_ERROR') });
    const controller = new AbortController();
    const settled = h.transport.outcomeOf(createPayment('ORDER4001', false), { signal: controller.signal });
    await vi.advanceTimersByTimeAsync(50);
    controller.abort();
    const outcome = await settled;

    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.maybeProcessed).toBe(true);
    const error = outcome.error as MyrGatewayError;
    expect(error).toBeInstanceOf(AbortError);
    expect(error.referenceId).toBe('ORDER4001');
    expect(error.message).toMatch(/may have reached the service/);
    expect(error.message).toContain('same reference_id ORDER4001');
  });

  it('a withdrawal aborted while its attempt was in flight ends as OutcomeUnknownError, not a plain abort', async () => {
    const h = harness({ noTokens: true, then: hang });
    const controller = new AbortController();
    const settled = h.transport.outcomeOf(withdraw('WD2002', 'withdraw', false), { signal: controller.signal });
    await vi.waitFor(() => expect(h.sent).toHaveLength(1));
    controller.abort();
    const outcome = await settled;

    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(OutcomeUnknownError);
    expect(outcome.maybeProcessed).toBe(true);
    // It says what stopped it: the caller's signal, not an attempt timeout that never happened.
    const error = outcome.error as OutcomeUnknownError;
    expect(error.cause).toBeInstanceOf(AbortError);
    expect(error.message).toContain('aborted by its signal');
    expect(error.message).not.toMatch(/within \d+ ms for this attempt/);
  });

  it('a withdrawal cut by its total timeout while in flight says the total timeout stopped it', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, timeout: 10_000, realSleep: true, then: hang });
    const settled = h.transport.outcomeOf(withdraw('WD2003', 'withdraw', false), { totalTimeout: 300 });
    await vi.advanceTimersByTimeAsync(300);
    const outcome = await settled;

    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    const error = outcome.error as OutcomeUnknownError;
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(TimeoutError);
    expect(error.message).toContain('total timeout');
    expect(outcome.remainingMs).toBe(0);
  });
});

describe('OUTCOME_UNKNOWN', () => {
  it('keeps the status and correlation id of the answer on the OutcomeUnknownError', async () => {
    const h = harness({
      steps: [failure(504, 'GATEWAY_TIMEOUT', 'upstream silent', { 'x-correlation-id': 'corr-504' })],
    });
    const error = await rejection(h.transport.call(withdraw()));
    expect(error).toMatchObject({ status: 504, correlationId: 'corr-504' });
    expect((error.cause as MyrGatewayError).code).toBe('GATEWAY_TIMEOUT');
  });
});

describe('the errors on their own', () => {
  /** A call's state as the transport starts it, stopped by `signal` or by a total timeout of `totalMs`. */
  function stateOf(
    spec: CallSpec,
    stop: { signal?: AbortSignal; totalMs?: number },
    maybeProcessed = false,
  ): CallState {
    const observer = new Observer({ now: () => 0, tracer: false, logLevel: 'off' }, 'unit');
    const limits = new CallDeadline(stop.signal, stop.totalMs ?? 60_000);
    const state = new CallState(
      spec,
      limits,
      new CallTrace(observer, spec, undefined),
      { maxRetries: 3, attemptTimeout: 1000, judge: { redact: (text) => text } },
      undefined,
    );
    state.maybeProcessed = maybeProcessed;
    return state;
  }
  const payment: CallSpec = {
    method: 'POST',
    path: 'payment/request',
    authenticated: true,
    operation: 'payment.create',
    referenceId: 'ORDER7001',
  };
  const withdrawal: CallSpec = {
    method: 'POST',
    path: 'payment/withdraw',
    authenticated: true,
    operation: 'withdraw',
    referenceId: 'WD7001',
  };

  it("passes on an SDK error a hook's wait ended with, as it is", () => {
    const cause = new MyrGatewayError('RATE_LIMITED: no slot', { code: 'RATE_LIMITED' });
    expect(stoppedError(cause, stateOf(payment, { signal: AbortSignal.abort() }))).toBe(cause);
  });

  it('names the signal or the total timeout that stopped the call, with its reference_id', () => {
    const aborted = stoppedError(new Error('not ours'), stateOf(payment, { signal: AbortSignal.abort() }));
    expect(aborted).toBeInstanceOf(AbortError);
    expect(aborted).toMatchObject({ code: 'ABORTED', referenceId: 'ORDER7001' });
    expect(aborted.message).not.toMatch(/may have reached/);

    const timedOut = stoppedError(undefined, stateOf(payment, { totalMs: 0 }));
    expect(timedOut).toBeInstanceOf(TimeoutError);
    expect(timedOut).toMatchObject({ code: 'TIMEOUT', retryable: true, referenceId: 'ORDER7001' });
    expect(timedOut.message).toContain('total timeout');
  });

  it('a stopped payment create that may have been processed says so and what to do; a withdrawal is OUTCOME_UNKNOWN', () => {
    const create = stoppedError(undefined, stateOf(payment, { totalMs: 0 }, true));
    expect(create).toBeInstanceOf(TimeoutError);
    expect(create.message).toContain('may have reached the service');
    expect(create.message).toContain('same reference_id ORDER7001');

    const withdraw = stoppedError(undefined, stateOf(withdrawal, { signal: AbortSignal.abort() }, true));
    expect(withdraw).toBeInstanceOf(OutcomeUnknownError);
    expect(withdraw.cause).toBeInstanceOf(AbortError);
    expect(withdraw.message).toContain('withdrawals.recover');
  });

  it('OUTCOME_UNKNOWN names the request, what happened to it and what to do, and keeps the answer it came from', () => {
    const cause = new ServiceUnavailableError('GATEWAY_TIMEOUT: upstream silent', {
      code: 'GATEWAY_TIMEOUT',
      status: 504,
      correlationId: 'corr-7',
    });
    const error = outcomeUnknownError(withdrawal, cause);
    expect(error).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      referenceId: 'WD7001',
      status: 504,
      correlationId: 'corr-7',
      retryable: false,
    });
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('POST /payment/withdraw request for reference_id WD7001');
    expect(error.message).toContain('(GATEWAY_TIMEOUT: upstream silent)');
    expect(error.message).toContain('Wait for the callback for reference_id WD7001 or call withdrawals.recover');
  });
});
