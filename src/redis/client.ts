/**
 * One small command interface over the Redis clients merchants already run: ioredis
 * (`Redis`, Sentinel-managed `Redis`, `Cluster`) and node-redis v4+ (`createClient`,
 * `createCluster`, `createSentinel`). The stores only ever send raw commands through it, so
 * this subpath never imports either package. Which client it is, and where a command goes,
 * is `topology.ts`; what is checked of the server at first use is `server-check.ts`.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { ConfigurationError, MyrGatewayError } from '../core/errors/base.js';
import { milliseconds } from '../core/milliseconds.js';
import { Log, type Logger } from '../core/observe/log.js';
import { within } from '../core/wait.js';
import { RedisStoreError } from './errors.js';
import { untilAnswered } from './failover.js';
import { checkServerOnce } from './server-check.js';
import { driveClient } from './topology.js';

export { RedisStoreError } from './errors.js';

/**
 * A Redis client the stores can drive, typed structurally so neither package is needed to
 * compile against this one: an ioredis `Redis` (one server, or `{ sentinels, name }`) or
 * `Cluster`, or a connected node-redis client from `createClient()`, `createCluster()` or
 * `createSentinel()` (v4 or later). Anything else is refused when the store is built.
 */
export type RedisClientLike =
  | {
      /** ioredis (`Redis`, `Cluster`): sends one raw command. */
      call(command: string, ...args: (string | number)[]): Promise<unknown>;
    }
  | {
      /** node-redis `createClient()`: `sendCommand(args)`; cluster and sentinel take routing arguments first. */
      sendCommand(...args: never[]): Promise<unknown>;
    };

/** Options shared by the Redis stores. */
export interface RedisStoreOptions {
  /**
   * The Redis client, already configured and (for node-redis) connected: ioredis `Redis`
   * (one server or Sentinel-managed) or `Cluster`; node-redis `createClient()`,
   * `createCluster()` or `createSentinel()`. Redis 5.0+ or Valkey 7.2+, checked at first use.
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client: new Cluster([{ host: 'redis-0', port: 6379 }]) });
   * ```
   */
  client: RedisClientLike;
  /**
   * Prefix of every key the store writes. Give two applications sharing one Redis
   * different prefixes.
   *
   * @default 'myr-gateway:'
   */
  keyPrefix?: string | undefined;
  /**
   * Milliseconds one Redis operation may take before it fails with a
   * {@link RedisStoreError}. Redis down or slow must fail fast, not queue.
   *
   * @default 1000
   */
  timeoutMs?: number | undefined;
  /**
   * Where the store's one-time warnings go: a server that may lose keys (`maxmemory-policy`
   * other than `noeviction`, or neither AOF nor RDB), or whose version could not be read.
   * Same shape as the client's `logger` (console, pino, winston).
   *
   * @default console.warn, prefixed `myr-gateway:`
   * @example
   * ```ts
   * new RedisTokenStore({ client: redis, logger: pino() });
   * ```
   */
  logger?: Logger | undefined;
}

/** A Lua script with its SHA1, for EVALSHA. */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

export function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Gives back (DEL) or, given a TTL in ms as ARGV[2], extends (PEXPIRE) each of KEYS that still
 * holds ARGV[1]: a claim or a lock its holder keeps or gives back (a webhook claim with its
 * payment's lock, in one step). Never touches anyone else's value, of any type. Answers for
 * KEYS[1]: 1 when it still held ARGV[1].
 */
export const COMPARE_AND_LET_GO = script(`
local r = 0
for i = #KEYS, 1, -1 do
  r = 0
  if redis.call('TYPE', KEYS[i]).ok == 'string' and redis.call('GET', KEYS[i]) == ARGV[1] then
    r = ARGV[2] and redis.call('PEXPIRE', KEYS[i], ARGV[2]) or redis.call('DEL', KEYS[i])
  end
end
return r`);

/** The commands the stores need, with a timeout per operation. */
export interface RedisCommands {
  /** Sends one command; rejects with a {@link RedisStoreError}. */
  send(args: string[]): Promise<unknown>;
  /** EVALSHA, falling back to EVAL when the server does not know the script yet. */
  eval(s: Script, keys: string[], args: string[]): Promise<unknown>;
  /**
   * Follows up a write whose answer was lost (`failure`, what it threw) with `s`, its undo or
   * its retry: once the client has settled that write (a client that holds commands through a
   * failover sends them to the promoted replica: the follow-up must come after), sends an EVAL
   * (by source: it must work on a promoted or restarted server that knows no script), retried
   * while Redis does not answer, for `forMs` at most. Its outcome is ignored; nothing waits.
   */
  compensate(s: Script, keys: string[], args: string[], failure?: unknown, forMs?: number): void;
}

/** The client's own promise of a command that outlived `timeoutMs`, by the error it failed with. */
const UNSETTLED = new WeakMap<object, Promise<unknown>>();

function shortCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z_]{2,32}$/.test(code)) return code;
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && /^\w{1,40}$/.test(name) ? name : 'error';
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

