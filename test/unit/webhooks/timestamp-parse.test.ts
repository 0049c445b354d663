/**
 * src/webhooks/timestamp-parse.ts on its own: the strict ISO 8601 reader of the callback
 * `timestamp`. It must agree with the calendar (Date.UTC is the oracle here) on every form it
 * accepts, read a missing zone as UTC (the spec's timestamp is UTC), and answer NaN for
 * everything `Date.parse` would guess at (Feb 30, 24:00, leap seconds, free text).
 */
import { describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../../src/webhooks/timestamp-parse.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;

describe('parseTimestamp: accepted forms', () => {
  it.each([
    ['2026-03-01T10:00:00.000Z', Date.UTC(2026, 2, 1, 10, 0, 0, 0)],
    ['2026-03-01T10:00:00Z', Date.UTC(2026, 2, 1, 10)],
    ['2026-03-01t10:00:00z', Date.UTC(2026, 2, 1, 10)],
    ['2026-03-01 10:00:00Z', Date.UTC(2026, 2, 1, 10)],
    ['2026-12-31T23:59:59.999Z', Date.UTC(2026, 11, 31, 23, 59, 59, 999)],
    ['1970-01-01T00:00:00Z', 0],
    ['1969-12-31T23:59:59.5Z', -500],
  ])('reads %s', (text, expected) => {
    expect(parseTimestamp(text)).toBe(expected);
  });

  it.each([
    ['2026-03-01T10:00:00', 'no zone'],
    ['2026-03-01T10:00:00.123456', 'no zone, microseconds (Python utcnow().isoformat())'],
    ['2026-03-01 10:00:00', 'a space and no zone'],
  ])('reads %s (%s) as UTC', (text) => {
    const withZ = `${text.replace(' ', 'T')}Z`;
    expect(parseTimestamp(text)).toBe(parseTimestamp(withZ));
    expect(parseTimestamp(text)).toBe(Date.parse(withZ));
  });

  it.each([
    ['.1', 100],
    ['.12', 120],
    ['.123', 123],
    ['.1239', 123],
    ['.999999', 999],
    ['.123456789', 123],
  ])('reads the fraction %s as %d ms (truncated past milliseconds, up to nanoseconds)', (fraction, ms) => {
    expect(parseTimestamp(`2026-03-01T10:00:00${fraction}Z`)).toBe(Date.UTC(2026, 2, 1, 10) + ms);
  });

  it.each([
    ['+08:00', -8 * HOUR],
    ['+0800', -8 * HOUR],
    ['+08', -8 * HOUR],
    ['-05:30', 5 * HOUR + 30 * MINUTE],
    ['-0530', 5 * HOUR + 30 * MINUTE],
    ['+00:00', 0],
    ['-00:00', 0],
    ['+23:59', -(23 * HOUR + 59 * MINUTE)],
  ])('applies the offset %s', (zone, shift) => {
    expect(parseTimestamp(`2026-03-01T10:00:00${zone}`)).toBe(Date.UTC(2026, 2, 1, 10) + shift);
  });

  it('names the same instant in Kuala Lumpur time and in UTC', () => {
    expect(parseTimestamp('2026-03-01T18:00:00.000+08:00')).toBe(parseTimestamp('2026-03-01T10:00:00.000Z'));
  });

  it.each([
    ['2024-02-29', 'a leap year'],
    ['2000-02-29', 'a century divisible by 400'],
    ['2026-04-30', 'the last day of a 30-day month'],
    ['2026-01-31', 'the last day of a 31-day month'],
  ])('accepts %s (%s)', (date) => {
    const [y, m, d] = date.split('-').map(Number) as [number, number, number];
    expect(parseTimestamp(`${date}T00:00:00Z`)).toBe(Date.UTC(y, m - 1, d));
  });

  it('agrees with the calendar on the first and last day of every month from 1899 to 2101', () => {
    for (let year = 1899; year <= 2101; year++) {
      for (let month = 1; month <= 12; month++) {
        const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
        for (const day of [1, last]) {
          const text = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T12:34:56.789Z`;
          const expected = Date.UTC(year, month - 1, day, 12, 34, 56, 789);
          if (parseTimestamp(text) !== expected) expect.fail(`${text}: ${parseTimestamp(text)} !== ${expected}`);
        }
      }
    }
  });

  // Day numbers from Python's datetime (date.toordinal() - date(1970, 1, 1).toordinal()), not
  // from JavaScript's calendar: the leap rules at 1600, 1900, 2000, 2100 and 2400, the days on
  // each side of a leap day, and the ends of the range.
  it.each([
    ['0000-01-01', -719_528],
    ['0000-02-29', -719_469],
    ['0000-03-01', -719_468],
    ['0001-01-01', -719_162],
    ['1600-02-29', -135_081],
    ['1600-03-01', -135_080],
    ['1899-12-31', -25_568],
    ['1900-02-28', -25_509],
    ['1900-03-01', -25_508],
    ['1969-12-31', -1],
    ['1970-01-01', 0],
    ['1972-02-29', 789],
    ['1999-12-31', 10_956],
    ['2000-02-29', 11_016],
    ['2000-03-01', 11_017],
    ['2024-02-29', 19_782],
    ['2026-11-26', 20_783],
    ['2100-02-28', 47_540],
    ['2100-03-01', 47_541],
    ['2400-02-29', 157_113],
    ['2400-12-31', 157_419],
    ['9999-12-31', 2_932_896],
  ])('counts %s as day %d since 1970-01-01', (date, days) => {
    expect(parseTimestamp(`${date}T00:00:00Z`)).toBe(days * 86_400_000);
    expect(parseTimestamp(`${date}T23:59:59.999Z`)).toBe((days + 1) * 86_400_000 - 1);
  });

  it('agrees with the calendar on every day from 1600 to 2400, and refuses the day after each month ends', () => {
    for (let year = 1600; year <= 2400; year++) {
      for (let month = 1; month <= 12; month++) {
        const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
        const prefix = `${year}-${String(month).padStart(2, '0')}-`;
        for (let day = 1; day <= last; day++) {
          const text = `${prefix}${String(day).padStart(2, '0')}T00:00:00Z`;
          if (parseTimestamp(text) !== Date.UTC(year, month - 1, day))
            expect.fail(`${text}: ${parseTimestamp(text)} !== ${Date.UTC(year, month - 1, day)}`);
        }
        const after = `${prefix}${last + 1}T00:00:00Z`;
        if (!Number.isNaN(parseTimestamp(after))) expect.fail(`${after} was accepted`);
      }
    }
  });

  it('agrees with the calendar on the years 0 to 99 and 9900 to 9999, leap days included', () => {
    // Date.UTC reads the years 0 to 99 as 1900 to 1999; setUTCFullYear does not.
    const calendar = (year: number, month: number, day: number) => new Date(0).setUTCFullYear(year, month - 1, day);
    for (const year of [
      ...Array.from({ length: 100 }, (_, i) => i),
      ...Array.from({ length: 100 }, (_, i) => 9900 + i),
    ]) {
      const leap = new Date(calendar(year, 2, 29)).getUTCMonth() === 1;
      for (let month = 1; month <= 12; month++) {
        for (const day of [1, 28, 29, 30, 31]) {
          const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T06:07:08.009Z`;
          const exists = new Date(calendar(year, month, day)).getUTCDate() === day;
          const expected = exists ? calendar(year, month, day) + 6 * HOUR + 7 * MINUTE + 8009 : Number.NaN;
          if (!Object.is(parseTimestamp(text), expected))
            expect.fail(`${text}: ${parseTimestamp(text)} !== ${expected}`);
        }
      }
      expect(Number.isNaN(parseTimestamp(`${String(year).padStart(4, '0')}-02-29T00:00:00Z`))).toBe(!leap);
    }
  });

  it('reads the extremes of four-digit years', () => {
    expect(parseTimestamp('0000-01-01T00:00:00Z')).toBe(Date.parse('0000-01-01T00:00:00Z'));
    expect(parseTimestamp('9999-12-31T23:59:59.999Z')).toBe(Date.parse('9999-12-31T23:59:59.999Z'));
  });
});

describe('parseTimestamp: refused forms answer NaN', () => {
  it.each([
    ['', 'empty'],
    ['2026-03-01', 'a date alone'],
    ['2026-03-01T10:00Z', 'no seconds'],
    ['2026-03-01T10:00:0Z', 'one seconds digit'],
    ['20260301T100000Z', 'the basic (compact) form'],
    ['2026/03/01T10:00:00Z', 'slashes'],
    ['2026-03-01X10:00:00Z', 'another date-time separator'],
    ['2026-3-01T10:00:00Z', 'a one-digit month'],
    ['+2026-03-01T10:00:00Z', 'a signed year'],
    ['02026-03-01T10:00:00Z', 'a five-digit year'],
    ['2026-00-01T10:00:00Z', 'month 00'],
    ['2026-13-01T10:00:00Z', 'month 13'],
    ['2026-03-00T10:00:00Z', 'day 00'],
    ['2026-03-32T10:00:00Z', 'day 32'],
    ['2026-04-31T10:00:00Z', 'April 31'],
    ['2026-02-30T10:00:00Z', 'Feb 30'],
    ['2023-02-29T10:00:00Z', 'Feb 29 of a common year'],
    ['1900-02-29T10:00:00Z', 'Feb 29 of a century not divisible by 400'],
    ['2100-02-29T10:00:00Z', 'Feb 29 of 2100'],
    ['2026-03-01T24:00:00Z', 'hour 24'],
    ['2026-03-01T10:60:00Z', 'minute 60'],
    ['2016-12-31T23:59:60Z', 'a leap second'],
    ['2026-03-01T10:00:00.Z', 'a dot with no fraction digits'],
    ['2026-03-01T10:00:00.1234567891Z', 'more than nine fraction digits'],
    ['2026-03-01T10:00:00,5Z', 'a comma fraction'],
    ['2026-03-01T10:00:00ZZ', 'text after Z'],
    ['2026-03-01T10:00:00Z ', 'a trailing space'],
    [' 2026-03-01T10:00:00Z', 'a leading space'],
    ['2026-03-01T10:00:00UTC', 'a zone name'],
    ['2026-03-01T10:00:00+24:00', 'offset hour 24'],
    ['2026-03-01T10:00:00+05:60', 'offset minute 60'],
    ['2026-03-01T10:00:00+5:00', 'a one-digit offset hour'],
    ['2026-03-01T10:00:00+05:0', 'a one-digit offset minute'],
    ['2026-03-01T10:00:00+05-00', 'an offset with a wrong separator'],
    ['2026-03-01T10:00:00+050', 'a three-digit offset'],
    ['2026-03-01T10:00:00+05:00:00', 'an offset with seconds'],
    ['2026-0a-01T10:00:00Z', 'a letter for a digit'],
    ['2026-03-01T1 :00:00Z', 'a space for a digit'],
    ['\u0662\u0660\u0662\u0666-03-01T10:00:00Z', 'Arabic-Indic digits'],
    ['\uFF12\uFF10\uFF12\uFF16-03-01T10:00:00Z', 'full-width digits'],
    ['Sun, 01 Mar 2026 10:00:00 GMT', 'an HTTP date (Date.parse reads it)'],
    ['1772359200000', 'epoch milliseconds'],
    [`2026-03-01T10:00:00.${'0'.repeat(30)}Z`, 'a string longer than any valid form'],
  ])('%j (%s)', (text) => {
    expect(parseTimestamp(text)).toBeNaN();
  });
});
