/** The one range rule of every millisecond option: a whole number a Node timer can hold. */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors/base.js';
import { isMilliseconds, MAX_TIMER_MS, milliseconds } from '../../../src/core/milliseconds.js';

describe('isMilliseconds', () => {
  it.each([
    [1, true],
    [MAX_TIMER_MS, true],
    [0, false],
    [MAX_TIMER_MS + 1, false], // Node fires a longer timer after 1 ms
    [3e9, false],
    [2.5, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
    ['1000', false],
    [null, false],
  ])('%s → %s', (value, expected) => expect(isMilliseconds(value)).toBe(expected));

  it('takes a narrower range when an option has one', () => {
    expect(isMilliseconds(60_000, 1, 60_000)).toBe(true);
    expect(isMilliseconds(60_001, 1, 60_000)).toBe(false);
    expect(isMilliseconds(0, 0)).toBe(true);
  });
});

describe('milliseconds', () => {
  it('answers the value when it is in range', () => expect(milliseconds(4000, 'inFlightTtlMs')).toBe(4000));

  it('refuses anything else with a ConfigurationError naming the option and the range', () => {
    let caught: unknown;
    try {
      milliseconds(3e9, 'handlerTimeoutMs');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect(caught).toMatchObject({
      field: 'handlerTimeoutMs',
      message: 'handlerTimeoutMs must be a whole number of milliseconds from 1 to 2147483647',
    });
  });
});
