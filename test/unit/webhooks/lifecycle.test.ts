/** The lifecycle order that decides whether a late callback is superseded. */
import { describe, expect, it } from 'vitest';
import { canSupersede, isSuperseded, lifecycleRank } from '../../../src/webhooks/lifecycle.js';

describe('lifecycleRank', () => {
  it.each([
    ['PENDING', 0],
    ['PROCESSING', 0],
    ['SUCCESS', 1],
    ['FAILED', 1],
    ['EXPIRED', 1],
    ['CANCELLED', 1],
    ['REFUNDED', 2],
    ['SOMETHING_NEW', 1],
  ])('%s → %i', (status, rank) => expect(lifecycleRank(status)).toBe(rank));
});

describe('isSuperseded(completed, incoming)', () => {
  it.each([
    ['REFUNDED', 'SUCCESS', true],
    ['REFUNDED', 'FAILED', true],
    ['REFUNDED', 'PENDING', true],
    ['SUCCESS', 'PENDING', true],
    ['SUCCESS', 'REFUNDED', false],
    ['SUCCESS', 'SUCCESS', false],
    ['SUCCESS', 'FAILED', false], // outcomes do not order each other: both are handled
    ['FAILED', 'SUCCESS', false],
    ['REFUNDED', 'REFUNDED', false],
    ['PENDING', 'SUCCESS', false],
  ])('completed %s, incoming %s → %s', (completed, incoming, superseded) => {
    expect(isSuperseded(completed, incoming)).toBe(superseded);
  });
});

describe('canSupersede: which completed statuses keep a per-payment high-water mark', () => {
  it.each([
    ['REFUNDED', true],
    ['SUCCESS', false],
    ['FAILED', false],
    ['EXPIRED', false],
    ['CANCELLED', false],
    ['PENDING', false],
  ])('%s → %s', (status, keeps) => expect(canSupersede(status)).toBe(keeps));
});
