/**
 * The one claim-and-run path, through the public API: the handler and `runOnce` map each
 * outcome of a run the same way whichever store ran it (a fake transactional store here, so
 * every outcome of the SQL ledger can be produced on demand), a superseded callback is an
 * outcome and not an error, and the millisecond options follow one range rule.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors/base.js';
import {
  MemoryWebhookStore,
  WebhookHandlerError,
  WebhookVerifier,
  createWebhookHandler,
  paymentKey,
  runOnce,
  type LedgerRun,
  type TransactionalWebhookStore,
  type WebhookEvent,
} from '../../../src/webhooks/index.js';
import { API_KEY, NOW, callback } from '../../fixtures/webhook-vectors-helpers.js';

const verifier = new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW });

/** The merchant's own transaction type, as a SQL client would have it. */
interface FakeTx {
  query(sql: string): void;
}

type RunOptions = Parameters<TransactionalWebhookStore<FakeTx>['run']>[2];

/**
 * A transactional store that runs the work with its own `tx` when told to answer `processed`
 * or `failed` (what the work threw), and otherwise answers the scripted outcome without running it.
 */
function fakeLedger(answer: LedgerRun<unknown>['outcome']) {
  const queries: string[] = [];
  const calls: { key: string; options: RunOptions }[] = [];
  const tx: FakeTx = { query: (sql) => void queries.push(sql) };
  const store: TransactionalWebhookStore<FakeTx> = {
    transactional: true,
    async run<T>(key: string, work: (tx: FakeTx) => T | Promise<T>, options: RunOptions): Promise<LedgerRun<T>> {
      calls.push({ key, options });
      if (answer === 'processed' || answer === 'failed') {
        try {
          return { outcome: 'processed', value: await work(tx) };
        } catch (error) {
          return { outcome: 'failed', error };
        }
      }
      if (answer === 'unavailable')
        return { outcome: 'unavailable', error: new Error('connection lost during COMMIT') };
      return { outcome: answer };
    },
  };
  return { store, calls, queries };
}

const TABLE = [
  ['processed', 200, 'processed'],
  ['duplicate', 200, 'duplicate'],
  ['superseded', 200, 'superseded'],
  ['in_flight', 409, 'in_flight'],
  ['failed', 500, 'failed'],
  ['timed_out', 503, 'in_flight'],
  ['unavailable', 503, 'unavailable'],
] as const;

describe('createWebhookHandler with a transactional store', () => {
  it.each(TABLE)('maps a run that came to %s to HTTP %i (%s)', async (outcome, status, body) => {
    const { store } = fakeLedger(outcome);
    const onError = vi.fn();
    const handler = createWebhookHandler({
      verifier,
      store,
      onError,
      onEvent: (_event, { tx }) => {
        if (outcome === 'failed') throw new Error('the order write failed');
        tx.query('UPDATE orders');
      },
    });
    const cb = await callback();
    const response = await handler.handle({ body: cb.raw, headers: cb.headers });
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ ok: status === 200, outcome: body });
    expect('retry-after' in response.headers).toBe(status === 409 || status === 503);
    // Only what failed is reported: a superseded callback is an outcome like a duplicate.
    const reported = onError.mock.calls.map(([error]) => error as WebhookHandlerError);
    const stage = { failed: 'handler', timed_out: 'handler', unavailable: 'store' } as Partial<
      Record<typeof outcome, string>
    >;
    expect(reported.map((error) => error.stage)).toEqual(stage[outcome] === undefined ? [] : [stage[outcome]]);
  });

  it("gives onEvent the store's own transaction, and the store the whole run: key, order, mark, timeout and TTL", async () => {
    const { store, calls, queries } = fakeLedger('processed');
    const seen: { event: WebhookEvent; key: string }[] = [];
    const handler = createWebhookHandler({
      verifier,
      store,
      handlerTimeoutMs: 7_000,
      onEvent: (event, { key, tx }) => {
        seen.push({ event, key });
        tx.query(`UPDATE orders SET status = 'paid' WHERE reference_id = '${event.signed.reference_id}'`);
      },
    });
    const refunded = await callback({ status: 'REFUNDED' });
    expect((await handler.handle({ body: refunded.raw, headers: refunded.headers })).status).toBe(200);
    const key = paymentKey(refunded.body.payment_id, 'REFUNDED');
    expect(seen.map((s) => s.key)).toEqual([key]);
    expect(queries).toHaveLength(1);
    expect(calls).toEqual([
      {
        key,
        options: {
          order: { paymentId: refunded.body.payment_id, rank: 2 },
          raiseMark: true,
          timeoutMs: 7_000,
          completedTtlMs: 86_400_000,
        },
      },
    ]);
    // A SUCCESS supersedes nothing, so it writes no mark.
    const success = await callback({ status: 'SUCCESS' });
    await handler.handle({ body: success.raw, headers: success.headers });
    expect(calls[1]?.options).toMatchObject({ order: { rank: 1 }, raiseMark: false });
  });

  it('answers 503 unavailable, reported, when the store itself throws instead of answering', async () => {
    const onError = vi.fn();
    const store: TransactionalWebhookStore<FakeTx> = {
      transactional: true,
      run: () => Promise.reject(new Error('pool exhausted')),
    };
    const handler = createWebhookHandler({ verifier, store, onError, onEvent: () => {} });
    const cb = await callback();
    const response = await handler.handle({ body: cb.raw, headers: cb.headers });
    expect(response).toMatchObject({ status: 503, body: { outcome: 'unavailable' } });
    expect((onError.mock.calls[0]?.[0] as WebhookHandlerError).stage).toBe('store');
  });
});

