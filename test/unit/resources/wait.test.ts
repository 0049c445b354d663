/**
 * src/resources/wait.ts on its own: polling a payment until its status is terminal, through the
 * injected `retrieve`, `sleep` and `random`. The real-time clock the wait counts against
 * (performance.now) is driven by a spy: a lookup or a pause moves it forward, no test waits.
 * Pauses start at `intervalMs`, grow by half each time up to 30 s, and are jittered by ±25%.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  InvalidRequestError,
  InvalidResponseError,
  NotFoundError,
  PaymentPendingError,
  RateLimitError,
  ServiceUnavailableError,
  TERMINAL_STATUSES,
  type PaymentStatus,
} from '../../../src/index.js';
import { type PollDeps, waitForCompletion, type WaitForCompletionOptions } from '../../../src/resources/wait.js';
import { caught } from '../../helpers/client.js';

afterEach(() => vi.restoreAllMocks());

const record = (status: string, over: Partial<PaymentStatus> = {}): PaymentStatus => ({
  payment_id: 'PAY_1',
  reference_id: 'ORDER1',
  amount: 120.5,
  currency: 'MYR',
  status,
  ...over,
});

const rateLimited = () =>
  new RateLimitError('RATE_LIMITED (HTTP 429): slow down', { code: 'RATE_LIMITED', status: 429, retryable: true });
const outage = () =>
  new ServiceUnavailableError('GATEWAY_TIMEOUT (HTTP 504): upstream', {
    code: 'GATEWAY_TIMEOUT',
    status: 504,
    retryable: true,
  });

type Step = PaymentStatus | Error;

/**
 * Deps answering lookups from `script` in order (its last step repeats), recording every lookup
 * and pause. The clock moves by `lookupMs` per lookup and by each pause asked for.
 */
function poller(
  script: Step[],
  opts: { random?: number | number[]; lookupMs?: number; sleep?: PollDeps['sleep'] } = {},
) {
  let now = 50_000;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
  const lookups: { identifier: string; options: { signal?: AbortSignal; totalTimeout: number } }[] = [];
  const pauses: number[] = [];
  const randoms = Array.isArray(opts.random) ? [...opts.random] : undefined;
  const deps: PollDeps = {
    retrieve: async (identifier, options) => {
      lookups.push({ identifier, options });
      now += opts.lookupMs ?? 0;
      const step = script[Math.min(lookups.length, script.length) - 1];
      if (step === undefined) throw new Error('empty script');
      if (step instanceof Error) throw step;
      return step;
    },
    sleep:
      opts.sleep ??
      (async (ms, signal) => {
        pauses.push(ms);
        if (signal?.aborted) throw signal.reason;
        now += ms;
      }),
    random: () =>
      randoms ? (randoms.length > 1 ? randoms.shift()! : randoms[0]!) : ((opts.random as number | undefined) ?? 0.5),
  };
  return { deps, lookups, pauses };
}

/** `n` open records, then one SUCCESS. */
const openThenSuccess = (n: number): Step[] => [
  ...Array.from({ length: n }, () => record('PROCESSING')),
  record('SUCCESS'),
];

