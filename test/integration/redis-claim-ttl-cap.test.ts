/**
 * RedisWebhookStore caps the claim it writes at 15 min (MAX_CLAIM_TTL_MS), while the handler and
 * runOnce renew every third of their inFlightTtlMs: an inFlightTtlMs whose renewal comes after
 * the capped claim has ended lets another delivery or job take the key while the first runs.
 * Real redis-server, through the public runOnce.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisWebhookStore } from '../../src/redis/index.js';
import { runOnce, WebhookHandlerError } from '../../src/webhooks/index.js';
import { ConfigurationError } from '../../src/core/errors/base.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer } from '../helpers/redis.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(() => server.stop());

describe.each(CLIENT_KINDS)('RedisWebhookStore on %s', (kind) => {
  it('a claim lasts until the run renews it: an inFlightTtlMs renewed after the capped claim ended is refused, and the work does not run', async () => {
    const client = await connect(kind, server.url);
    try {
      const store = new RedisWebhookStore({ client: client.client, keyPrefix: `cap:${kind}:` });
      const inFlightTtlMs = 3_600_000; // renewed every 20 min
      let left: unknown;
      const result = runOnce(
        store,
        'payment:PAY_CAP:SUCCESS',
        async () => {
          left = await rawCommand(client.client, ['PTTL', `cap:${kind}:webhook:payment:PAY_CAP:SUCCESS`]);
        },
        { inFlightTtlMs },
      );
      const refused = await result.then(
        () => undefined,
        (error: unknown) => error,
      );
      // Before the fix the work ran holding a claim of 15 min, with its first renewal at 20 min.
      expect(left).toBeUndefined();
      expect(refused).toBeInstanceOf(WebhookHandlerError);
      expect((refused as WebhookHandlerError).cause).toBeInstanceOf(ConfigurationError);
      // Still runs with an inFlightTtlMs the store can hold between renewals, for all of it.
      const held = await runOnce(
        store,
        'payment:PAY_CAP_OK:SUCCESS',
        async () => Number(await rawCommand(client.client, ['PTTL', `cap:${kind}:webhook:payment:PAY_CAP_OK:SUCCESS`])),
        { inFlightTtlMs: 900_000 },
      );
      expect(held.outcome).toBe('processed');
      expect(held.outcome === 'processed' && held.value).toBeGreaterThan(900_000 / 3);
    } finally {
      await client.close();
    }
  });
});
