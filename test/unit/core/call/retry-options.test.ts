/**
 * src/core/call/retry-options.ts on its own: the defaults, and the refusal of settings that would make
 * the backoff meaningless.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MyrGateway } from '../../../../src/index.js';
import { resolveRetryOptions } from '../../../../src/core/call/retry-options.js';

describe('resolveRetryOptions', () => {
  it("fills in the spec's guidance: 3 retries, 1 s doubling, up to 1 s jitter", () => {
    expect(resolveRetryOptions(undefined)).toEqual({
      maxRetries: 3,
      baseDelayMs: 1000,
      jitterMs: 1000,
      maxDelayMs: 60_000,
    });
    expect(resolveRetryOptions({ baseDelayMs: 0, jitterMs: 0 })).toMatchObject({
      baseDelayMs: 0,
      jitterMs: 0,
      maxDelayMs: 60_000,
    });
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
    // The one millisecond rule (core/milliseconds.ts): whole milliseconds, as every other option.
    { baseDelayMs: 1.5 },
    { jitterMs: 0.25 },
    { maxDelayMs: 59_999.5 },
  ])('refuses %j with a ConfigurationError naming the field', (options) => {
    const field = Object.keys(options)[0];
    expect(() => resolveRetryOptions(options)).toThrow(expect.objectContaining({ name: 'ConfigurationError', field }));
  });

  it('refuses a nonsense retry setting when the client is built, before any request', () => {
    const build = () =>
      new MyrGateway({
        baseUrl: 'https://pg.example.com',
        merchantId: 'M1',
        apiKey: 'sk_test_1',
        retry: { baseDelayMs: Number.NaN },
      });
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(/baseDelayMs/);
  });
});
