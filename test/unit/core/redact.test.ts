/**
 * src/core/redact.ts: what the SDK takes out of text the service sent back before a merchant
 * sees it in an error message or a result. The api key and the attempt's access token become
 * `[redacted]`; a withdrawal's account number is masked as the service masks it (`****6789`),
 * in every field at any depth, while the merchant's own reference_id is never touched.
 */
import { describe, expect, it } from 'vitest';
import {
  accountNumberRedactor,
  alsoRedact,
  bothRedact,
  maskAccountNumber,
  maskAccountNumbers,
  redactSecret,
} from '../../../src/core/redact.js';

const API_KEY = 'sk_live_9f8e7d6c5b4a';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.payload.sig';
const ACCOUNT = '5140123456789';

describe('redactSecret', () => {
  it('replaces every occurrence of the secret', () => {
    const redact = redactSecret(API_KEY);
    const out = redact(`invalid api key ${API_KEY}; expected a key like ${API_KEY}`);
    expect(out).toBe('invalid api key [redacted]; expected a key like [redacted]');
    expect(out).not.toContain(API_KEY);
  });

  it('leaves text without the secret as it was', () => {
    expect(redactSecret(API_KEY)('INVALID_AMOUNT: amount must be at least 1.00')).toBe(
      'INVALID_AMOUNT: amount must be at least 1.00',
    );
  });

  it('matches a secret holding regular-expression characters literally, not as a pattern', () => {
    const redact = redactSecret('k.y+(1)$');
    expect(redact('kxy+(1)$ and kyy1 and k.y+(1)$')).toBe('kxy+(1)$ and kyy1 and [redacted]');
  });

  it('redacts a secret that appears glued to other text (in a URL or JSON)', () => {
    expect(redactSecret(API_KEY)(`{"key":"${API_KEY}"} /x?k=${API_KEY}&y=1`)).toBe(
      '{"key":"[redacted]"} /x?k=[redacted]&y=1',
    );
  });
});

describe('an empty secret', () => {
  it('hides nothing and leaves text as it was (an attempt whose token is empty)', () => {
    expect(redactSecret('')('abc')).toBe('abc');
    expect(alsoRedact(redactSecret(API_KEY), '')(`key ${API_KEY} abc`)).toBe('key [redacted] abc');
  });
});

describe('alsoRedact and bothRedact', () => {
  it('redact the api key and the access token of the attempt together', () => {
    const redact = alsoRedact(redactSecret(API_KEY), TOKEN);
    const out = redact(`token ${TOKEN} for key ${API_KEY} expired`);
    expect(out).toBe('token [redacted] for key [redacted] expired');
  });

  it('redact only the api key for an attempt sent without a token', () => {
    const redact = alsoRedact(redactSecret(API_KEY), undefined);
    expect(redact(`key ${API_KEY}, token ${TOKEN}`)).toBe(`key [redacted], token ${TOKEN}`);
  });

  it('run the first redactor before the second', () => {
    const seen: string[] = [];
    const first = (text: string) => `${text}+first`;
    const second = (text: string) => {
      seen.push(text);
      return `${text}+second`;
    };
    expect(bothRedact(first, second)('x')).toBe('x+first+second');
    expect(seen).toEqual(['x+first']);
  });

  it('apply the first redactor alone when there is no second', () => {
    expect(bothRedact(redactSecret(API_KEY), undefined)(`a ${API_KEY}`)).toBe('a [redacted]');
  });
});

describe('maskAccountNumber', () => {
  it.each([
    ['5140123456789', '****6789'],
    ['123456', '****3456'],
    ['12345', '****2345'],
    ['1234', '****1234'],
    ['0012-3456-7890', '****7890'],
  ])('masks %s as the service does, asterisks and the last 4 characters: %s', (account, masked) => {
    expect(maskAccountNumber(account)).toBe(masked);
  });

  it.each(['****6789', '*6789', '********6789', '****', '**12'])('leaves %s, already masked, as it is', (masked) => {
    expect(maskAccountNumber(masked)).toBe(masked);
  });

  it('re-masks asterisks followed by more than 4 characters, so no more than 4 digits ever show', () => {
    expect(maskAccountNumber('**5140123456789')).toBe('****6789');
  });

  it('never shows more than the last 4 characters of an account number of any length', () => {
    for (let length = 5; length <= 34; length++) {
      const account = '9'.repeat(length - 4) + '1234';
      const masked = maskAccountNumber(account);
      expect(masked).toBe('****1234');
      expect(masked).not.toContain('9');
    }
  });
});

describe('accountNumberRedactor', () => {
  it("masks the request's own account number wherever a message of the service shows it", () => {
    const redact = accountNumberRedactor(ACCOUNT);
    const out = redact(`INVALID_ACCOUNT: account ${ACCOUNT} at bank MBBEMYKL is closed (${ACCOUNT})`);
    expect(out).toBe('INVALID_ACCOUNT: account ****6789 at bank MBBEMYKL is closed (****6789)');
    expect(out).not.toContain(ACCOUNT);
  });

  it('leaves a message without the account number as it was', () => {
    expect(accountNumberRedactor(ACCOUNT)('INSUFFICIENT_BALANCE: balance too low')).toBe(
      'INSUFFICIENT_BALANCE: balance too low',
    );
  });

  it.each([
    ['spaces', 'to 5140 1234 56789 today', 'to ****6789 today'],
    ['dashes', 'bank rejected account 5140-1234-56789', 'bank rejected account ****6789'],
    ['dots and a slash', 'acct 5140.1234/56789.', 'acct ****6789.'],
    ['a line break', 'acct 5140\n123456789', 'acct ****6789'],
    ['only part of it (another account)', 'acct 5140 1234 5678', 'acct 5140 1234 5678'],
  ])('masks it written with %s between its digits', (_what, text, expected) => {
    expect(accountNumberRedactor(ACCOUNT)(text)).toBe(expected);
  });

  it('masks a lettered account number sent with dashes, whatever the case and separators it comes back with', () => {
    expect(accountNumberRedactor('AB-1234-cd99')('account ab 1234 CD99 closed')).toBe('account ****cd99 closed');
  });
});

