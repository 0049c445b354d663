/**
 * src/schemas/bank-codes.ts isProviderChannelId: a BANK_TRANSFER is refused before sending
 * unless its provider_channel_id is one of the spec's bank codes, exactly as written.
 */
import { describe, expect, it } from 'vitest';
import {
  isProviderChannelId,
  PROVIDER_CHANNELS_GROUP_A,
  PROVIDER_CHANNELS_GROUP_B,
} from '../../../src/schemas/bank-codes.js';

describe('isProviderChannelId', () => {
  it('knows every code of both spec lists', () => {
    for (const code of [...PROVIDER_CHANNELS_GROUP_A, ...PROVIDER_CHANNELS_GROUP_B])
      expect(isProviderChannelId(code)).toBe(true);
  });

  it.each(['mb2u0227', ' MB2U0227', 'NOPE0001', 'toString', '__proto__', '', undefined, 227])('refuses %j', (code) => {
    expect(isProviderChannelId(code)).toBe(false);
  });
});
