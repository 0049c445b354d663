/**
 * src/redis/topology.ts with fake clients shaped like the six the stores drive: each is
 * recognised by its methods, every command reaches the node that owns its key (node-redis
 * cluster routes by the key the SDK names, reads included on the master), and a client the
 * stores cannot drive is refused when the store is built, naming what to pass instead. The
 * real clients against real servers: test/integration/redis-topologies.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors/base.js';
import { driveClient, routingKey } from '../../../src/redis/topology.js';

const SCRIPT_ARGS = ['EVALSHA', 'abc123', '2', 'p:token:{ab}', 'p:token-lock:{ab}', 'owner'];

describe('routingKey', () => {
  it.each([
    [['GET', 'p:token:{ab}'], 'p:token:{ab}'],
    [['set', 'p:claim:{cd}', 'v', 'PX', '1000'], 'p:claim:{cd}'],
    [SCRIPT_ARGS, 'p:token:{ab}'],
    [['EVAL', 'return 1', '0'], undefined],
    [['INFO'], undefined],
    [['CONFIG', 'GET', 'save'], undefined],
    [['TIME'], undefined],
    [[], undefined],
  ])('%j → %s', (args, key) => {
    expect(routingKey(args)).toBe(key);
  });
});

/** Records every call with its arguments; answers 'OK'. */
function recorder() {
  const calls: unknown[][] = [];
  const answer = (...args: unknown[]) => {
    calls.push(args);
    return Promise.resolve('OK');
  };
  return { calls, answer };
}

describe('driveClient', () => {
  it('ioredis Redis and Cluster: call(command, ...args) on the client itself', async () => {
    for (const [extra, kind] of [
      [{}, 'ioredis'],
      [{ isCluster: true }, 'ioredis Cluster'],
    ] as const) {
      const { calls, answer } = recorder();
      const client = {
        ...extra,
        call(this: unknown, ...args: unknown[]) {
          expect(this).toBe(client);
          return answer(...args);
        },
      };
      const driven = driveClient(client, 'RedisTokenStore');
      expect(driven.kind).toBe(kind);
      await expect(driven.send(['GET', 'k'])).resolves.toBe('OK');
      expect(calls).toEqual([['GET', 'k']]);
    }
  });

  it('node-redis createClient: sendCommand(args)', async () => {
    const { calls, answer } = recorder();
    const driven = driveClient({ sendCommand: answer }, 'RedisTokenStore');
    expect(driven.kind).toBe('node-redis');
    await driven.send(['GET', 'k']);
    expect(calls).toEqual([[['GET', 'k']]]);
  });

  it('node-redis cluster: sendCommand(first key, not read-only, args), so a script goes to the slot of its keys and reads see the master', async () => {
    const { calls, answer } = recorder();
    const driven = driveClient({ sendCommand: answer, getSlotMaster: () => undefined }, 'RedisTokenStore');
    expect(driven.kind).toBe('node-redis cluster');
    await driven.send(SCRIPT_ARGS);
    await driven.send(['GET', 'p:token:{ab}']);
    expect(calls).toEqual([
      ['p:token:{ab}', false, SCRIPT_ARGS],
      ['p:token:{ab}', false, ['GET', 'p:token:{ab}']],
    ]);
  });

  it('node-redis sentinel: sendCommand(not read-only, args), to the master', async () => {
    const { calls, answer } = recorder();
    const driven = driveClient({ sendCommand: answer, getMasterNode: () => undefined }, 'RedisWebhookStore');
    expect(driven.kind).toBe('node-redis sentinel');
    await driven.send(['GET', 'k']);
    expect(calls).toEqual([[false, ['GET', 'k']]]);
  });

  const refused: Array<[string, unknown, RegExp]> = [
    ['nothing', undefined, /client is missing/],
    ['a URL string', 'redis://localhost:6379', /client is missing/],
    [
      'an object without a command method',
      { get: () => undefined },
      /neither call\(\) \(ioredis\) nor sendCommand\(\) \(node-redis\)/,
    ],
    [
      'a lease from sentinel.acquire()',
      { sendCommand: () => undefined, release: () => undefined, _execute: () => undefined },
      /lease from createSentinel\(\)\.acquire\(\)/,
    ],
    [
      'a node-redis v4 client in legacyMode',
      { sendCommand: () => undefined, v4: {} },
      /legacyMode \(pass client\.v4\)/,
    ],
  ];
  it.each(refused)('refuses %s with a ConfigurationError on `client` that says what to pass', (_label, client, why) => {
    let thrown: unknown;
    try {
      driveClient(client, 'RedisTokenStore');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect(thrown).toMatchObject({ field: 'client' });
    expect((thrown as Error).message).toMatch(why);
    expect((thrown as Error).message).toMatch(/^RedisTokenStore: .*pass an ioredis client or a node-redis/);
  });

  it('a node-redis 5 client, whose v4 getter throws outside legacyMode, is driven as node-redis', () => {
    const client = {
      sendCommand: () => Promise.resolve('OK'),
      get v4(): never {
        throw new Error('not in legacy mode');
      },
    };
    expect(driveClient(client, 'RedisTokenStore').kind).toBe('node-redis');
  });
});
