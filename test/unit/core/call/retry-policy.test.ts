/** Every row of the retry policy (src/core/call/retry-policy.ts): operation × outcome → decision. */
import { describe, expect, it } from 'vitest';
import {
  decide,
  isAtMostOnce,
  isRetryable,
  isTokenRefusal,
  type Operation,
  type AttemptFailure,
  type PolicyInput,
  retryDelay,
} from '../../../../src/core/call/retry-policy.js';
import { resolveRetryOptions } from '../../../../src/core/call/retry-options.js';

const retry = resolveRetryOptions({});
const base = { attempt: 1, maxRetries: 3, retry, random: 0, remainingMs: 120_000, tokenRenewed: false };
const http = (status: number, code: string, retryAfterMs?: number): AttemptFailure => ({
  kind: 'http',
  status,
  code,
  retryAfterMs,
});

const OUTCOMES: [string, AttemptFailure][] = [
  ['400 VALIDATION_ERROR', http(400, 'VALIDATION_ERROR')],
  ['400 INVALID_AMOUNT', http(400, 'INVALID_AMOUNT')],
  ['400 MISSING_PROVIDER_CHANNEL', http(400, 'MISSING_PROVIDER_CHANNEL')],
  ['400 INVALID_PROVIDER_CHANNEL', http(400, 'INVALID_PROVIDER_CHANNEL')],
  ['400 INVALID_BANK_CODE', http(400, 'INVALID_BANK_CODE')],
  ['401 UNAUTHORIZED', http(401, 'UNAUTHORIZED')],
  ['401 TOKEN_EXPIRED', http(401, 'TOKEN_EXPIRED')],
  ['401 INVALID_CREDENTIALS', http(401, 'INVALID_CREDENTIALS')],
  ['403 MERCHANT_DISABLED', http(403, 'MERCHANT_DISABLED')],
  ['403 MERCHANT_LOCKED', http(403, 'MERCHANT_LOCKED')],
  ['404 NOT_FOUND', http(404, 'NOT_FOUND')],
  ['409 DUPLICATE_REFERENCE', http(409, 'DUPLICATE_REFERENCE')],
  ['422 VALIDATION_ERROR', http(422, 'VALIDATION_ERROR')],
  ['429 RATE_LIMITED', http(429, 'RATE_LIMITED')],
  ['500 HTTP_ERROR', http(500, 'HTTP_ERROR')],
  ['502 GATEWAY_ERROR', http(502, 'GATEWAY_ERROR')],
  ['502 HTML page (HTTP_ERROR)', http(502, 'HTTP_ERROR')],
  ['503 NO_GATEWAY_AVAILABLE', http(503, 'NO_GATEWAY_AVAILABLE')],
  ["502 carrying NO_GATEWAY_AVAILABLE (not the spec's pair)", http(502, 'NO_GATEWAY_AVAILABLE')],
  ['503 HTTP_ERROR', http(503, 'HTTP_ERROR')],
  ['504 GATEWAY_TIMEOUT', http(504, 'GATEWAY_TIMEOUT')],
  ['network error before sending', { kind: 'network', stage: 'connect' }],
  ['TLS handshake refused (nothing sent)', { kind: 'network', stage: 'handshake' }],
  ['network error after sending', { kind: 'network', stage: 'exchange' }],
  ['timeout', { kind: 'timeout' }],
];

