/**
 * The callback `timestamp`, read on every callback: a strict ISO 8601 parser with no regex
 * and no Date object (the calendar's arithmetic is `Date.UTC`'s).
 *
 * @module
 */

/** Two or four ASCII digits at `at`, or -1. */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = 0; i < count; i++) {
    const digit = text.charCodeAt(at + i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * ISO 8601 date-time (`YYYY-MM-DD(T|t| )HH:MM:SS[.fraction][Z|z|±hh:mm|±hhmm|±hh]`) to
 * milliseconds since the epoch; NaN for anything else. A missing zone means UTC: the spec
 * says the timestamp is UTC, and a sender that leaves the `Z` off (Python's
 * `utcnow().isoformat()`) must not lose its callbacks. The timestamp is signed, so leniency
 * in its spelling gives an attacker nothing. `Date.parse` would accept `Feb 30`, `24:00` and
 * free text. Hand-rolled because it runs on every callback: no regex, no Date object.
 */
export function parseTimestamp(text: string): number {
  const length = text.length;
  if (length < 19 || length > 40) return Number.NaN;
  const separator = text.charCodeAt(10);
  if (
    text.charCodeAt(4) !== 45 /* - */ ||
    text.charCodeAt(7) !== 45 ||
    (separator !== 84 /* T */ && separator !== 116 /* t */ && separator !== 32) /* space */ ||
    text.charCodeAt(13) !== 58 /* : */ ||
    text.charCodeAt(16) !== 58
  ) {
    return Number.NaN;
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return Number.NaN;
  }
  const leap = isLeap(year);
  const monthDays = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  if (day > monthDays) return Number.NaN;

  let at = 19;
  let ms = 0;
  if (text.charCodeAt(at) === 46 /* . */) {
    const start = ++at;
    while (at < length && at - start < 9) {
      const digit = text.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) break;
      if (at - start < 3) ms = ms * 10 + digit;
      at++;
    }
    const count = at - start;
    if (count === 0) return Number.NaN;
    if (count === 1) ms *= 100;
    else if (count === 2) ms *= 10;
  }

  let offset = 0;
  const zone = text.charCodeAt(at);
  if (at === length) {
    // No zone: UTC, as the spec defines the timestamp.
  } else if (zone === 90 /* Z */ || zone === 122 /* z */) {
    if (at + 1 !== length) return Number.NaN;
  } else if (zone === 43 /* + */ || zone === 45 /* - */) {
    const rest = length - at; // ±hh:mm (6), ±hhmm (5) or ±hh (3)
    if (rest !== 6 && rest !== 5 && rest !== 3) return Number.NaN;
    if (rest === 6 && text.charCodeAt(at + 3) !== 58) return Number.NaN;
    const offsetHours = digitsAt(text, at + 1, 2);
    const offsetMinutes = rest === 3 ? 0 : digitsAt(text, at + (rest === 6 ? 4 : 3), 2);
    if (offsetHours < 0 || offsetHours > 23 || offsetMinutes < 0 || offsetMinutes > 59) return Number.NaN;
    offset = (offsetHours * 60 + offsetMinutes) * 60_000;
    if (zone === 43) offset = -offset;
  } else {
    return Number.NaN;
  }

  // Days since 1970-01-01 (proleptic Gregorian).
  // Date.UTC (a number, no Date object) reads years 0 to 99 as 1900 to 1999: 400 years later
  // is the same calendar, exactly 146,097 days on.
  return Date.UTC(year + 400, month - 1, day, hour, minute, second, ms) - 146_097 * 86_400_000 + offset;
}