describe('waitForCompletion: the lookups', () => {
  it.each(TERMINAL_STATUSES)('returns the %s record of the first lookup without pausing', async (status) => {
    const terminal = record(status);
    const { deps, lookups, pauses } = poller([terminal]);
    await expect(waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000 })).resolves.toBe(terminal);
    expect(lookups).toHaveLength(1);
    expect(pauses).toEqual([]);
  });

  it('keeps polling through PENDING, PROCESSING and a status it does not know, and returns the first terminal record', async () => {
    const done = record('FAILED');
    const { deps, lookups, pauses } = poller([
      record('PENDING'),
      record('PROCESSING'),
      record('ON_HOLD'),
      done,
      record('REFUNDED'),
    ]);
    await expect(waitForCompletion(deps, 'PAY_1', { timeoutMs: 600_000 })).resolves.toBe(done);
    expect(lookups).toHaveLength(4);
    expect(pauses).toHaveLength(3);
  });

  it('looks up the identifier it was given, with the signal and the time left as the lookup total timeout', async () => {
    const controller = new AbortController();
    const { deps, lookups } = poller(openThenSuccess(2), { random: 0.5 });
    await waitForCompletion(deps, 'PAY_1', { timeoutMs: 60_000, intervalMs: 1000, signal: controller.signal });
    // Pauses of 1000 and 1500 ms (no jitter at random 0.5) come off the 60 s the wait was given.
    expect(lookups.map((l) => l.identifier)).toEqual(['PAY_1', 'PAY_1', 'PAY_1']);
    expect(lookups.map((l) => l.options.totalTimeout)).toEqual([60_000, 59_000, 57_500]);
    expect(lookups.every((l) => l.options.signal === controller.signal)).toBe(true);
  });

  it('passes no signal to a lookup when the caller gave none', async () => {
    const { deps, lookups } = poller([record('SUCCESS')]);
    await waitForCompletion(deps, 'PAY_1', { timeoutMs: 5000 });
    expect(lookups[0]?.options).toEqual({ totalTimeout: 5000 });
  });

  it('counts the time slow lookups take against timeoutMs, not only the pauses', async () => {
    // Each lookup takes 3 s: 0-3 s lookup, pause 1 s, 4-7 s lookup, pause 1.5 s, 8.5-11.5 s lookup: over 10 s.
    const { deps, lookups, pauses } = poller([record('PROCESSING')], { lookupMs: 3000, random: 0.5 });
    const error = await caught(waitForCompletion(deps, 'ORDER1', { timeoutMs: 10_000, intervalMs: 1000 }));
    expect(error).toBeInstanceOf(PaymentPendingError);
    expect(lookups.map((l) => l.options.totalTimeout)).toEqual([10_000, 6000, 1500]);
    expect(pauses).toEqual([1000, 1500]);
  });

  it('a lookup that fails retryably (rate limit, outage) is followed by the next one', async () => {
    const done = record('SUCCESS');
    const { deps, lookups, pauses } = poller([rateLimited(), outage(), done]);
    await expect(waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000 })).resolves.toBe(done);
    expect(lookups).toHaveLength(3);
    expect(pauses).toHaveLength(2);
  });

  it.each([
    [
      'a NotFoundError',
      () => new NotFoundError('NOT_FOUND (HTTP 404): no such payment', { code: 'NOT_FOUND', status: 404 }),
    ],
    [
      'an InvalidResponseError',
      () => new InvalidResponseError('INVALID_RESPONSE: malformed', { code: 'INVALID_RESPONSE' }),
    ],
    [
      'an AbortError from the lookup',
      () => new AbortError('ABORTED: the call was aborted by its signal', { code: 'ABORTED' }),
    ],
    ['an error that is not the SDK’s', () => new TypeError('a bug in a hook')],
  ])('throws %s at once, without pausing or looking up again', async (_label, make) => {
    const failure = make();
    const { deps, lookups, pauses } = poller([failure, record('SUCCESS')]);
    await expect(waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000 })).rejects.toBe(failure);
    expect(lookups).toHaveLength(1);
    expect(pauses).toEqual([]);
  });
});

