/**
 * One small command interface over the two Redis clients merchants already run:
 * ioredis (`client.call(...)`) and node-redis v4+ (`client.sendCommand([...])`). The stores
 * only ever send raw commands through it, so this subpath never imports either package.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { ConfigurationError, MyrGatewayError } from '../core/errors/base.js';

/**
 * An ioredis client (`new Redis()`) or a connected node-redis client (`createClient()`,
 * v4 or later). Typed structurally so neither package is needed to compile against this one.
 */
export type RedisClientLike =
  | {
      /** ioredis: sends one raw command. */
      call(command: string, ...args: (string | number)[]): Promise<unknown>;
    }
  | {
      /** node-redis: sends one raw command. */
      sendCommand(args: string[]): Promise<unknown>;
    };

/** Options shared by the Redis stores. */
export interface RedisStoreOptions {
  /** An ioredis or node-redis (v4+) client, already configured and (for node-redis) connected. */
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
}

/**
 * Redis did not answer in time, refused the connection, or answered with an error.
 * The webhook handler turns it into a 503 (the gateway retries later); the client
 * falls back to a token of its own process.
 *
 * `cause` is only a short code (`timeout`, `ECONNREFUSED`, …): a Redis client's own
 * error can carry the command's arguments, and a token is one of them.
 *
 * @example
 * ```ts
 * try { await store.claim(key, 60_000); }
 * catch (error) { if (error instanceof RedisStoreError) answer503(); }
 * ```
 */
export class RedisStoreError extends MyrGatewayError {
  /** `'RedisStoreError'`, so logs show which error it is. */
  override name = 'RedisStoreError';
  constructor(message: string, cause: string) {
    super(message, { code: 'STORE_UNAVAILABLE', retryable: true, cause });
  }
}

/** A Lua script with its SHA1, for EVALSHA. */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

export function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Deletes KEYS[1] if it still holds ARGV[1] (a claim or a lock its holder gives back). */
export const COMPARE_AND_DELETE = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);
/** Extends KEYS[1] to ARGV[2] ms if it still holds ARGV[1]; 1 when it did. */
export const COMPARE_AND_PEXPIRE = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`);

/** The commands the stores need, with a timeout per operation. */
export interface RedisCommands {
  /** Sends one command; rejects with a {@link RedisStoreError}. */
  send(args: string[]): Promise<unknown>;
  /** EVALSHA, falling back to EVAL when the server does not know the script yet. */
  eval(s: Script, keys: string[], args: string[]): Promise<unknown>;
  /**
   * Queues an EVAL (by source: it must work on a restarted server that knows no script)
   * and ignores its outcome: undoes a command that timed out but may still run later.
   */
  compensate(s: Script, keys: string[], args: string[]): void;
}

function shortCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z_]{2,32}$/.test(code)) return code;
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && /^\w{1,40}$/.test(name) ? name : 'error';
}

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

/** Checks the options shared by the stores and adapts the client. */
export function adaptClient(options: RedisStoreOptions, what: string): { redis: RedisCommands; prefix: string } {
  if (options === null || typeof options !== 'object') throw new ConfigurationError(`${what} needs { client }`, 'client');
  const { client } = options;
  const prefix = options.keyPrefix ?? 'myr-gateway:';
  if (typeof prefix !== 'string' || prefix.length > 200) throw new ConfigurationError('keyPrefix must be a string of at most 200 characters', 'keyPrefix');
  const timeoutMs = options.timeoutMs ?? 1000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new ConfigurationError('timeoutMs must be a whole number of milliseconds from 1 to 60000', 'timeoutMs');
  }
  let raw: (args: string[]) => Promise<unknown>;
  const c = client as { call?: unknown; sendCommand?: unknown } | null;
  if (c && typeof c.call === 'function') {
    const call = c.call as (command: string, ...args: string[]) => Promise<unknown>;
    raw = (args) => call.apply(client, args as [string, ...string[]]);
  } else if (c && typeof c.sendCommand === 'function') {
    const send = c.sendCommand as (args: string[]) => Promise<unknown>;
    raw = (args) => send.call(client, args);
  } else {
    throw new ConfigurationError(`${what}: client must be an ioredis client or a node-redis (v4+) client`, 'client');
  }

  const send = (args: string[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new RedisStoreError(`Redis did not answer ${args[0] ?? ''} within ${timeoutMs} ms`, 'timeout'));
      }, timeoutMs);
      let pending: Promise<unknown>;
      try {
        pending = Promise.resolve(raw(args));
      } catch (error) {
        pending = Promise.reject(error as Error);
      }
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });

  const fail = (error: unknown, command: string): never => {
    if (error instanceof RedisStoreError) throw error;
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
      compensate(s, keys, args) {
        send(['EVAL', s.source, String(keys.length), ...keys, ...args]).catch(() => undefined);
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
