/**
 * What the stores check of the Redis server at their first use, once per client: its version
 * (a too-old server fails every operation with {@link RedisVersionError}, never a silent
 * fallback), and whether it may lose keys (one warning: eviction, or no persistence at all).
 *
 * Managed Redis varies: INFO may be refused, fields may be missing, CONFIG is often disabled.
 * What cannot be read is not guessed: a version it cannot read is one warning and the stores
 * go on; a persistence setting it cannot read is no warning.
 *
 * @module
 */
import type { Log } from '../core/observe/log.js';
import { MINIMUM_REDIS_VERSION, MINIMUM_VALKEY_VERSION, RedisStoreError, RedisVersionError } from './errors.js';

/** One command through the store's adapter, with its timeout. */
type Send = (args: string[]) => Promise<unknown>;

/** The INFO fields the check reads, from every node that answered. */
export interface ServerFacts {
  /** `'Redis 7.0.15'`, `'Valkey 8.0.1'`; undefined when INFO had no version. */
  server?: string | undefined;
  /** False when the version is below the minimum for that server. */
  supported: boolean;
  /** `maxmemory_policy`, when INFO memory has it. */
  maxmemoryPolicy?: string | undefined;
  /** `aof_enabled` (`1` is true), when INFO persistence has it. */
  aofEnabled?: boolean | undefined;
}

/** Texts of an INFO reply: a string or Buffer, or (a cluster client fanning out) an array or map of them. */
function texts(reply: unknown): string[] {
  if (typeof reply === 'string') return [reply];
  if (reply instanceof Uint8Array) return [Buffer.from(reply).toString()];
  if (Array.isArray(reply)) return reply.flatMap(texts);
  if (reply instanceof Map) return [...reply.values()].flatMap(texts);
  if (reply !== null && typeof reply === 'object') return Object.values(reply).flatMap(texts);
  return [];
}

function atLeast(version: string, minimum: string): boolean {
  const have = version.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const need = minimum.split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    if ((have[i] ?? 0) !== need[i]) return (have[i] ?? 0) > (need[i] ?? 0);
  }
  return true;
}

/**
 * Reads version, eviction policy and AOF from an INFO reply. With several nodes, the oldest
 * version decides and any node's risk counts.
 *
 * @example
 * ```ts
 * readInfo('# Server\r\nredis_version:4.0.14\r\n').supported; // false
 * ```
 */
export function readInfo(reply: unknown): ServerFacts {
  const facts: ServerFacts = { supported: true };
  for (const text of texts(reply)) {
    const fields = new Map<string, string>();
    for (const line of text.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
    }
    // Valkey also reports redis_version (7.2.4, for clients that read it); its own is valkey_version.
    const valkey = fields.get('server_name') === 'valkey' || fields.has('valkey_version');
    const version = valkey
      ? (fields.get('valkey_version') ?? fields.get('redis_version'))
      : fields.get('redis_version');
    if (version !== undefined && /^\d+(\.\d+)*/.test(version)) {
      const ok = atLeast(version, valkey ? MINIMUM_VALKEY_VERSION : MINIMUM_REDIS_VERSION);
      if (facts.server === undefined || (facts.supported && !ok))
        facts.server = `${valkey ? 'Valkey' : 'Redis'} ${version}`;
      facts.supported &&= ok;
    }
    const policy = fields.get('maxmemory_policy');
    if (policy !== undefined && policy !== 'noeviction') facts.maxmemoryPolicy = policy;
    else facts.maxmemoryPolicy ??= policy;
    const aof = fields.get('aof_enabled');
    if (aof !== undefined) facts.aofEnabled = (facts.aofEnabled ?? true) && aof === '1';
  }
  return facts;
}

/** An error Redis answered (ERR, NOPERM, …), as opposed to no answer at all. */
function isReply(error: unknown): boolean {
  if (error instanceof RedisStoreError) return false;
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown }; // a client's error; the fields are checked before use
  return name === 'ReplyError' || name === 'ErrorReply' || (typeof message === 'string' && /^[A-Z]{2,} /.test(message));
}

/** Whether `CONFIG GET save` says RDB snapshots are off; false when CONFIG is refused (managed Redis). */
async function rdbOff(send: Send): Promise<boolean> {
  try {
    const reply = await send(['CONFIG', 'GET', 'save']);
    // ['save', '900 1 …'] over RESP2, { save: '…' } over RESP3 / node-redis.
    const value: unknown = Array.isArray(reply)
      ? reply[1]
      : reply !== null && typeof reply === 'object'
        ? (reply as Record<string, unknown>)['save']
        : undefined;
    const text = value instanceof Uint8Array ? Buffer.from(value).toString() : value;
    return text === '';
  } catch {
    return false;
  }
}

async function inspectServer(send: Send, log: Log): Promise<void> {
  const needs = `the Redis stores need Redis ${MINIMUM_REDIS_VERSION}+ or Valkey ${MINIMUM_VALKEY_VERSION}+`;
  let info: unknown;
  try {
    info = await send(['INFO']);
  } catch (error) {
    if (!isReply(error)) throw error; // no answer: the operation fails as it would have, the check runs again next time
    log.write('warn', `Redis refused INFO, so its version was not checked: ${needs}.`);
    return;
  }
  const facts = readInfo(info);
  if (facts.server === undefined)
    log.write('warn', `Redis's INFO has no redis_version, so its version was not checked: ${needs}.`);
  else if (!facts.supported) {
    const error = new RedisVersionError(facts.server);
    log.write('error', error.message);
    throw error;
  }
  const risks: string[] = [];
  if (facts.maxmemoryPolicy !== undefined && facts.maxmemoryPolicy !== 'noeviction') {
    risks.push(
      `maxmemory-policy is ${facts.maxmemoryPolicy} (every key of the stores has a TTL, so volatile-* policies evict them too)`,
    );
  }
  if (facts.aofEnabled === false && (await rdbOff(send)))
    risks.push('neither AOF nor RDB persistence is on (a restart forgets every key)');
  if (risks.length > 0) {
    log.write(
      'warn',
      `Redis may lose the stores' keys: ${risks.join('; ')}. A lost webhook record lets a callback already handled run again; ` +
        'run Redis with appendonly yes and maxmemory-policy noeviction (docs/fleet.md).',
    );
  }
}

const checks = new WeakMap<object, Promise<void>>();

/**
 * Checks the server behind `client` once, however many stores share the client. Rejects with
 * {@link RedisVersionError} (kept: every later call gets it too) or, when Redis did not answer,
 * with the {@link RedisStoreError} of that attempt (not kept: the next call checks again).
 *
 * @example
 * ```ts
 * await checkServerOnce(client, send, log); // then send the store's own command
 * ```
 */
export function checkServerOnce(client: object, send: Send, log: Log): Promise<void> {
  let check = checks.get(client);
  if (!check) {
    check = inspectServer(send, log);
    checks.set(client, check);
    check.catch((error: unknown) => {
      if (!(error instanceof RedisVersionError)) checks.delete(client);
    });
  }
  return check;
}
