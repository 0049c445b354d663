/**
 * src/core/hash.ts sha256Hex: the keys under which processes share a token and a pacing budget.
 * Every process of a fleet, on any runtime and any SDK version, must derive the same key from
 * the same parts, or the fleet splits its cache and its rate budget.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors/base.js';
import { sha256Hex } from '../../../src/core/hash.js';

afterEach(() => vi.unstubAllGlobals());

describe('sha256Hex', () => {
  it('is SHA-256 of the JSON list, in lower-case hex: what node:crypto computes for the same bytes', async () => {
    const parts = ['myr-gateway token v1', 'https://api.example.test/', 'M1', 'sk_live_ringgit'];
    expect(await sha256Hex(parts)).toBe(createHash('sha256').update(JSON.stringify(parts)).digest('hex'));
  });

  it('keeps the boundaries between parts: moving a character from one part to the next changes the key', async () => {
    expect(await sha256Hex(['ab', 'c'])).not.toBe(await sha256Hex(['a', 'bc']));
  });

  it('without Web Crypto, fails with a ConfigurationError that names what is missing', async () => {
    vi.stubGlobal('crypto', undefined);
    await expect(sha256Hex(['x'])).rejects.toBeInstanceOf(ConfigurationError);
    await expect(sha256Hex(['x'])).rejects.toThrow(/crypto\.subtle/);
  });
});