describe('runOnce with a transactional store', () => {
  it.each(TABLE.filter(([outcome]) => ['processed', 'duplicate', 'superseded', 'in_flight'].includes(outcome)))(
    'answers a run that came to %s as its result',
    async (outcome) => {
      const { store } = fakeLedger(outcome);
      const result = await runOnce(store, 'job:1', ({ tx }) => {
        tx.query('UPDATE orders');
        return 'fulfilled';
      });
      expect(result).toEqual(outcome === 'processed' ? { outcome, value: 'fulfilled' } : { outcome });
    },
  );

  it.each([
    ['failed', 'handler'],
    ['timed_out', 'handler'],
    ['unavailable', 'store'],
  ] as const)('throws a WebhookHandlerError of stage %s→%s for a run that came to it', async (outcome, stage) => {
    const { store } = fakeLedger(outcome);
    const run = runOnce(store, 'job:1', () => {
      throw new Error('the order write failed');
    });
    await expect(run).rejects.toBeInstanceOf(WebhookHandlerError);
    await expect(run).rejects.toMatchObject({ stage });
  });

  it('hands the store the payment order, no timeout, and the default TTL', async () => {
    const { store, calls } = fakeLedger('processed');
    await runOnce(store, paymentKey('PAY_1', 'REFUNDED'), () => {}, {
      payment: { payment_id: 'PAY_1', status: 'REFUNDED' },
    });
    expect(calls).toEqual([
      {
        key: 'payment:PAY_1:REFUNDED',
        options: {
          order: { paymentId: 'PAY_1', rank: 2 },
          raiseMark: true,
          timeoutMs: undefined,
          completedTtlMs: 86_400_000,
        },
      },
    ]);
  });
});

describe('a plain store keeps its behaviour', () => {
  it('runOnce(store, key, () => …) still runs without a context, tx undefined', async () => {
    const contexts: unknown[] = [];
    const result = await runOnce(new MemoryWebhookStore(), 'job:plain', (context) => {
      contexts.push(context.tx);
      return 1;
    });
    expect(result).toEqual({ outcome: 'processed', value: 1 });
    expect(contexts).toEqual([undefined]);
  });

  it('a superseded callback is answered 200 superseded and reported to nobody', async () => {
    const onError = vi.fn();
    const warn = vi.fn();
    const logger = { debug: vi.fn(), info: vi.fn(), warn, error: vi.fn() };
    const store = new MemoryWebhookStore();
    const handler = createWebhookHandler({ verifier, store, onError, logger, onEvent: () => {} });
    const refunded = await callback({ status: 'REFUNDED' });
    const success = await callback({ status: 'SUCCESS' });
    expect((await handler.handle({ body: refunded.raw, headers: refunded.headers })).body.outcome).toBe('processed');
    expect(await handler.handle({ body: success.raw, headers: success.headers })).toMatchObject({
      status: 200,
      body: { outcome: 'superseded' },
    });
    expect(onError).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('one range rule for the millisecond options', () => {
  it('refuses handlerTimeoutMs over what a Node timer holds (it would fire after 1 ms: 503 for every callback)', () => {
    const create = () => createWebhookHandler({ verifier, onEvent: () => {}, handlerTimeoutMs: 3e9 });
    expect(create).toThrow(ConfigurationError);
    expect(create).toThrow(/handlerTimeoutMs must be a whole number of milliseconds from 1 to 2147483647/);
  });

  it.each([
    ['inFlightTtlMs', 0],
    ['inFlightTtlMs', 3e9],
    ['completedTtlMs', -1],
    ['maxRenewalMs', Number.NaN],
  ] as const)('runOnce refuses %s = %s before claiming (a 0 TTL renewed the claim every 1 ms)', async (name, value) => {
    const store = new MemoryWebhookStore();
    const fn = vi.fn();
    const run = runOnce(store, 'job:ms', fn, { [name]: value });
    await expect(run).rejects.toBeInstanceOf(ConfigurationError);
    await expect(run).rejects.toMatchObject({
      field: name,
      message: `${name} must be a whole number of milliseconds from 1 to 2147483647`,
    });
    expect(fn).not.toHaveBeenCalled();
    expect(store.size).toBe(0);
  });
});
