/**
 * src/redis/client.ts adaptClient with a fake ioredis-shaped client: the options every Redis
 * store shares are checked when it is built; a Lua script is sent by SHA after its first EVAL
 * and by source again when the server forgot it (NOSCRIPT); an operation that does not answer
 * fails within timeoutMs; and a failure carries only the client's error code, never its text
 * (a Redis error may echo a password or a key). Real servers: test/integration/redis-*.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors/base.js';
import { adaptClient, RedisStoreError, script } from '../../../src/redis/client.js';

const INFO = 'redis_version:7.2.4\r\nmaxmemory_policy:noeviction\r\naof_enabled:1\r\n';
const SCRIPT = script("return redis.call('GET', KEYS[1])");

/** An ioredis-shaped client: INFO answers a healthy server; other commands go to `reply`. */
function fakeClient(reply: (args: string[]) => Promise<unknown>) {
  const sent: string[][] = [];
  const client = {
    call: (...args: string[]): Promise<unknown> => {
      if (args[0] === 'INFO') return Promise.resolve(INFO);
      sent.push(args);
      return reply(args);
    },
  };
  return { client, sent };
}

describe('adaptClient', () => {
  it.each([
    ['no options', undefined, 'client'],
    ['a keyPrefix that is not a string', { keyPrefix: 42 }, 'keyPrefix'],
    ['a keyPrefix over 200 characters', { keyPrefix: 'p'.repeat(201) }, 'keyPrefix'],
    ['timeoutMs 0', { timeoutMs: 0 }, 'timeoutMs'],
    ['timeoutMs over a minute', { timeoutMs: 60_001 }, 'timeoutMs'],
    ['fractional timeoutMs', { timeoutMs: 1.5 }, 'timeoutMs'],
    ['a logger without error()', { logger: { warn: () => undefined } }, 'logger'],
  ])('refuses %s with a ConfigurationError on %s', (_label, options, field) => {
    const merged =
      options === undefined ? undefined : { client: fakeClient(() => Promise.resolve('OK')).client, ...options };
    expect(() => adaptClient(merged as never, 'RedisTokenStore')).toThrow(ConfigurationError);
    try {
      adaptClient(merged as never, 'RedisTokenStore');
    } catch (error) {
      expect(error).toMatchObject({ field });
    }
  });

  it("defaults the prefix to 'myr-gateway:'", () => {
    expect(adaptClient({ client: fakeClient(() => Promise.resolve('OK')).client }, 'RedisTokenStore').prefix).toBe(
      'myr-gateway:',
    );
  });

  it('sends a script by source once, then by SHA; after NOSCRIPT (a restarted server) by source again', async () => {
    let serverKnows = false;
    const { client, sent } = fakeClient((args) => {
      if (args[0] === 'EVAL') {
        serverKnows = true;
        return Promise.resolve('v');
      }
      return serverKnows ? Promise.resolve('v') : Promise.reject(new Error('NOSCRIPT No matching script.'));
    });
    const { redis } = adaptClient({ client }, 'RedisTokenStore');
    await redis.eval(SCRIPT, ['k'], []);
    await redis.eval(SCRIPT, ['k'], []);
    serverKnows = false; // SCRIPT FLUSH or a restart
    await expect(redis.eval(SCRIPT, ['k'], [])).resolves.toBe('v');
    await redis.eval(SCRIPT, ['k'], []);
    expect(sent.map((args) => args[0])).toEqual(['EVAL', 'EVALSHA', 'EVALSHA', 'EVAL', 'EVALSHA']);
    expect(sent[1]).toEqual(['EVALSHA', SCRIPT.sha, '1', 'k']);
  });

  it("a failing command rejects with a RedisStoreError naming the command and the client's code, not its message", async () => {
    const secret = 'WRONGPASS invalid username-password pair: hunter2';
    const { client } = fakeClient(() => Promise.reject(Object.assign(new Error(secret), { code: 'WRONGPASS' })));
    const { redis } = adaptClient({ client }, 'RedisTokenStore');
    const error = await redis.send(['GET', 'myr-gateway:token:{ab}']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisStoreError);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
    expect((error as Error).message).toBe('Redis failed GET (WRONGPASS)');
    expect(JSON.stringify(error)).not.toContain('hunter2');
  });

  it('an operation that does not answer fails within timeoutMs, retryable', async () => {
    const { client } = fakeClient(() => new Promise(() => undefined));
    const { redis } = adaptClient({ client, timeoutMs: 20 }, 'RedisTokenStore');
    const error = await redis.send(['GET', 'k']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisStoreError);
    expect((error as Error).message).toBe('Redis did not answer GET within 20 ms');
    expect(error).toMatchObject({ retryable: true });
  });

  it('a client that answers through callbacks (no promise) fails the operation instead of losing the answer', async () => {
    // A JavaScript caller can pass such a client whatever the types say: it answers in a callback.
    const { client } = fakeClient(() => undefined as unknown as Promise<unknown>);
    const { redis } = adaptClient({ client }, 'RedisTokenStore');
    await expect(redis.send(['GET', 'k'])).rejects.toThrow(/returned no promise for GET/);
  });

  it('a follow-up of a write that timed out is sent only once the client settled that write, and again until Redis answers', async () => {
    let settleWrite!: () => void;
    let failures = 1;
    const { client, sent } = fakeClient((args) => {
      if (args[0] === 'SET') return new Promise((resolve) => (settleWrite = () => resolve('OK')));
      return failures-- > 0
        ? Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' }))
        : Promise.resolve(1);
    });
    const { redis } = adaptClient({ client, timeoutMs: 20 }, 'RedisWebhookStore');
    const failure = await redis.send(['SET', 'k', 'v']).catch((e: unknown) => e);
    redis.compensate(SCRIPT, ['k'], ['v'], failure, 5000);
    await new Promise((r) => setTimeout(r, 50));
    // The client still holds the write (it would send it to a promoted replica): no undo yet.
    expect(sent.map((args) => args[0])).toEqual(['SET']);
    settleWrite();
    await vi.waitFor(() => expect(sent.map((args) => args[0])).toEqual(['SET', 'EVAL', 'EVAL']));
    expect(sent[2]).toEqual(['EVAL', SCRIPT.source, '1', 'k', 'v']);
  });
});