describe('waitForCompletion: the pauses', () => {
  it('grows each pause by half from intervalMs (2 s by default) and caps it at 30 s', async () => {
    const { deps, pauses } = poller(openThenSuccess(9), { random: 0.5 });
    await waitForCompletion(deps, 'ORDER1', { timeoutMs: 600_000 });
    // 2000 × 1.5^n, rounded: 15187.5 → 15188, 22781.25 → 22781, then 34171.875 is capped at 30 s.
    expect(pauses).toEqual([2000, 3000, 4500, 6750, 10_125, 15_188, 22_781, 30_000, 30_000]);
  });

  it.each([
    [1000, [1000, 1500, 2250, 3375]],
    [10_000, [10_000, 15_000, 22_500, 30_000]],
    [40_000, [30_000, 30_000, 30_000, 30_000]],
  ])('from intervalMs %i the pauses are %j', async (intervalMs, expected) => {
    const { deps, pauses } = poller(openThenSuccess(4), { random: 0.5 });
    await waitForCompletion(deps, 'ORDER1', { timeoutMs: 600_000, intervalMs });
    expect(pauses).toEqual(expected);
  });

  it.each([
    [0, 1500],
    [0.25, 1750],
    [0.5, 2000],
    [0.75, 2250],
    [0.999_999, 2500],
  ])('jitter with random %d makes the first 2 s pause %i ms (within ±25%)', async (random, pause) => {
    const { deps, pauses } = poller(openThenSuccess(1), { random });
    await waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000, intervalMs: 2000 });
    expect(pauses).toEqual([pause]);
    expect(pause).toBeGreaterThanOrEqual(2000 * 0.75);
    expect(pause).toBeLessThanOrEqual(2000 * 1.25);
  });

  it('jitter spreads each pause but does not compound into the growth', async () => {
    // The interval grows 2000 → 3000 → 4500 whatever the jitter drew: 0.75×, 1.25×, 0.75× of those.
    const { deps, pauses } = poller(openThenSuccess(3), { random: [0, 0.999_999, 0] });
    await waitForCompletion(deps, 'ORDER1', { timeoutMs: 600_000, intervalMs: 2000 });
    expect(pauses).toEqual([1500, 3750, 3375]);
  });

  it.each([
    [0, 22_500],
    [0.999_999, 30_000],
  ])('at the 30 s cap, jitter with random %d gives %i ms: never above the cap', async (random, pause) => {
    const { deps, pauses } = poller(openThenSuccess(2), { random });
    await waitForCompletion(deps, 'ORDER1', { timeoutMs: 600_000, intervalMs: 30_000 });
    expect(pauses).toEqual([pause, pause]);
  });
});

describe('waitForCompletion: timeout', () => {
  it('gives up with PaymentPendingError, carrying the last status, before a pause that would end past timeoutMs', async () => {
    const open = record('PROCESSING');
    const { deps, lookups, pauses } = poller([open], { random: 0.5 });
    const error = await caught(waitForCompletion(deps, 'ORDER1', { timeoutMs: 10_000, intervalMs: 2000 }));
    // 2000 + 3000 + 4500 = 9500 ms paused; the next pause (6750) would end past 10 s, so it is not taken.
    expect(pauses).toEqual([2000, 3000, 4500]);
    expect(lookups).toHaveLength(4);
    expect(error).toBeInstanceOf(PaymentPendingError);
    expect(error).toMatchObject({
      code: 'PAYMENT_PENDING',
      retryable: true,
      identifier: 'ORDER1',
      referenceId: 'ORDER1',
    });
    expect(error.lastStatus).toBe(open);
    expect(error.message).toContain('within 10000 ms');
    expect(error.message).toContain('last status PROCESSING');
    expect(error.message).toContain('callback');
  });

  it.each([1, 999, 5000, 45_000, 120_000])(
    'never pauses past timeoutMs %i ms, and still looks up at least once',
    async (timeoutMs) => {
      const { deps, lookups, pauses } = poller([record('PENDING')], { random: 0.999_999 });
      await expect(waitForCompletion(deps, 'ORDER1', { timeoutMs })).rejects.toBeInstanceOf(PaymentPendingError);
      expect(lookups.length).toBeGreaterThanOrEqual(1);
      expect(pauses.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(timeoutMs);
      expect(lookups.every((l) => Number.isInteger(l.options.totalTimeout) && l.options.totalTimeout >= 1)).toBe(true);
    },
  );

  it('when no lookup answered, says so and carries the last failure as the cause', async () => {
    const failure = rateLimited();
    const { deps, lookups } = poller([failure], { random: 0.5 });
    // 0 s lookup, pause 2000, lookup; the next pause (3000) would reach 5 s.
    const error = await caught(waitForCompletion(deps, 'ORDER1', { timeoutMs: 5000, intervalMs: 2000 }));
    expect(lookups).toHaveLength(2);
    expect(error).toBeInstanceOf(PaymentPendingError);
    expect(error.lastStatus).toBeUndefined();
    expect(error.referenceId).toBeUndefined();
    expect(error.cause).toBe(failure);
    expect(error.message).toContain('no lookup answered');
  });

  it('keeps the last status seen when later lookups fail, with the latest failure as the cause', async () => {
    const open = record('PENDING');
    const failure = outage();
    const { deps } = poller([open, failure], { random: 0.5 });
    const error = await caught(waitForCompletion(deps, 'ORDER1', { timeoutMs: 10_000, intervalMs: 2000 }));
    expect(error).toMatchObject({ name: 'PaymentPendingError', lastStatus: open });
    expect(error.cause).toBe(failure);
  });

  it('a status answered after a failure clears that failure from the cause', async () => {
    const open = record('PROCESSING');
    const { deps } = poller([outage(), open], { random: 0.5 });
    const error = await caught(waitForCompletion(deps, 'ORDER1', { timeoutMs: 10_000, intervalMs: 2000 }));
    expect(error).toMatchObject({ name: 'PaymentPendingError', lastStatus: open });
    expect(error.cause).toBeUndefined();
  });
});

describe('waitForCompletion: abort', () => {
  it('a signal aborted before the wait starts ends it with AbortError before any lookup', async () => {
    const { deps, lookups } = poller([record('SUCCESS')]);
    const error = await caught(waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000, signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error.code).toBe('ABORTED');
    expect(lookups).toHaveLength(0);
  });

  it('an abort during a pause ends the wait with AbortError, whatever reason the sleep rejected with', async () => {
    const controller = new AbortController();
    const sleep = (_ms: number, signal?: AbortSignal) => {
      controller.abort(new Error('merchant gave up'));
      return Promise.reject(signal?.reason as Error);
    };
    const { deps, lookups } = poller([record('PROCESSING')], { sleep });
    const error = await caught(waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000, signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error.message).toMatch(/^ABORTED: waitForCompletion was aborted/);
    expect(lookups).toHaveLength(1);
  });

  it('starts no lookup after an abort, even when the sleep it was given ignores the signal', async () => {
    const controller = new AbortController();
    const { deps, lookups } = poller([record('PROCESSING')], { sleep: async () => undefined });
    const retrieve = deps.retrieve.bind(deps);
    deps.retrieve = async (identifier, options) => {
      const answer = await retrieve(identifier, options);
      controller.abort();
      return answer;
    };
    await expect(
      waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000, signal: controller.signal }),
    ).rejects.toBeInstanceOf(AbortError);
    expect(lookups).toHaveLength(1);
  });

  it('gives the pause the caller’s signal, so a real sleep can stop early', async () => {
    const controller = new AbortController();
    const signals: (AbortSignal | undefined)[] = [];
    const { deps } = poller(openThenSuccess(1), {
      sleep: async (_ms, signal) => {
        signals.push(signal);
      },
    });
    await waitForCompletion(deps, 'ORDER1', { timeoutMs: 60_000, signal: controller.signal });
    expect(signals).toEqual([controller.signal]);
  });
});