describe('maskAccountNumbers', () => {
  const redact = bothRedact(redactSecret(API_KEY), accountNumberRedactor(ACCOUNT));

  it('masks the account number sent wherever it comes as a JSON number, under any key and in arrays; other numbers stay', () => {
    expect(
      maskAccountNumbers(
        { beneficiary: { account: 5140123456789 }, accounts: [5140123456789, 7], amount: 250 },
        redact,
        ACCOUNT,
      ),
    ).toEqual({
      beneficiary: { account: '****6789' },
      accounts: ['****6789', 7],
      amount: 250,
    });
    // Leading zeros are lost in a JSON number; past 2^53 JSON.parse rounds it: both still match.
    const long = JSON.parse('{"b":51401234567891234}') as unknown;
    expect(maskAccountNumbers({ a: 51401234567 }, redact, '0051401234567')).toEqual({ a: '****4567' });
    expect(maskAccountNumbers(long, redact, '51401234567891234')).toEqual({ b: '****1234' });
    expect(maskAccountNumbers(long, redact, '0051401234567')).toEqual(long);
  });

  it('masks every account_number field, at any depth and inside arrays', () => {
    const answer = {
      account_number: ACCOUNT,
      beneficiary: { account_number: '7000111122223333', bank: { account_number: '42424242' } },
      history: [{ account_number: '8888777766665555' }, { nested: [{ account_number: '1111222233334444' }] }],
    };
    expect(maskAccountNumbers(answer, redact)).toEqual({
      account_number: '****6789',
      beneficiary: { account_number: '****3333', bank: { account_number: '****4242' } },
      history: [{ account_number: '****5555' }, { nested: [{ account_number: '****4444' }] }],
    });
  });

  it('masks an account_number sent as a JSON number, and every account number in a list under that key', () => {
    expect(
      maskAccountNumbers(
        {
          account_number: 5140123456789,
          account_numbers: [1],
          beneficiary: { account_number: ['7000111122223333', 8888777766665555] },
        },
        redact,
      ),
    ).toEqual({
      account_number: '****6789',
      account_numbers: [1],
      beneficiary: { account_number: ['****3333', '****5555'] },
    });
  });

  it('redacts every other string at any depth: messages, array entries, nested records', () => {
    const answer = {
      message: `key ${API_KEY} may not withdraw to ${ACCOUNT}`,
      details: { reason: `account ${ACCOUNT} blocked`, notes: [`seen key ${API_KEY}`, 'plain'] },
    };
    const out = maskAccountNumbers(answer, redact);
    expect(out).toEqual({
      message: 'key [redacted] may not withdraw to ****6789',
      details: { reason: 'account ****6789 blocked', notes: ['seen key [redacted]', 'plain'] },
    });
    expect(JSON.stringify(out)).not.toContain(API_KEY);
    expect(JSON.stringify(out)).not.toContain(ACCOUNT);
  });

  it("never touches the merchant's own reference_id, at any depth, even where it holds text that is redacted elsewhere", () => {
    // The merchant matches results to orders by reference_id: it must come back byte for byte.
    const reference = `order-${ACCOUNT}-${API_KEY}`;
    const answer = {
      reference_id: reference,
      echo: reference,
      inner: { reference_id: reference, list: [{ reference_id: reference }] },
    };
    const out = maskAccountNumbers(answer, redact) as typeof answer;
    expect(out.reference_id).toBe(reference);
    expect(out.inner.reference_id).toBe(reference);
    expect(out.inner.list[0]?.reference_id).toBe(reference);
    expect(out.echo).toBe('order-****6789-[redacted]');
  });

  it('keeps numbers, booleans, null and keys as they were', () => {
    const answer = { amount: 150.5, ok: true, gateway_reference: null, completed_at: null, count: 0, [API_KEY]: 1 };
    expect(maskAccountNumbers(answer, redact)).toEqual(answer);
  });

  it('returns a copy, leaving the parsed answer it was given unchanged', () => {
    const answer = { account_number: ACCOUNT, inner: { message: `key ${API_KEY}` } };
    const before = structuredClone(answer);
    const out = maskAccountNumbers(answer, redact);
    expect(answer).toEqual(before);
    expect(out).not.toBe(answer);
  });

  it.each([
    ['a string', `bad key ${API_KEY}`, 'bad key [redacted]'],
    ['an array of strings', [ACCOUNT, API_KEY], ['****6789', '[redacted]']],
    ['a number', 42, 42],
    ['null', null, null],
  ])('redacts an answer that is %s at the top level', (_what, answer, expected) => {
    expect(maskAccountNumbers(answer, redact)).toEqual(expected);
  });
});
