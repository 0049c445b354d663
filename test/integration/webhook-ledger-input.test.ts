/**
 * Shared state is input: whoever can write the Redis prefix must not be able to suppress a
 * fulfilment (`SET …webhook:payment:PAY_X:SUCCESS done`) or block it (any other value, no
 * TTL). The handler runs the callback and reports the foreign value. Real Redis, both clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisWebhookStore, type RedisWebhookStoreOptions } from '../../src/redis/index.js';
import { signCallback } from '../../src/testing/index.js';
import { createWebhookHandler } from '../../src/webhooks/index.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer } from '../helpers/redis.js';

const API_KEY = 'sk_test_ledger_input_0001';
let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(() => server.stop());

let n = 0;
describe.each(CLIENT_KINDS)('%s', (kind) => {
  let conn: Awaited<ReturnType<typeof connect>>;
  beforeAll(async () => {
    conn = await connect(kind, server.url);
  });
  afterAll(() => conn.close());

  it.each([
    ['suppress: a bare done', ['done'], {}],
    ['block: another value, no TTL', ['locked-by-someone'], {}],
    ['suppress: a done with a TTL, under authenticateWith', ['done', 'PX', '86400000'], { authenticateWith: API_KEY }],
  ] as const)(
    '%s → onEvent runs once and onError reports it',
    async (_, value, extra: Partial<RedisWebhookStoreOptions>) => {
      n += 1;
      const payment = `PAY_INPUT_${kind}_${n}`;
      const prefix = `in:${kind}:`;
      await rawCommand(conn.client, ['SET', `${prefix}webhook:payment:${payment}:SUCCESS`, ...value]);
      const runs: string[] = [];
      const errors: string[] = [];
      const levels: string[] = [];
      const at = (level: string) => () => void levels.push(level);
      const handler = createWebhookHandler({
        logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
        verifier: { apiKey: API_KEY },
        store: new RedisWebhookStore({ client: conn.client, keyPrefix: prefix, ...extra }),
        onEvent: (event) => void runs.push(event.signed.payment_id),
        onError: (error) => void errors.push(error.message),
      });
      const { rawBody, headers } = await signCallback(API_KEY, {
        payment_id: payment,
        reference_id: `ORDERIN${n}`,
        amount: 5,
        status: 'SUCCESS',
      });
      const answer = await handler.handle({ body: rawBody, headers });
      expect(answer.body.outcome).toBe('processed');
      expect(runs).toEqual([payment]);
      expect(errors).toEqual([expect.stringContaining('did not write')]);
      expect(levels).toEqual(['warn']); // reported, but the callback was handled
      expect((await handler.handle({ body: rawBody, headers })).body.outcome).toBe('duplicate');
    },
  );
});
