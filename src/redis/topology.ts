/**
 * Which Redis client the merchant passed, and how to send one raw command through it to the
 * node that owns its key. Six clients are driven: ioredis `Redis` (one server or managed by
 * Sentinel) and `Cluster`, and node-redis `createClient`, `createCluster` and
 * `createSentinel`. Each is recognised by the methods it has, not by a constructor name
 * (bundlers rename classes, and node-redis wraps its clients in proxies).
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';

/** The clients the stores can drive, as named in errors and logs. */
export type RedisClientKind =
  'ioredis' | 'ioredis Cluster' | 'node-redis' | 'node-redis cluster' | 'node-redis sentinel';

/** One raw command to Redis through the merchant's client: its promise, as the client returns it. */
export type RawSend = (args: string[]) => unknown;

/** What every refusal says the stores accept. */
export const SUPPORTED_CLIENTS =
  'an ioredis client or a node-redis (v4+) client: ioredis Redis (one server or Sentinel-managed) or Cluster; ' +
  'node-redis createClient(), createCluster() or createSentinel(), connected';

/** Commands without a key: a cluster client sends them to any node. */
const KEYLESS = new Set(['INFO', 'CONFIG', 'PING', 'TIME']);

/**
 * The key a command is routed by in a cluster: the first key of EVAL/EVALSHA (`args[3]` when
 * `numkeys > 0`), none for server commands, otherwise `args[1]`. Every multi-key script of the
 * stores keeps its keys under one hash tag (`…{<hash>}`), so the first key names the slot of all.
 *
 * @example
 * ```ts
 * routingKey(['EVALSHA', sha, '2', 'p:token:{ab}', 'p:token-lock:{ab}']); // 'p:token:{ab}'
 * ```
 */
export function routingKey(args: readonly string[]): string | undefined {
  const command = (args[0] ?? '').toUpperCase();
  if (command === 'EVAL' || command === 'EVALSHA') return Number(args[2]) > 0 ? args[3] : undefined;
  return KEYLESS.has(command) ? undefined : args[1];
}

function method(client: object, name: string): ((...args: never[]) => unknown) | undefined {
  // A property of a client of unknown kind; only a function is returned.
  const value = (client as Record<string, unknown>)[name];
  return typeof value === 'function' ? (value as (...args: never[]) => unknown) : undefined; // never[]: callable only after a cast to its documented signature
}

/** node-redis v4's `v4` getter throws outside legacyMode; later versions have none. */
function inLegacyMode(client: object): boolean {
  try {
    return (client as { v4?: unknown }).v4 !== undefined; // a property read, checked for presence only
  } catch {
    return false;
  }
}

/**
 * Recognises `client` and returns how to send a raw command through it.
 * Throws {@link ConfigurationError} (field `client`) for anything else, naming what is supported.
 *
 * @example
 * ```ts
 * const { kind, send } = driveClient(createCluster({ rootNodes }), 'RedisWebhookStore');
 * await send(['GET', 'myr-gateway:token:{ab}']); // sent to the node owning slot of '{ab}'
 * ```
 */
export function driveClient(client: unknown, what: string): { kind: RedisClientKind; send: RawSend } {
  const refuse = (why: string): never => {
    throw new ConfigurationError(`${what}: client ${why}; pass ${SUPPORTED_CLIENTS}`, 'client');
  };
  if (client === null || typeof client !== 'object') return refuse('is missing');

  // ioredis: `call(command, ...args)` on Redis, Sentinel-managed Redis and Cluster alike;
  // Cluster routes by the key positions it knows for every command, EVAL included.
  const call = method(client, 'call');
  if (call) {
    // ioredis: call(command, ...args), its documented signature; isCluster is true on a Cluster only.
    const send = call as (...args: string[]) => unknown;
    const kind = (client as { isCluster?: unknown }).isCluster === true ? 'ioredis Cluster' : 'ioredis'; // see above
    return { kind, send: (args) => send.apply(client, args) };
  }

  const sendCommand = method(client, 'sendCommand');
  if (!sendCommand) return refuse('has neither call() (ioredis) nor sendCommand() (node-redis)');
  // node-redis cluster: sendCommand(firstKey, isReadonly, args); the slot is the first key's.
  // isReadonly false: reads go to the master too, a replica may lag behind a token just written.
  if (method(client, 'getSlotMaster') || method(client, 'nodeClient')) {
    const send = sendCommand as (firstKey: string | undefined, isReadonly: boolean, args: string[]) => unknown; // node-redis cluster: sendCommand(firstKey, isReadonly, args)
    return { kind: 'node-redis cluster', send: (args) => send.call(client, routingKey(args), false, args) };
  }
  // A lease from sentinel.acquire() is exclusive and ends at release(): the stores would keep
  // it for the life of the process. They take the sentinel object itself.
  if (method(client, 'release') && method(client, '_execute'))
    return refuse('is a lease from createSentinel().acquire()');
  // node-redis sentinel: sendCommand(isReadonly, args), sent to the current master.
  if (method(client, 'getSentinelNode') || method(client, 'getMasterNode')) {
    const send = sendCommand as (isReadonly: boolean, args: string[]) => unknown; // node-redis sentinel: sendCommand(isReadonly, args)
    return { kind: 'node-redis sentinel', send: (args) => send.call(client, false, args) };
  }
  // A node-redis v4 client in legacyMode answers through callbacks: its promise API is `.v4`.
  if (inLegacyMode(client)) return refuse('is a node-redis client in legacyMode (pass client.v4)');
  const send = sendCommand as (args: string[]) => unknown; // node-redis client: sendCommand(args)
  return { kind: 'node-redis', send: (args) => send.call(client, args) };
}
