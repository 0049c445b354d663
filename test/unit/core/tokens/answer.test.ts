/**
 * src/core/tokens/answer.ts readToken: the token of a `POST /auth/token` answer and its expiry on
 * this process's clock, whatever naming the answer uses (docs/assumptions.md A1), with a
 * lifetime that is missing, past or absurd replaced by one the client can live with.
 */
import { describe, expect, it } from 'vitest';
import { InvalidResponseError } from '../../../../src/core/errors/service.js';
import { DEFAULT_TOKEN_LIFETIME_MS, MAX_TOKEN_LIFETIME_MS, readToken } from '../../../../src/core/tokens/answer.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const HOUR = 3_600_000;

describe('readToken', () => {
  it.each([
    [
      'spec shape: data.access_token, expires_in seconds',
      { success: true, data: { access_token: 't', expires_in: 3600 } },
      HOUR,
    ],
    ['camelCase at the top level', { accessToken: 't', expiresIn: 1800 }, HOUR / 2],
    ['`token` with expires_at in Unix seconds', { data: { token: 't', expires_at: NOW / 1000 + 600 } }, 600_000],
    ['expires_at in milliseconds', { data: { access_token: 't', expires_at: NOW + 600_000 } }, 600_000],
    [
      'expires_at as ISO 8601',
      { data: { access_token: 't', expiresAt: new Date(NOW + 900_000).toISOString() } },
      900_000,
    ],
    ['no lifetime: the spec hour', { data: { access_token: 't' } }, DEFAULT_TOKEN_LIFETIME_MS],
    ['zero lifetime: the spec hour', { data: { access_token: 't', expires_in: 0 } }, DEFAULT_TOKEN_LIFETIME_MS],
    ['negative lifetime: the spec hour', { data: { access_token: 't', expires_in: -5 } }, DEFAULT_TOKEN_LIFETIME_MS],
    [
      'expiry already past here (skewed clocks): the spec hour',
      { data: { access_token: 't', expires_at: NOW / 1000 - 60 } },
      DEFAULT_TOKEN_LIFETIME_MS,
    ],
    [
      'unparseable expiry: the spec hour',
      { data: { access_token: 't', expires_at: 'soon' } },
      DEFAULT_TOKEN_LIFETIME_MS,
    ],
    [
      'a year (milliseconds sent as seconds?): capped at a day',
      { data: { access_token: 't', expires_in: 365 * 86_400 } },
      MAX_TOKEN_LIFETIME_MS,
    ],
  ])('%s', (_label, body, lifetime) => {
    expect(readToken(body, NOW)).toEqual({ accessToken: 't', expiresAt: NOW + lifetime, issuedAt: NOW });
  });

  it('expires_in wins over expires_at when both are given', () => {
    expect(
      readToken({ data: { access_token: 't', expires_in: 60, expires_at: NOW / 1000 + 600 } }, NOW).expiresAt,
    ).toBe(NOW + 60_000);
  });

  it.each([
    ['no body', undefined],
    ['no token', { data: { expires_in: 3600 } }],
    ['an empty token', { data: { access_token: '' } }],
    ['a number for a token', { data: { access_token: 12345 } }],
    ['a token with a space', { data: { access_token: 'abc def' } }],
    ['a token with CR LF', { data: { access_token: 'abc\r\nX-Evil: 1' } }],
  ])('%s is an INVALID_RESPONSE on access_token, whose message does not repeat the token', (_label, body) => {
    let thrown: unknown;
    try {
      readToken(body, NOW);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidResponseError);
    expect(thrown).toMatchObject({ code: 'INVALID_RESPONSE', field: 'access_token' });
    expect((thrown as Error).message).not.toMatch(/abc/);
  });
});
