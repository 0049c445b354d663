/**
 * src/core/retry.ts on its own: the Retry-After forms the service and proxies send, the defaults and the refusal of settings that would
 * make the backoff meaningless, and the abortable sleep.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MyrGateway } from '../../../src/index.js';
import { parseRetryAfter, resolveRetryOptions, sleep } from '../../../src/core/retry.js';

const NOW = Date.parse('2026-03-01T10:00:00.000Z');

describe('parseRetryAfter', () => {
  it.each([
    ['60', 60_000],
    ['0', 0],
    [' 5 ', 5_000],
    ['1.5', 1_500],
    ['Sun, 01 Mar 2026 10:00:30 GMT', 30_000],
  ])('reads %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it('reads an HTTP date in the past as "now", never a negative wait', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 09:59:00 GMT', NOW)).toBe(0);
  });

  it.each([null, undefined, '', '   ', '-5', 'soon', '1e3', '0x10'])('has no delay for %j', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});

describe('resolveRetryOptions', () => {
  it("fills in the spec's guidance: 3 retries, 1 s doubling, up to 1 s jitter", () => {
    expect(resolveRetryOptions(undefined)).toEqual({ maxRetries: 3, baseDelayMs: 1000, jitterMs: 1000, maxDelayMs: 60_000 });
    expect(resolveRetryOptions({ baseDelayMs: 0, jitterMs: 0 })).toMatchObject({ baseDelayMs: 0, jitterMs: 0, maxDelayMs: 60_000 });
  });

  it.each([
    { baseDelayMs: -1 },
    { baseDelayMs: Number.NaN },
    { jitterMs: -5 },
    { jitterMs: Number.POSITIVE_INFINITY },
    { maxDelayMs: 0 },
    { maxDelayMs: Number.NaN },
    { maxDelayMs: 2 ** 31 },
    { maxRetries: 1.5 },
    { maxRetries: -1 },
    { baseDelayMs: '1000' as unknown as number },
  ])('refuses %j with a ConfigurationError naming the field', (options) => {
    const field = Object.keys(options)[0];
    expect(() => resolveRetryOptions(options)).toThrow(expect.objectContaining({ name: 'ConfigurationError', field }));
  });

  it('refuses a nonsense retry setting when the client is built, before any request', () => {
    const build = () =>
      new MyrGateway({ baseUrl: 'https://pg.example.com', merchantId: 'M1', apiKey: 'sk_test_1', retry: { baseDelayMs: Number.NaN } });
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(/baseDelayMs/);
  });
});

describe('sleep', () => {
  it('resolves after the delay when nothing aborts it', async () => {
    await expect(sleep(0)).resolves.toBeUndefined();
  });

  it("rejects at once with the signal's reason when already aborted", async () => {
    const reason = new Error('stop');
    await expect(sleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('rejects as soon as the signal aborts, leaving no timer behind', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});
