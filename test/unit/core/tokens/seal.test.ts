/**
 * src/core/tokens/seal.ts: what a token store keeps opens only with the same api key and
 * store key, and anything altered, truncated or malformed opens to nothing.
 */
import { describe, expect, it } from 'vitest';
import { tokenSeal } from '../../../../src/core/tokens/seal.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.tok_secret_value';
const KEY = 'myr-gateway:token:abc';
/** `text` with the character at `i` replaced (a full 6 bits of data: not the last, partly padding). */
const flipAt = (text: string, i: number) => text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1);

describe('tokenSeal', () => {
  it('round-trips, never shows the token, and uses a new IV each time', async () => {
    const seal = await tokenSeal('sk_live_one');
    const [a, b] = [await seal.seal(TOKEN, KEY), await seal.seal(TOKEN, KEY)];
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(a).not.toContain('tok_secret');
    expect(a.split('.')[1]).not.toBe(b.split('.')[1]);
    expect(await seal.open(a, KEY)).toBe(TOKEN);
    expect(await seal.open(b, KEY)).toBe(TOKEN);
  });

  it.each([
    ['another api key', async (sealed: string) => (await tokenSeal('sk_live_two')).open(sealed, KEY)],
    ['another store key', async (sealed: string) => (await tokenSeal('sk_live_one')).open(sealed, `${KEY}x`)],
    ['one ciphertext character changed', async (sealed: string) => (await tokenSeal('sk_live_one')).open(flipAt(sealed, sealed.length - 10), KEY)],
    ['one IV character changed', async (sealed: string) => (await tokenSeal('sk_live_one')).open(flipAt(sealed, 5), KEY)],
    ['truncated', async (sealed: string) => (await tokenSeal('sk_live_one')).open(sealed.slice(0, 30), KEY)],
    ['another version', async (sealed: string) => (await tokenSeal('sk_live_one')).open(sealed.replace(/^v1/, 'v2'), KEY)],
    ['a short IV', async (sealed: string) => (await tokenSeal('sk_live_one')).open(sealed.replace(/^v1\.[^.]{4}/, 'v1.'), KEY)],
    ['not base64url', async () => (await tokenSeal('sk_live_one')).open('v1.!!!!.????', KEY)],
    ['the clear token', async () => (await tokenSeal('sk_live_one')).open(TOKEN, KEY)],
    ['an extra part', async (sealed: string) => (await tokenSeal('sk_live_one')).open(`${sealed}.AA`, KEY)],
  ])('%s opens to nothing', async (_label, open) => {
    const sealed = await (await tokenSeal('sk_live_one')).seal(TOKEN, KEY);
    expect(await open(sealed)).toBeUndefined();
  });
});