describe('waitForCompletion: options', () => {
  it.each<[string, unknown, string]>([
    ['timeoutMs missing', {}, 'timeoutMs'],
    ['timeoutMs 0', { timeoutMs: 0 }, 'timeoutMs'],
    ['timeoutMs negative', { timeoutMs: -1 }, 'timeoutMs'],
    ['timeoutMs fractional', { timeoutMs: 1.5 }, 'timeoutMs'],
    ['timeoutMs NaN', { timeoutMs: Number.NaN }, 'timeoutMs'],
    ['timeoutMs infinite', { timeoutMs: Number.POSITIVE_INFINITY }, 'timeoutMs'],
    ['timeoutMs beyond a timer', { timeoutMs: 2 ** 31 }, 'timeoutMs'],
    ['timeoutMs as a string', { timeoutMs: '60000' }, 'timeoutMs'],
    ['intervalMs 0', { timeoutMs: 60_000, intervalMs: 0 }, 'intervalMs'],
    ['intervalMs negative', { timeoutMs: 60_000, intervalMs: -5 }, 'intervalMs'],
    ['intervalMs fractional', { timeoutMs: 60_000, intervalMs: 2.5 }, 'intervalMs'],
    ['no options at all', undefined, 'timeoutMs'],
  ])('refuses %s with an InvalidRequestError naming the field, before any lookup', async (_label, options, field) => {
    const { deps, lookups } = poller([record('SUCCESS')]);
    const error = await caught(waitForCompletion(deps, 'ORDER1', options as WaitForCompletionOptions));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field });
    expect(lookups).toHaveLength(0);
  });
});