/**
 * Checks the options shared by the stores and adapts the client: every command is routed to
 * the node owning its key, bounded by `timeoutMs`, and preceded, once per client, by the
 * server check (version, and the warning when Redis may lose keys).
 */
export function adaptClient(options: RedisStoreOptions, what: string): { redis: RedisCommands; prefix: string } {
  if (options === null || typeof options !== 'object')
    throw new ConfigurationError(`${what} needs { client }`, 'client');
  const { client, logger } = options;
  const prefix = options.keyPrefix ?? 'myr-gateway:';
  if (typeof prefix !== 'string' || prefix.length > 200)
    throw new ConfigurationError('keyPrefix must be a string of at most 200 characters', 'keyPrefix');
  const timeoutMs = milliseconds(options.timeoutMs ?? 1000, 'timeoutMs', 1, 60_000);
  if (
    logger !== undefined &&
    (logger === null || typeof logger.warn !== 'function' || typeof logger.error !== 'function')
  ) {
    throw new ConfigurationError(`${what}: logger must have warn and error methods (console, pino, winston)`, 'logger');
  }
  const { send: raw } = driveClient(client, what);
  const log = new Log(logger, 'warn');

  const timed = (args: string[]): Promise<unknown> => {
    let pending: Promise<unknown>;
    try {
      const reply = raw(args);
      // A client that answers through callbacks returns no promise: its answer would be lost.
      pending = isThenable(reply)
        ? Promise.resolve(reply)
        : Promise.reject(new RedisStoreError(`the client returned no promise for ${args[0] ?? ''}`, 'no_promise'));
    } catch (error) {
      pending = Promise.reject(error);
    }
    return within(pending, {
      ms: timeoutMs,
      onTimeout: () => {
        const error = new RedisStoreError(`Redis did not answer ${args[0] ?? ''} within ${timeoutMs} ms`, 'timeout');
        UNSETTLED.set(error, pending);
        throw error;
      },
    });
  };

  // The server check runs before the first command of this client, once for all its stores.
  let checked = false;
  const send = async (args: string[]): Promise<unknown> => {
    if (!checked) {
      await checkServerOnce(client, timed, log);
      checked = true;
    }
    return timed(args);
  };

  const fail = (error: unknown, command: string): never => {
    if (error instanceof MyrGatewayError) throw error; // RedisStoreError, or RedisVersionError from the check
    throw new RedisStoreError(`Redis failed ${command} (${shortCode(error)})`, shortCode(error));
  };

  // EVAL caches the script on the server, so after the first EVAL each script goes by
  // its SHA: one round trip, without resending its source. NOSCRIPT (a restarted or
  // flushed server) goes back to EVAL once.
  const loaded = new Set<string>();
  return {
    prefix,
    redis: {
      send: (args) => send(args).catch((e: unknown) => fail(e, args[0] ?? '')),
      compensate(s, keys, args, failure, forMs = 0) {
        const write = (failure !== null && typeof failure === 'object' && UNSETTLED.get(failure)) || Promise.resolve();
        const undo = () =>
          send(['EVAL', s.source, String(keys.length), ...keys, ...args]).catch((e: unknown) => fail(e, 'EVAL'));
        void write
          .catch(() => undefined)
          .then(() => {
            const deadline = Date.now() + forMs;
            return untilAnswered(undo, () => deadline, true);
          })
          .catch(() => undefined);
      },
      async eval(s, keys, args) {
        const tail = [String(keys.length), ...keys, ...args];
        if (loaded.has(s.sha)) {
          try {
            return await send(['EVALSHA', s.sha, ...tail]);
          } catch (error) {
            if (!isNoScript(error)) fail(error, 'EVALSHA');
            loaded.delete(s.sha);
          }
        }
        const result = await send(['EVAL', s.source, ...tail]).catch((e: unknown) => fail(e, 'EVAL'));
        loaded.add(s.sha);
        return result;
      },
    },
  };
}
