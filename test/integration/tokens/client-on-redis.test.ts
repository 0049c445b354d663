/**
 * Issue 14 items 6, 7 and 10, through the public API against a real redis-server on both
 * clients: no Redis value holds a usable token (sealed with AES-GCM; a forged value is a miss,
 * warned once); token freshness follows Redis's clock, so a process whose clock is 5 s off
 * misleads nobody; a short-lived token written by one process serves the others; and one call
 * waits on a Redis that does not answer for `tokenStoreTimeout` once, not once per operation.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { RedisRateLimiter, RedisTokenStore } from '../../../src/redis/index.js';
import { createMockGateway } from '../../../src/testing/index.js';
import { clientFor, paymentParams } from '../../helpers/client.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer } from '../../helpers/redis.js';
import { MANY_CLIENTS_WARNING, warningLogger } from '../../helpers/warnings.js';

const LIFETIME_S = 4;
/** The command rules docs/fleet.md recommends for the SDK's Redis user. */
const ACL_RULES = ['-@all', '+@read', '+@write', '+@scripting', '+time', '-@dangerous'];
const mock = createMockGateway({ tokenTtlSeconds: LIFETIME_S, rateLimits: { auth: 1000, paymentRequest: 1000 } });
let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
  mock.listen();
});
afterEach(() => mock.reset());
afterAll(async () => {
  mock.close();
  await server.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const auths = () => mock.count('auth');
const bearerTokens = () => [
  ...new Set(
    mock.requests.flatMap((r) => (r.endpoint === 'payment.create' ? [r.headers.authorization?.slice(7) ?? ''] : [])),
  ),
];

/** A logger keeping the client's warnings. */
function warnLog() {
  const warnings: string[] = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (m: unknown) => void warnings.push(String(m)),
    error: () => undefined,
  };
  return { logger, warnings };
}

let n = 0;
describe.each(CLIENT_KINDS)('tokens in Redis through %s', (kind) => {
  let conn: Awaited<ReturnType<typeof connect>>;
  let prefix: string;
  const send = (args: string[]) => rawCommand(conn.client, args);
  /** A client with a store of its own over the shared Redis: a process of the fleet. */
  const process = (extra: Parameters<typeof clientFor>[1] = {}, marginMs?: number) =>
    clientFor(mock, {
      tokenStore: new RedisTokenStore({
        client: conn.client,
        keyPrefix: prefix,
        pollIntervalMs: 5,
        refreshMarginMs: marginMs,
      }),
      ...(marginMs === undefined ? {} : { tokenRefreshMarginMs: marginMs }),
      ...extra,
    }).gateway;
  beforeAll(async () => {
    conn = await connect(kind, server.url);
  });
  afterAll(() => conn.close());
  beforeEach(() => {
    prefix = `c:${kind}:${++n}:`;
  });

  it('no Redis value contains the access token, before or after a TOKEN_EXPIRED replacement', async () => {
    const [a, b] = [process(), process()];
    await a.payments.create(paymentParams());
    mock.expireTokens();
    await Promise.all([a.payments.create(paymentParams()), b.payments.create(paymentParams())]);
    const tokens = bearerTokens();
    expect(tokens).toHaveLength(2);
    const names = (await send(['KEYS', '*'])) as string[];
    const values = await Promise.all(
      names.map(async (name) => ((await send(['TYPE', name])) === 'string' ? String(await send(['GET', name])) : '')),
    );
    expect(values.some((v) => v.includes('"accessToken":"v1.'))).toBe(true);
    for (const token of tokens) expect(values.join('\n')).not.toContain(token);
  });

  it('a forged or altered value is a miss: the call fetches its own token, with one warning', async () => {
    await process().payments.create(paymentParams());
    const [name] = (await send(['KEYS', `${prefix}token:*`])) as string[];
    const value = JSON.parse(String(await send(['GET', name!]))) as { accessToken: string; lifetimeMs: number };
    const i = value.accessToken.length - 10; // inside the ciphertext, not its last (partly padding) character
    const flipped =
      value.accessToken.slice(0, i) + (value.accessToken[i] === 'A' ? 'B' : 'A') + value.accessToken.slice(i + 1);
    await send(['SET', name!, JSON.stringify({ ...value, accessToken: flipped }), 'PX', '60000']);
    const { logger, warnings } = warnLog();
    const payment = await process({ logger }).payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(auths()).toBe(2);
    expect(warnings.filter((w) => /cannot open/.test(w))).toHaveLength(1);
  });

  it('a short-lived token written by one process serves another: no second token request', async () => {
    await process().payments.create(paymentParams());
    await process().payments.create(paymentParams());
    expect(auths()).toBe(1);
  });

  it('a process whose clock is 5 s behind does not make the others think a valid token stale', async () => {
    await process({ now: () => Date.now() - 5_000 }).payments.create(paymentParams());
    await sleep(1_000);
    await process().payments.create(paymentParams());
    expect(auths()).toBe(1);
  });

  it('a process whose clock is 5 s ahead does not make the others use an expired token', async () => {
    // This file's 20th client of one merchant is made here: the process says so once.
    const consoleWarn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    onTestFinished(() => {
      expect(consoleWarn.mock.calls.every(([m]) => MANY_CLIENTS_WARNING.test(String(m)))).toBe(true);
      consoleWarn.mockRestore();
    });
    await process({ now: () => Date.now() + 5_000 }).payments.create(paymentParams());
    await sleep(LIFETIME_S * 1000 + 500);
    // A small margin: the reader would use the token up to half a second before its expiry.
    await process({}, 500).payments.create(paymentParams());
    expect(mock.requests.filter((r) => r.status === 401)).toEqual([]);
    expect(auths()).toBe(2);
  }, 10_000);
});

describe.each(CLIENT_KINDS)('a Redis user limited to the prefix (docs/fleet.md ACL), through %s', (kind) => {
  it('serves the token store, and reads nothing outside its prefix', async () => {
    const admin = await connect(kind, server.url);
    const user = `myr-${kind}`;
    await rawCommand(admin.client, [
      'ACL',
      'SETUSER',
      user,
      'reset',
      'on',
      '>acl-test-password',
      `~${user}:*`,
      'resetchannels',
      ...ACL_RULES,
    ]);
    await rawCommand(admin.client, ['SET', 'other-app:secret', 'x']);
    // ioredis's ready check sends INFO, which the rules refuse: it says so once and goes on.
    const consoleWarn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const limited = await connect(kind, server.url.replace('redis://', `redis://${user}:acl-test-password@`));
    expect(
      consoleWarn.mock.calls.every(([m]) => /ready check because INFO command fails: "NOPERM/.test(String(m))),
    ).toBe(true);
    consoleWarn.mockRestore();
    try {
      // INFO is refused here too: each store says once that it could not check the version.
      const { lines, logger } = warningLogger();
      const { gateway } = clientFor(mock, {
        tokenStore: new RedisTokenStore({ client: limited.client, keyPrefix: `${user}:`, logger }),
      });
      await gateway.payments.create(paymentParams());
      await clientFor(mock, {
        tokenStore: new RedisTokenStore({ client: limited.client, keyPrefix: `${user}:`, logger }),
      }).gateway.payments.create(paymentParams());
      expect(auths()).toBe(1);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((line) => /Redis refused INFO, so its version was not checked/.test(line))).toBe(true);
      await expect(rawCommand(limited.client, ['GET', 'other-app:secret'])).rejects.toThrow(/NOPERM/);
      await expect(rawCommand(limited.client, ['FLUSHALL'])).rejects.toThrow(/NOPERM/);
    } finally {
      await limited.close();
      await admin.close();
    }
  });
});

describe.each(CLIENT_KINDS)('a Redis that does not answer, through %s', (kind) => {
  let paused: RedisServer;
  let conn: Awaited<ReturnType<typeof connect>>;
  beforeEach(async () => {
    paused = await RedisServer.start();
    conn = await connect(kind, paused.url);
  });
  afterEach(async () => {
    await conn.close();
    await paused.stop();
  });
  /** From now on the server takes commands and never answers them. */
  const pause = async () => {
    const admin = await connect(kind, paused.url);
    await rawCommand(admin.client, ['CLIENT', 'PAUSE', '20000', 'ALL']);
    await admin.close();
  };
  // One budget, with a margin of most of a budget for a loaded machine: stacked waits take 2 or 3 budgets.
  const BUDGET_MS = 1500;
  // The stores' own timeouts are longer than the call's budget, so that the budget is what ends
  // each wait: two equal timers fire in either order on a loaded machine (a store's own timeout
  // first is a 'failed' warning, then a second one for the refresh).
  const STORE_TIMEOUT_MS = 4 * BUDGET_MS;
  const client = () => {
    const { logger, warnings } = warnLog();
    const tokenStore = new RedisTokenStore({ client: conn.client, timeoutMs: STORE_TIMEOUT_MS });
    return { gateway: clientFor(mock, { logger, tokenStoreTimeout: BUDGET_MS, tokenStore }).gateway, warnings };
  };
  const timed = async <T>(work: Promise<T>) => {
    const started = performance.now();
    const result = await work;
    return { result, elapsed: performance.now() - started };
  };

  it('a cold call waits on the store for tokenStoreTimeout in all, then runs on a token of its own', async () => {
    await pause();
    const { gateway, warnings } = client();
    const { result, elapsed } = await timed(gateway.payments.create(paymentParams()));
    expect(result.payment_id).toMatch(/^PAY_/);
    expect(auths()).toBe(1);
    // Get, refresh lock and write share one budget; each on its own took a budget (2 budgets or more).
    expect(elapsed).toBeLessThan(1.9 * BUDGET_MS);
    expect(warnings.filter((w) => /token store/.test(w))).toHaveLength(1);
  }, 10_000);

  it('a cold create on a token store and a rate limiter that both wait on it spends one store budget, not one per store', async () => {
    await pause();
    const { logger, warnings } = warnLog();
    const tokenStore = new RedisTokenStore({ client: conn.client, timeoutMs: STORE_TIMEOUT_MS });
    const rateLimiter = new RedisRateLimiter({ client: conn.client, timeoutMs: STORE_TIMEOUT_MS });
    const { gateway } = clientFor(mock, { logger, tokenStoreTimeout: BUDGET_MS, tokenStore, rateLimiter });
    const { result, elapsed } = await timed(gateway.payments.create(paymentParams()));
    expect(result.payment_id).toMatch(/^PAY_/);
    // The token store's wait, then the limiter's: two budgets.
    expect(elapsed).toBeLessThan(1.9 * BUDGET_MS);
    expect(
      warnings.filter((w) => /token store/.test(w)),
      warnings.join('\n'),
    ).toHaveLength(1);
    expect(
      warnings.filter((w) => /RedisRateLimiter/.test(w)),
      warnings.join('\n'),
    ).toHaveLength(1);
  }, 10_000);

  it('a call renewing a refused token waits on the store for tokenStoreTimeout in all (read, renewal, read again)', async () => {
    const { gateway, warnings } = client();
    await gateway.payments.create(paymentParams());
    await pause();
    mock.fault({ endpoint: 'payment.create', response: { type: 'tokenExpired' } });
    const { result, elapsed } = await timed(gateway.payments.create(paymentParams()));
    expect(result.payment_id).toMatch(/^PAY_/);
    expect(auths()).toBe(2);
    // Each of the three reads on its own took a budget (3 budgets or more).
    expect(elapsed).toBeLessThan(1.9 * BUDGET_MS);
    expect(warnings.filter((w) => /token store/.test(w))).toHaveLength(1);
  }, 10_000);
});
