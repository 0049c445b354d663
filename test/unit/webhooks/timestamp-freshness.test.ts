/**
 * src/webhooks/timestamp-freshness.ts on its own: the spec's 5-minute staleness rule, both
 * ways, both bounds included, as one table.
 */
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../../src/webhooks/errors.js';
import { assertFresh, DEFAULT_TOLERANCE_SECONDS } from '../../../src/webhooks/timestamp-freshness.js';

const SIGNED_AT = Date.parse('2026-01-01T00:00:00.000Z');
const FIVE_MINUTES = 5 * 60_000;

/** The refusal's reason, or 'fresh' when none. */
function verdict(nowMs: number, toleranceMs = FIVE_MINUTES): string {
  try {
    assertFresh(SIGNED_AT, nowMs, toleranceMs);
    return 'fresh';
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).reason;
  }
}

describe('assertFresh', () => {
  it("defaults to the spec's 5 minutes", () => {
    expect(DEFAULT_TOLERANCE_SECONDS * 1000).toBe(FIVE_MINUTES);
  });

  it.each([
    ['the same instant', 0, 'fresh'],
    ['5 minutes later, the bound itself', FIVE_MINUTES, 'fresh'],
    ['1 ms past 5 minutes later', FIVE_MINUTES + 1, 'stale'],
    ['an hour later (a replay)', 3_600_000, 'stale'],
    ['5 minutes earlier (a sender clock ahead)', -FIVE_MINUTES, 'fresh'],
    ['1 ms more than 5 minutes earlier', -FIVE_MINUTES - 1, 'future'],
    ['a day earlier (a forged date)', -86_400_000, 'future'],
  ])('received %s: %s', (_case, offsetMs, expected) => {
    expect(verdict(SIGNED_AT + offsetMs)).toBe(expected);
  });

  it('holds to the tolerance it is given', () => {
    expect(verdict(SIGNED_AT + 1001, 1000)).toBe('stale');
    expect(verdict(SIGNED_AT - 1001, 1000)).toBe('future');
    expect(verdict(SIGNED_AT + 1000, 1000)).toBe('fresh');
  });
});