// R = retry (not processed), RM = retry (may have been processed), T = renew token, S = stop,
// SM = stop (may have been processed), U = outcome unknown. Columns: token, status, payment.create, withdraw, withdraw.recover.
const EXPECTED: Record<string, [string, string, string, string, string]> = {
  '400 VALIDATION_ERROR': ['S', 'S', 'S', 'S', 'S'],
  '400 INVALID_AMOUNT': ['S', 'S', 'S', 'S', 'S'],
  '400 MISSING_PROVIDER_CHANNEL': ['S', 'S', 'S', 'S', 'S'],
  '400 INVALID_PROVIDER_CHANNEL': ['S', 'S', 'S', 'S', 'S'],
  '400 INVALID_BANK_CODE': ['S', 'S', 'S', 'S', 'S'],
  '401 UNAUTHORIZED': ['S', 'T', 'T', 'T', 'T'],
  '401 TOKEN_EXPIRED': ['S', 'T', 'T', 'T', 'T'],
  '401 INVALID_CREDENTIALS': ['S', 'S', 'S', 'S', 'S'],
  '403 MERCHANT_DISABLED': ['S', 'S', 'S', 'S', 'S'],
  '403 MERCHANT_LOCKED': ['S', 'S', 'S', 'S', 'S'],
  '404 NOT_FOUND': ['S', 'S', 'S', 'S', 'S'],
  '409 DUPLICATE_REFERENCE': ['S', 'S', 'S', 'S', 'S'],
  '422 VALIDATION_ERROR': ['S', 'S', 'S', 'S', 'S'],
  '429 RATE_LIMITED': ['R', 'R', 'R', 'R', 'R'],
  '500 HTTP_ERROR': ['RM', 'RM', 'RM', 'U', 'U'],
  '502 GATEWAY_ERROR': ['RM', 'RM', 'RM', 'U', 'U'],
  '502 HTML page (HTTP_ERROR)': ['RM', 'RM', 'RM', 'U', 'U'],
  '503 NO_GATEWAY_AVAILABLE': ['R', 'R', 'R', 'R', 'R'],
  "502 carrying NO_GATEWAY_AVAILABLE (not the spec's pair)": ['RM', 'RM', 'RM', 'U', 'U'],
  '503 HTTP_ERROR': ['RM', 'RM', 'RM', 'U', 'U'],
  '504 GATEWAY_TIMEOUT': ['RM', 'RM', 'RM', 'U', 'U'],
  'network error before sending': ['R', 'R', 'R', 'R', 'R'],
  'TLS handshake refused (nothing sent)': ['S', 'S', 'S', 'S', 'S'],
  'network error after sending': ['RM', 'RM', 'RM', 'U', 'U'],
  timeout: ['RM', 'RM', 'RM', 'U', 'U'],
};
const OPERATIONS: Operation[] = ['token', 'status', 'payment.create', 'withdraw', 'withdraw.recover'];

function short(input: PolicyInput): string {
  const d = decide(input);
  if (d.action === 'retry') return d.maybeProcessed ? 'RM' : 'R';
  if (d.action === 'stop') return d.maybeProcessed ? 'SM' : 'S';
  return d.action === 'renew-token' ? 'T' : 'U';
}

describe('the first failed attempt, retries left', () => {
  const rows = OUTCOMES.flatMap(([label, outcome]) =>
    OPERATIONS.map((operation, i) => [label, operation, outcome, EXPECTED[label]?.[i]] as const),
  );
  it.each(rows)('%s on %s', (_label, operation, outcome, expected) => {
    expect(short({ ...base, operation, outcome })).toBe(expected);
  });
});

describe('limits', () => {
  it.each(OPERATIONS)(
    '%s: retries used up → stop (may-have-been-processed flag kept for reconciliation)',
    (operation) => {
      const timeout = short({ ...base, operation, outcome: { kind: 'timeout' }, attempt: 4 });
      expect(timeout).toBe(operation.startsWith('withdraw') ? 'U' : 'SM');
      expect(short({ ...base, operation, outcome: http(429, 'RATE_LIMITED'), attempt: 4 })).toBe('S');
    },
  );

  it.each(OPERATIONS.filter((o) => o !== 'token'))('%s: a second 401 after a renewal stops', (operation) => {
    expect(short({ ...base, operation, outcome: http(401, 'TOKEN_EXPIRED'), tokenRenewed: true })).toBe('S');
  });

  it('a wait that would overrun the total timeout stops', () => {
    expect(short({ ...base, operation: 'status', outcome: http(503, 'NO_GATEWAY_AVAILABLE'), remainingMs: 1000 })).toBe(
      'S',
    );
    expect(short({ ...base, operation: 'status', outcome: http(503, 'NO_GATEWAY_AVAILABLE'), remainingMs: 1001 })).toBe(
      'R',
    );
  });

  it('a Retry-After above maxDelayMs stops', () => {
    expect(short({ ...base, operation: 'status', outcome: http(429, 'RATE_LIMITED', 60_001) })).toBe('S');
  });
});

