/**
 * src/core/tokens/seal.ts: what a token store keeps opens only with the same api key and
 * store key, and anything altered, truncated or malformed opens to nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tokenSeal } from '../../../../src/core/tokens/seal.js';
import { hideNodeCrypto } from '../../../fixtures/no-node-crypto.js';

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
    [
      'one ciphertext character changed',
      async (sealed: string) => (await tokenSeal('sk_live_one')).open(flipAt(sealed, sealed.length - 10), KEY),
    ],
    [
      'one IV character changed',
      async (sealed: string) => (await tokenSeal('sk_live_one')).open(flipAt(sealed, 5), KEY),
    ],
    ['truncated', async (sealed: string) => (await tokenSeal('sk_live_one')).open(sealed.slice(0, 30), KEY)],
    [
      'another version',
      async (sealed: string) => (await tokenSeal('sk_live_one')).open(sealed.replace(/^v1/, 'v2'), KEY),
    ],
    [
      'a short IV',
      async (sealed: string) => (await tokenSeal('sk_live_one')).open(sealed.replace(/^v1\.[^.]{4}/, 'v1.'), KEY),
    ],
    ['not base64url', async () => (await tokenSeal('sk_live_one')).open('v1.!!!!.????', KEY)],
    ['the clear token', async () => (await tokenSeal('sk_live_one')).open(TOKEN, KEY)],
    ['an extra part', async (sealed: string) => (await tokenSeal('sk_live_one')).open(`${sealed}.AA`, KEY)],
  ])('%s opens to nothing', async (_label, open) => {
    const sealed = await (await tokenSeal('sk_live_one')).seal(TOKEN, KEY);
    expect(await open(sealed)).toBeUndefined();
  });
});

describe('tokenSeal on node:crypto and on Web Crypto', () => {
  afterEach(() => vi.restoreAllMocks());
  const webSeal = async (apiKey: string) => {
    hideNodeCrypto();
    const seal = await tokenSeal(apiKey);
    vi.restoreAllMocks();
    return seal;
  };

  it("share one format: a Node process and a Workers process on one store open each other's tokens", async () => {
    const node = await tokenSeal('sk_live_one');
    const web = await webSeal('sk_live_one');
    expect(await web.open(await node.seal(TOKEN, KEY), KEY)).toBe(TOKEN);
    expect(await node.open(await web.seal(TOKEN, KEY), KEY)).toBe(TOKEN);
    expect(await node.open(await (await webSeal('sk_live_two')).seal(TOKEN, KEY), KEY)).toBeUndefined();
  });

  it('opens to nothing on either path for a value cut below its tag', async () => {
    const sealed = await (await tokenSeal('sk_live_one')).seal(TOKEN, KEY);
    const [v, iv] = sealed.split('.');
    const short = `${v}.${iv}.AAAA`;
    expect(await (await tokenSeal('sk_live_one')).open(short, KEY)).toBeUndefined();
    expect(await (await webSeal('sk_live_one')).open(short, KEY)).toBeUndefined();
  });

  it('many foreign values, then good ones, in one process: every answer comes back (no crypto job aborts the process)', async () => {
    const seal = await tokenSeal('sk_live_one');
    const foreign = await (await tokenSeal('sk_live_two')).seal(TOKEN, KEY);
    const good = await seal.seal(TOKEN, KEY);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => seal.open(i % 2 ? foreign : good, KEY)));
    expect(answers.filter((a) => a === TOKEN)).toHaveLength(100);
    expect(answers.filter((a) => a === undefined)).toHaveLength(100);
  });
});
