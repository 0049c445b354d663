/**
 * The checks on what RedisRateLimiter's acquire script answers (src/redis/rate-scripts.ts): a
 * reply is input, and a malformed one must never grant more slots than asked or spin. The
 * scripts themselves run against a real redis-server in test/integration/redis-rate-limiter.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type AcquireReply, readAcquire, sharedStateWarnings } from '../../../src/redis/rate-scripts.js';

const NOW = 1_764_000_000_000;
/** A reply of the old five fields: nothing paced on, nothing found wrong. */
const NOTHING = { paced: undefined, overruled: false, foreign: 0, cutProbeLock: false, edgeProbe: false };
// reply, slots wanted → what the limiter acts on
const ROWS: [string, unknown, number, AcquireReply][] = [
  [
    'all taken',
    [3, 0, 0, NOW, 0],
    3,
    { granted: 3, waitMs: 0, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'some taken, next frees in 250 ms',
    [1, 250, 0, NOW, 0],
    3,
    { granted: 1, waitMs: 250, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'none, next frees in 40 s: asks again within the poll',
    [0, 40_000, 0, NOW, 0],
    3,
    { granted: 0, waitMs: 1000, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'the fleet probe',
    [1, 100, 1, NOW, 0],
    5,
    { granted: 1, waitMs: 100, probe: true, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'an invalid value was discarded',
    [2, 0, 0, NOW, 1],
    2,
    { granted: 2, waitMs: 0, probe: false, redisNow: NOW, discarded: true, ...NOTHING },
  ],
  [
    'more granted than wanted',
    [9, 0, 0, NOW, 0],
    3,
    { granted: 0, waitMs: 1, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'negative granted',
    [-1, 0, 0, NOW, 0],
    3,
    { granted: 0, waitMs: 1, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'fractional granted',
    [1.5, 10, 0, NOW, 0],
    3,
    { granted: 0, waitMs: 10, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'a wait of NaN',
    [0, 'x', 0, NOW, 0],
    3,
    { granted: 0, waitMs: 1000, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'a wait of 0 with nothing granted: no hot loop',
    [0, 0, 0, NOW, 0],
    3,
    { granted: 0, waitMs: 1, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'probe flag on a grant of 2',
    [2, 0, 1, NOW, 0],
    2,
    { granted: 2, waitMs: 0, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
  [
    'the edge probe, the last of 2 slots granted',
    [2, 0, 0, NOW, 0, 30, 6000, 1, 0, 0, 0, 0, 1],
    3,
    {
      granted: 2,
      waitMs: 1,
      probe: false,
      redisNow: NOW,
      discarded: false,
      ...NOTHING,
      paced: { limit: 30, windowMs: 6000, fromRedis: true, freeInMs: 0 },
      edgeProbe: true,
    },
  ],
  [
    'an edge flag with nothing granted',
    [0, 500, 0, NOW, 0, 30, 6000, 1, 0, 0, 0, 500, 1],
    3,
    {
      granted: 0,
      waitMs: 500,
      probe: false,
      redisNow: NOW,
      discarded: false,
      ...NOTHING,
      paced: { limit: 30, windowMs: 6000, fromRedis: true, freeInMs: 500 },
      edgeProbe: false,
    },
  ],
  ['no time', [1, 0, 0], 1, { granted: 1, waitMs: 0, probe: false, redisNow: undefined, discarded: false, ...NOTHING }],
  [
    'not an array',
    'OK',
    3,
    { granted: 0, waitMs: 1000, probe: false, redisNow: undefined, discarded: false, ...NOTHING },
  ],
  ['null', null, 3, { granted: 0, waitMs: 1000, probe: false, redisNow: undefined, discarded: false, ...NOTHING }],
];

// The fields past the fifth: what was paced on, and what was found wrong in Redis.
const FULL: [string, unknown, AcquireReply][] = [
  [
    'paced on the hash, overruled, 2 foreign slots dropped, a probe lock cut',
    [0, 900, 0, NOW, 0, 30, 6000, 1, 1, 2, 1, 4000],
    {
      granted: 0,
      waitMs: 900,
      probe: false,
      redisNow: NOW,
      discarded: false,
      paced: { limit: 30, windowMs: 6000, fromRedis: true, freeInMs: 4000 },
      overruled: true,
      foreign: 2,
      cutProbeLock: true,
      edgeProbe: false,
    },
  ],
  [
    'a limit of 0 or a window of a day is no pacing to report',
    [0, 900, 0, NOW, 0, 0, 86_400_000, 1, 0, -3, 0, 4000],
    { granted: 0, waitMs: 900, probe: false, redisNow: NOW, discarded: false, ...NOTHING },
  ],
];

describe('readAcquire', () => {
  it.each(FULL)('%s', (_what, reply, expected) => {
    expect(readAcquire(reply, 3, 1000)).toEqual(expected);
  });

  it.each(ROWS)('%s', (_what, reply, want, expected) => {
    expect(readAcquire(reply, want, 1000)).toEqual(expected);
  });
});

describe('sharedStateWarnings', () => {
  const keys = ['p:rate:{x}', 'p:rate-cfg:{x}', 'p:rate-probe:{x}'] as const;
  const heard = { limit: 30, windowMs: 6000, bucket: 'payment' };
  const reply = (over: Partial<AcquireReply>): AcquireReply => ({
    granted: 1,
    waitMs: 0,
    probe: false,
    redisNow: NOW,
    discarded: false,
    ...NOTHING,
    ...over,
  });

  it('says nothing of a reply that found nothing wrong', () => {
    expect(sharedStateWarnings(reply({}), keys, heard)).toEqual([]);
  });

  it('names the key, what the service said and that it was trusted, for each thing found wrong', () => {
    const found = sharedStateWarnings(
      reply({ discarded: true, overruled: true, foreign: 2, cutProbeLock: true }),
      keys,
      heard,
    );
    expect(found.map(([topic]) => topic)).toEqual(['discarded', 'overruled', 'foreign', 'probe-lock']);
    expect(found[1]?.[1]).toContain(
      '(p:rate-cfg:{x}) contradicts what the service answered this process (30 payment requests per 6 s); trusting the service',
    );
    expect(found[2]?.[1]).toContain('p:rate:{x}');
    expect(found[3]?.[1]).toContain('p:rate-probe:{x}');
  });
});
