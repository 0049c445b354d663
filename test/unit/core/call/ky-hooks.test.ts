/**
 * src/core/call/ky-hooks.ts through the transport (test/helpers/transport-harness.ts): what runs
 * before each attempt (the backoff wait, the bearer token, the pacing slot, the token limiter)
 * and how a call that stops there ends.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type TokenAttemptReport } from '../../../../src/core/tokens/shared.js';
import { Pacer } from '../../../../src/core/pacing/pacer.js';
import {
  type RateBucket,
  type RateLimiter,
  type RateLimitObservation,
} from '../../../../src/core/pacing/limiter-contract.js';
import { AbortError, AuthenticationError, RateLimitError } from '../../../../src/core/errors/service.js';
import {
  RETRY,
  json,
  failure,
  success,
  fetchFailed,
  harness,
  status,
  createPayment,
  withdraw,
  rejection,
} from '../../../helpers/transport-harness.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('before an attempt', () => {
  it('ends with an AbortError during the backoff wait, sending nothing more and leaving no timer', async () => {
    vi.useFakeTimers();
    const h = harness({
      noTokens: true,
      realSleep: true,
      retry: { ...RETRY, baseDelayMs: 5000 },
      then: () => failure(503, 'NO_GATEWAY_AVAILABLE'),
    });
    const controller = new AbortController();
    const pending = h.transport.call(status(undefined, false), { signal: controller.signal });
    await vi.advanceTimersByTimeAsync(100);
    expect(h.sent).toHaveLength(1);
    controller.abort();
    const error = await rejection(pending);

    expect(error).toBeInstanceOf(AbortError);
    expect(h.sent).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('sends nothing for a signal that is already aborted', async () => {
    const h = harness();
    const error = await rejection(h.transport.call(status(), { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(AbortError);
    expect(h.sent).toHaveLength(0);
  });
});

describe('access tokens', () => {
  it('fails the call with the token answer INVALID_CREDENTIALS, sending nothing to the API', async () => {
    const h = harness({ tokenSteps: [failure(401, 'INVALID_CREDENTIALS', 'bad credentials')], then: () => success() });
    const error = await rejection(h.transport.call(status()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.code).toBe('INVALID_CREDENTIALS');
    expect(h.tokenRequests()).toHaveLength(1);
    expect(h.api()).toHaveLength(0);
  });

  it('fails an authenticated call with AuthenticationError when no token manager is wired, sending nothing', async () => {
    const h = harness({ noTokens: true });
    const error = await rejection(h.transport.call(status()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(h.sent).toHaveLength(0);
  });

  it('tells the token limiter, for each attempt, whether the service may have seen it and any Retry-After', async () => {
    const h = harness({
      noTokens: true,
      tokenSteps: [
        fetchFailed('ECONNREFUSED'),
        failure(429, 'RATE_LIMITED', 'slow', { 'retry-after': '2' }),
        success({ access_token: 'x' }),
      ],
    });
    const reports: TokenAttemptReport[] = [];
    let before = 0;
    await h.transport.call(
      { method: 'POST', path: 'auth/token', body: {}, authenticated: false, operation: 'token' },
      {},
      () => {
        before += 1;
        return (report) => void reports.push(report);
      },
    );

    expect(before).toBe(3);
    expect(reports).toEqual([
      { sent: false },
      { sent: true, status: 429, retryAfterMs: 2000 },
      { sent: true, status: 200, retryAfterMs: undefined },
    ]);
  });
});

describe('pacing', () => {
  /** A limiter that grants every slot and records what it is told. */
  function recordingLimiter(refuse?: Error) {
    const acquired: RateBucket[] = [];
    const observed: RateLimitObservation[] = [];
    const limiter: RateLimiter = {
      async acquire(_key, bucket) {
        if (refuse) throw refuse;
        acquired.push(bucket);
      },
      observe(_key, _bucket, observation) {
        observed.push(observation);
      },
    };
    return { limiter, acquired, observed };
  }

  it("takes a slot in the operation's bucket before every attempt and reports each answer back", async () => {
    const { limiter, acquired, observed } = recordingLimiter();
    const h = harness({
      noTokens: true,
      pacer: new Pacer(limiter, async () => 'k'),
      steps: [failure(503, 'NO_GATEWAY_AVAILABLE'), json(201, { status: 'success', data: {} })],
    });
    await h.transport.call(createPayment('ORDER5001', false));

    expect(acquired).toEqual(['payment', 'payment']);
    expect(observed.map((observation) => observation.status)).toEqual([503, 201]);
  });

  it("stops with the limiter's refusal before anything is sent", async () => {
    const refusal = new RateLimitError('RATE_LIMITED: no free slot', {
      code: 'RATE_LIMITED',
      retryable: true,
      retryAfter: 3,
    });
    const { limiter } = recordingLimiter(refusal);
    const h = harness({ noTokens: true, pacer: new Pacer(limiter, async () => 'k') });
    const error = await rejection(h.transport.call(withdraw('WD5001', 'withdraw', false)));
    expect(error).toBe(refusal);
    expect(h.sent).toHaveLength(0);
  });
});
