/**
 * The claim TTL against the gateway's delivery schedule (3 deliveries: immediately, about 1 s,
 * about 5 s later): which delivery runs the handler again after a crash, and how often a live
 * handler renews.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_IN_FLIGHT_TTL_MS,
  GATEWAY_RETRY_DELAYS_MS,
  RETRY_DELAY_SLACK,
  deliveryAfterCrash,
  renewEveryMs,
} from '../../../src/webhooks/delivery-policy.js';

describe('deliveryAfterCrash: which delivery finds a crashed handler’s claim free', () => {
  it.each([
    // ttl, delivery that runs the handler (undefined: the gateway gives up)
    [1, 2],
    [799, 2], // the 1 s retry, at its earliest 0.8 s
    [800, 3],
    [4_000, 3], // the in-window choice: a stall over 4 s lets a retry run a live handler again
    [4_799, 3], // the 6 s retry, at its earliest 4.8 s
    [4_800, undefined],
    [30_000, undefined], // the default: every retry meets a crashed claim (409); the job reconciles
    [60_000, undefined],
  ] as const)('inFlightTtlMs %i → delivery %s', (ttl, delivery) => {
    expect(deliveryAfterCrash(ttl)).toBe(delivery);
  });

  it('follows another schedule when given one', () => {
    expect(deliveryAfterCrash(4_000, [1_000])).toBeUndefined();
    expect(deliveryAfterCrash(4_000, [1_000, 5_000, 30_000])).toBe(3);
    expect(deliveryAfterCrash(10_000, [1_000, 5_000, 30_000])).toBe(4);
  });

  it('the spec’s schedule and the slack "about" allows', () => {
    expect(GATEWAY_RETRY_DELAYS_MS).toEqual([1_000, 5_000]);
    expect(RETRY_DELAY_SLACK).toBe(0.2);
  });
});

describe('the default claim', () => {
  it('keeps a live handler’s claim through a stall of about 30 s, so no retry of the gateway runs it again', () => {
    expect(DEFAULT_IN_FLIGHT_TTL_MS).toBe(30_000);
    // Which is also why a crashed handler's callback waits for the reconciliation job.
    expect(deliveryAfterCrash(DEFAULT_IN_FLIGHT_TTL_MS)).toBeUndefined();
  });

  it('is renewed every third of its TTL: two renewals may fail or stall before a live handler loses it', () => {
    expect(renewEveryMs(DEFAULT_IN_FLIGHT_TTL_MS)).toBe(10_000);
    expect(2 * renewEveryMs(DEFAULT_IN_FLIGHT_TTL_MS)).toBeLessThan(DEFAULT_IN_FLIGHT_TTL_MS);
  });

  it.each([
    [3, 1],
    [1, 1],
    [60_000, 20_000],
  ])('renewEveryMs(%i) = %i', (ttl, every) => {
    expect(renewEveryMs(ttl)).toBe(every);
  });
});
