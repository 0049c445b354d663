// The doctor's rules that need no network, as tables: configuration, callback URL, clock skew.
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import {
  checkCallbackUrl,
  checkClockSkew,
  MAX_CLOCK_SKEW_MS,
  readConfiguration,
  tokenRateLimitHint,
} from '../../../src/doctor/checks.js';

describe('readConfiguration', () => {
  it.each([
    [
      'a merchant id with spaces around it',
      { MYR_GATEWAY_MERCHANT_ID: ' M1 ' },
      /merchantId \(from MYR_GATEWAY_MERCHANT_ID\) has whitespace at its start and end/,
    ],
    [
      'an api key with a trailing newline',
      { MYR_GATEWAY_API_KEY: 'sk_live_k\n' },
      /apiKey \(from MYR_GATEWAY_API_KEY\) has whitespace at its end \(a line break/,
    ],
    [
      'a plain http base URL off loopback',
      { MYR_GATEWAY_BASE_URL: 'http://g.example/api/v1' },
      /baseUrl \(from MYR_GATEWAY_BASE_URL\) must use https/,
    ],
  ])('%s is refused as the client refuses it, never echoing the key', (_what, spoiled, message) => {
    const read = readConfiguration({ ...full, ...spoiled });
    expect('invalid' in read && read.invalid).toBeInstanceOf(ConfigurationError);
    expect('invalid' in read && read.invalid.message).toMatch(message);
    expect(JSON.stringify('invalid' in read && read.invalid.toJSON())).not.toContain('sk_live_k');
  });

  const full = {
    MYR_GATEWAY_BASE_URL: 'https://g.example/api/v1',
    MYR_GATEWAY_MERCHANT_ID: 'M1',
    MYR_GATEWAY_API_KEY: 'sk_live_k',
  };
  it.each([
    [{}, ['MYR_GATEWAY_BASE_URL', 'MYR_GATEWAY_MERCHANT_ID', 'MYR_GATEWAY_API_KEY']],
    [{ ...full, MYR_GATEWAY_API_KEY: '  ' }, ['MYR_GATEWAY_API_KEY']],
    [{ ...full, MYR_GATEWAY_MERCHANT_ID: undefined }, ['MYR_GATEWAY_MERCHANT_ID']],
  ])('%o is missing %o', (env, missing) => {
    expect(readConfiguration(env)).toEqual({ missing });
  });

  it('reads the four variables as the client does, the callback URL optional', () => {
    expect(readConfiguration(full)).toEqual({
      configuration: {
        baseUrl: 'https://g.example/api/v1/',
        merchantId: 'M1',
        apiKey: 'sk_live_k',
        callbackUrl: undefined,
      },
    });
    expect(readConfiguration({ ...full, MYR_GATEWAY_CALLBACK_URL: 'https://shop.example/cb' })).toMatchObject({
      configuration: { callbackUrl: 'https://shop.example/cb' },
    });
  });
});

describe('checkCallbackUrl', () => {
  it.each([
    [undefined, 'skip'],
    ['https://shop.example/webhooks/myr', 'ok'],
    ['http://127.0.0.1:3000/webhooks/myr', 'warn'],
    ['http://localhost:3000/webhooks/myr', 'warn'],
    ['http://[::1]:3000/webhooks/myr', 'warn'],
    ['http://shop.example/webhooks/myr', 'fail'],
    ['http://127.0.0.1.shop.example/webhooks/myr', 'fail'],
    ['ftp://shop.example/cb', 'fail'],
    ['/webhooks/myr', 'fail'],
  ] as const)('%s: %s', (url, outcome) => {
    expect(checkCallbackUrl(url).outcome).toBe(outcome);
  });

  it('never prints the user info or the query of the URL', () => {
    const { detail } = checkCallbackUrl('https://user:pa55@shop.example/cb?token=s3cret');
    expect(detail).toBe('https://shop.example/cb is https');
  });
});

describe('checkClockSkew', () => {
  const service = 'Tue, 24 Nov 2026 03:00:00 GMT';
  const at = Date.parse(service);
  it.each([
    [0, 'ok'],
    [MAX_CLOCK_SKEW_MS, 'ok'],
    [-MAX_CLOCK_SKEW_MS, 'ok'],
    [MAX_CLOCK_SKEW_MS + 1000, 'warn'],
    [-(MAX_CLOCK_SKEW_MS + 1000), 'warn'],
    [10 * 60_000, 'warn'],
  ])('local clock %i ms off: %s', (offset, outcome) => {
    expect(checkClockSkew(service, at + offset).outcome).toBe(outcome);
  });

  it('says which way the clock is off, in seconds', () => {
    expect(checkClockSkew(service, at - 90_000).detail).toMatch(/^local clock is 90 s behind the service's/);
    expect(checkClockSkew(service, at + 90_000).detail).toMatch(/^local clock is 90 s ahead of the service's/);
  });

  it.each([undefined, 'not a date'])('warns when the Date header is %s', (header) => {
    expect(checkClockSkew(header, at)).toMatchObject({
      outcome: 'warn',
      detail: expect.stringMatching(/no usable Date header/),
    });
  });
});

describe('tokenRateLimitHint', () => {
  it.each([
    [42, '; the service allows 5 token requests a minute: retry in 42 s'],
    [0.2, '; the service allows 5 token requests a minute: retry in 1 s'],
    [undefined, '; the service allows 5 token requests a minute: retry in a minute'],
    [Number.NaN, '; the service allows 5 token requests a minute: retry in a minute'],
    [-3, '; the service allows 5 token requests a minute: retry in a minute'],
  ])('Retry-After %s → %s', (seconds, hint) => {
    expect(tokenRateLimitHint(seconds)).toBe(hint);
  });
});
