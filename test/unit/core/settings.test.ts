/**
 * One set of rules for every numeric setting: the constructor refuses with a
 * ConfigurationError, a call's options with an InvalidRequestError (before anything is sent).
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, InvalidRequestError } from '../../../src/core/errors/base.js';
import {
  DEFAULTS,
  MAX_RETRIES,
  MAX_TIMER_MS,
  millisecondsSetting,
  retriesSetting,
  signalSetting,
} from '../../../src/core/settings.js';
import { MyrGateway } from '../../../src/index.js';

const base = { baseUrl: 'https://api.gateway.example/api/v1', merchantId: 'M1', apiKey: 'sk_settings' };

describe('millisecondsSetting and retriesSetting', () => {
  it('take the fallback for undefined and a valid value as is', () => {
    expect(millisecondsSetting(undefined, DEFAULTS.timeout, 'timeout', 'call')).toBe(30_000);
    expect(millisecondsSetting(1, 30_000, 'timeout', 'call')).toBe(1);
    expect(millisecondsSetting(MAX_TIMER_MS, 30_000, 'timeout', 'call')).toBe(MAX_TIMER_MS);
    expect(millisecondsSetting(0, 60_000, 'tokenRefreshMarginMs', 'client', 0)).toBe(0);
    expect(retriesSetting(undefined, DEFAULTS.maxRetries, 'maxRetries', 'call')).toBe(3);
    expect(retriesSetting(MAX_RETRIES, 3, 'maxRetries', 'call')).toBe(10);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_TIMER_MS + 1])(
    'refuses %s milliseconds, typed by where it came from',
    (value) => {
      expect(() => millisecondsSetting(value, 30_000, 'timeout', 'call')).toThrow(
        expect.objectContaining({ name: 'InvalidRequestError', code: 'VALIDATION_ERROR', field: 'timeout' }),
      );
      expect(() => millisecondsSetting(value, 30_000, 'timeout', 'client')).toThrow(ConfigurationError);
    },
  );

  it.each([-1, 11, 2.5, Number.NaN])('refuses %s retries', (value) => {
    expect(() => retriesSetting(value, 3, 'maxRetries', 'call')).toThrow(InvalidRequestError);
    expect(() => retriesSetting(value, 3, 'maxRetries', 'client')).toThrow(
      expect.objectContaining({ field: 'maxRetries' }),
    );
  });
});

describe('signalSetting', () => {
  it('takes an AbortSignal as is, and undefined or null as none', () => {
    const signal = new AbortController().signal;
    expect(signalSetting(signal)).toBe(signal);
    expect(signalSetting(undefined)).toBeUndefined();
    expect(signalSetting(null)).toBeUndefined();
  });

  it.each(['stop', { aborted: false }, new AbortController()])(
    'refuses %o as a request error naming signal',
    (value) => {
      expect(() => signalSetting(value)).toThrow(InvalidRequestError);
      expect(() => signalSetting(value)).toThrow('signal must be an AbortSignal');
    },
  );
});

describe('through the public API', () => {
  it.each([
    ['timeout', 0],
    ['totalTimeout', -5],
    ['maxRetries', 11],
    ['tokenStoreTimeout', 1.5],
    ['tokenRefreshMarginMs', -1],
  ])('new MyrGateway refuses %s = %s with a ConfigurationError naming it', (field, value) => {
    expect(() => new MyrGateway({ ...base, [field]: value })).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', field }),
    );
  });
});