describe('waits', () => {
  it.each([
    ['no Retry-After', 1, undefined, 0, 1000],
    ['no Retry-After, third retry, full jitter', 3, undefined, 0.999, 4999],
    ['Retry-After 3 s', 1, 3000, 0, 3000],
    ['Retry-After 0 gets the backoff floor', 1, 0, 0, 1000],
    ['Retry-After 0 on the second retry', 2, 0, 0, 2000],
    ['Retry-After 40 s is spread by a quarter of it', 1, 40_000, 0.5, 45_000],
    ['a spread never passes maxDelayMs', 1, 59_000, 0.999, 60_000],
  ])('%s', (_label, n, retryAfterMs, random, expected) => {
    expect(retryDelay(n, retryAfterMs, retry, random)).toBe(expected);
  });

  it('many clients told the same Retry-After spread out, none earlier than asked', () => {
    const delays = Array.from({ length: 100 }, (_, i) => retryDelay(1, 10_000, retry, i / 100) as number);
    expect(Math.min(...delays)).toBe(10_000);
    expect(new Set(delays).size).toBe(100);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThanOrEqual(2400);
  });

  const delayOf = (input: PolicyInput) => {
    const d = decide(input);
    return d.action === 'retry' ? d.delayMs : d.action;
  };
  const reset = (status: number, resetInMs: number, retryAfterMs?: number): AttemptFailure => ({
    kind: 'http',
    status,
    code: status === 429 ? 'RATE_LIMITED' : 'NO_GATEWAY_AVAILABLE',
    retryAfterMs,
    resetInMs,
  });

  it.each([
    ['429 without Retry-After waits for X-RateLimit-Reset, spread by a quarter', reset(429, 20_000), 0.5, 22_500],
    ['429 with both: Retry-After wins', reset(429, 20_000, 3000), 0, 3000],
    ['429 whose reset already passed gets the backoff', reset(429, -5000), 0, 1000],
    ['429 whose reset is past maxDelayMs stops', reset(429, 61_000), 0, 'stop'],
    ['503 ignores the reset (it is about the rate window, not the outage)', reset(503, 20_000), 0, 1000],
  ])('%s', (_label, outcome, random, expected) => {
    expect(delayOf({ ...base, operation: 'payment.create', outcome, random })).toBe(expected);
  });

  it('a crowd 429ed with only X-RateLimit-Reset comes back spread, none before the reset', () => {
    const delays = Array.from(
      { length: 100 },
      (_, i) => delayOf({ ...base, operation: 'status', outcome: reset(429, 12_000), random: i / 100 }) as number,
    );
    expect(Math.min(...delays)).toBe(12_000);
    expect(new Set(delays).size).toBe(100);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThanOrEqual(2900);
  });

  it('the decision is pure: the same input gives the same answer', () => {
    const input: PolicyInput = {
      ...base,
      operation: 'payment.create',
      outcome: http(429, 'RATE_LIMITED', 5000),
      random: 0.3,
    };
    expect(decide(input)).toEqual(decide(input));
  });
});

describe('the predicates the transport shares with the policy', () => {
  it.each<[Operation, boolean]>([
    ['withdraw', true],
    ['withdraw.recover', true],
    ['payment.create', false],
    ['status', false],
    ['token', false],
  ])('isAtMostOnce(%s) is %s', (operation, expected) => {
    expect(isAtMostOnce(operation)).toBe(expected);
  });

  it.each([
    ['TOKEN_EXPIRED', true],
    ['UNAUTHORIZED', true],
    ['INVALID_CREDENTIALS', false],
    ['MERCHANT_LOCKED', false],
  ])('isTokenRefusal(%s) is %s', (code, expected) => {
    expect(isTokenRefusal(code)).toBe(expected);
  });
});

// error.retryable (errors/from-response.ts, errors/connection.ts) is this rule's answer.
describe('isRetryable, the one retryability rule', () => {
  it.each<[string, AttemptFailure, boolean]>([
    ['429', http(429, 'RATE_LIMITED'), true],
    ['500', http(500, 'HTTP_ERROR'), true],
    ['503 NO_GATEWAY_AVAILABLE', http(503, 'NO_GATEWAY_AVAILABLE'), true],
    ['401 TOKEN_EXPIRED (with a fresh token)', http(401, 'TOKEN_EXPIRED'), true],
    ['401 UNAUTHORIZED', http(401, 'UNAUTHORIZED'), false],
    ['400 VALIDATION_ERROR', http(400, 'VALIDATION_ERROR'), false],
    ['409 DUPLICATE_REFERENCE', http(409, 'DUPLICATE_REFERENCE'), false],
    ['no connection', { kind: 'network', stage: 'connect' }, true],
    ['TLS handshake refused', { kind: 'network', stage: 'handshake' }, false],
    ['connection lost after sending', { kind: 'network', stage: 'exchange' }, true],
    ['timeout', { kind: 'timeout' }, true],
  ])('%s: %s', (_label, failure, expected) => {
    expect(isRetryable(failure)).toBe(expected);
  });
});
