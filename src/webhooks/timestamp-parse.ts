/**
 * The callback `timestamp`, read on every callback: a strict ISO 8601 parser with no regex,
 * no Date object and no call into the runtime's calendar.
 *
 * @module
 */

/**
 * Two or four ASCII digits at `at`, or NaN. NaN fails every range check below (`NaN < 24` is
 * false) and turns the result into NaN, so a non-digit needs no check of its own.
 */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = 0; i < count; i++) {
    const digit = text.charCodeAt(at + i) - 48;
    if (!(digit >= 0 && digit <= 9)) return NaN;
    value = value * 10 + digit;
  }
  return value;
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
  const separator = text.charCodeAt(10);
  if (
    length < 19 ||
    length > 40 ||
    text.charCodeAt(4) !== 45 /* - */ ||
    text.charCodeAt(7) !== 45 ||
    (separator !== 84 /* T */ && separator !== 116 /* t */ && separator !== 32) /* space */ ||
    text.charCodeAt(13) !== 58 /* : */ ||
    text.charCodeAt(16) !== 58
  ) {
    return NaN;
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  // 31 and 30 days alternate from January and again from August; February apart.
  const monthDays = month === 2 ? (leap ? 29 : 28) : 30 + ((month + (month >> 3)) & 1);
  if (!(
    year >= 0 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= monthDays &&
    hour < 24 &&
    minute < 60 &&
    second < 60
  )) {
    return NaN;
  }

  // A fraction of up to nine digits (nanoseconds): the first three are the milliseconds.
  let at = 19;
  let ms = 0;
  if (text.charCodeAt(at) === 46 /* . */) {
    for (let unit = 100; ++at < length && at < 29; unit /= 10) {
      const digit = text.charCodeAt(at) - 48;
      if (!(digit >= 0 && digit <= 9)) break;
      if (unit >= 1) ms += digit * unit;
    }
    if (at === 20) return NaN;
  }

  const rest = length - at;
  const zone = text.charCodeAt(at);
  let offset = 0; // minutes to add to reach UTC
  if (zone === 90 /* Z */ || zone === 122 /* z */) {
    if (rest !== 1) return NaN;
  } else if (zone === 43 /* + */ || zone === 45 /* - */) {
    // ±hh, ±hhmm or ±hh:mm
    const hours = digitsAt(text, at + 1, 2);
    const minutes =
      rest === 3
        ? 0
        : rest === 5
          ? digitsAt(text, at + 3, 2)
          : rest === 6 && text.charCodeAt(at + 3) === 58
            ? digitsAt(text, at + 4, 2)
            : NaN;
    if (!(hours < 24 && minutes < 60)) return NaN;
    offset = zone === 43 ? -hours * 60 - minutes : hours * 60 + minutes;
  } else if (rest !== 0) {
    return NaN; // no zone at all is UTC, as the spec defines the timestamp
  }

  // Days since 1970-01-01 (proleptic Gregorian), counted in integers rather than by Date.UTC (a
  // runtime call on every callback): years taken to begin in March, so that a leap day ends
  // its year, and 400 years on (the same calendar, 146,097 days later), so that every year
  // counted is positive. From March, each five months make 153 days (31, 30, 31, 30, 31).
  // 1970-01-01 counts 865,565 days, hence the constant (with the day of the month from 0).
  const y = year + (month > 2 ? 400 : 399);
  const days =
    365 * y + (y >> 2) - ((y / 100) | 0) + ((y / 400) | 0) + (((((month + 9) % 12) * 153 + 2) / 5) | 0) + day - 865_566;
  return (((days * 24 + hour) * 60 + minute + offset) * 60 + second) * 1000 + ms;
}
