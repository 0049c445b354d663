/**
 * src/core/tokens/store.ts isStoredToken: what a store or the token endpoint hands back is used
 * only when it can go into an Authorization header as it is; anything else is a miss.
 */
import { describe, expect, it } from 'vitest';
import { isStoredToken } from '../../../../src/core/tokens/store.js';

const FUTURE = Date.UTC(2030, 0, 1);

describe('isStoredToken', () => {
  it.each([
    ['a printable token with an expiry', { accessToken: 'eyJ.abc-_~', expiresAt: FUTURE }, true],
    ['with issuedAt', { accessToken: 'tok', expiresAt: FUTURE, issuedAt: FUTURE - 1 }, true],
    ['8192 characters', { accessToken: 'a'.repeat(8192), expiresAt: FUTURE }, true],
    ['8193 characters', { accessToken: 'a'.repeat(8193), expiresAt: FUTURE }, false],
    ['empty token', { accessToken: '', expiresAt: FUTURE }, false],
    ['a space (splits the header)', { accessToken: 'tok en', expiresAt: FUTURE }, false],
    ['CR LF (header injection)', { accessToken: 'tok\r\nX-Evil: 1', expiresAt: FUTURE }, false],
    ['non-ASCII', { accessToken: 'tokén', expiresAt: FUTURE }, false],
    ['a number for a token', { accessToken: 42, expiresAt: FUTURE }, false],
    ['no expiry', { accessToken: 'tok' }, false],
    ['expiry as text', { accessToken: 'tok', expiresAt: String(FUTURE) }, false],
    ['NaN expiry', { accessToken: 'tok', expiresAt: Number.NaN }, false],
    ['infinite expiry', { accessToken: 'tok', expiresAt: Number.POSITIVE_INFINITY }, false],
    ['null', null, false],
    ['a JSON string', '{"accessToken":"tok","expiresAt":1}', false],
  ])('%s → %s', (_label, value, expected) => {
    expect(isStoredToken(value)).toBe(expected);
  });
});
