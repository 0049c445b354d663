import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors/base.js';
import {
  MemoryWebhookStore,
  WebhookHandlerError,
  WebhookVerificationError,
  WebhookVerifier,
  confirmDeposit,
  createWebhookHandler,
  type PaymentStatusSource,
  type WebhookEvent,
  type WebhookHandlerOptions,
  type WebhookStore,
} from '../../../src/webhooks/index.js';
import { idempotencyKey, toWebhookHandler } from '../../../src/webhooks/handler.js';
import { API_KEY, NOW, callback } from '../../fixtures/webhook-vectors-helpers.js';

const clock = () => NOW;
const verifier = new WebhookVerifier({ apiKey: API_KEY, clock });

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function setup(options: Partial<WebhookHandlerOptions> = {}) {
  const onEvent = vi.fn<(event: WebhookEvent, context: { key: string }) => unknown>(async () => {});
  const onError = vi.fn();
  const handler = createWebhookHandler({ verifier, onEvent, onError, ...options });
  return { handler, onEvent, onError };
}

describe('createWebhookHandler: exactly once', () => {
  it('runs the handler and acknowledges with 200 processed', async () => {
    const { handler, onEvent } = setup();
    const cb = await callback();
    const response = await handler.handle({ body: cb.raw, headers: cb.headers });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ok: true, outcome: 'processed' });
    expect(onEvent).toHaveBeenCalledTimes(1);
    expect(onEvent.mock.calls[0]?.[0].signed.webhook_id).toBe(cb.body.webhook_id);
    expect(onEvent.mock.calls[0]?.[1]).toEqual({ key: 'payment:PAY_8F3K2M9Q:SUCCESS' });
  });

  it('acknowledges a duplicate of a finished delivery without running the handler again', async () => {
    const { handler, onEvent } = setup();
    const cb = await callback();
    await handler.handle({ body: cb.raw, headers: cb.headers });
    const again = await handler.handle({ body: JSON.parse(cb.raw) as unknown, headers: cb.headers });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ok: true, outcome: 'duplicate' });
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it("by default fulfils once per payment and status, even under a new webhook_id; 'webhook' mode runs per webhook_id", async () => {
    const first = await callback({ payment_id: 'PAY_BIZ' });
    const second = await callback({ payment_id: 'PAY_BIZ' });
    expect(second.body.webhook_id).not.toBe(first.body.webhook_id);
    const byPayment = setup();
    for (const cb of [first, second]) await byPayment.handler.handle({ body: cb.raw, headers: cb.headers });
    expect(byPayment.onEvent).toHaveBeenCalledTimes(1);
    const byWebhook = setup({ idempotency: 'webhook' });
    for (const cb of [first, second, first]) await byWebhook.handler.handle({ body: cb.raw, headers: cb.headers });
    expect(byWebhook.onEvent).toHaveBeenCalledTimes(2);
  });

  it('runs again for a later, different status of the same payment', async () => {
    const { handler, onEvent } = setup();
    const paid = await callback({ payment_id: 'PAY_R', status: 'SUCCESS' });
    const refunded = await callback({ payment_id: 'PAY_R', status: 'REFUNDED' });
    await handler.handle({ body: paid.raw });
    await handler.handle({ body: refunded.raw });
    expect(onEvent).toHaveBeenCalledTimes(2);
  });

  it('releases the claim when the handler throws, answers 500, and the retry runs it again', async () => {
    const { handler, onEvent, onError } = setup();
    const failure = new Error('database down');
    onEvent.mockRejectedValueOnce(failure);
    const cb = await callback();
    const first = await handler.handle({ body: cb.raw, headers: cb.headers });
    expect(first.status).toBe(500);
    expect(first.body).toEqual({ ok: false, outcome: 'failed' });
    expect(JSON.stringify(first.body)).not.toContain('database down');
    const reported = onError.mock.calls[0]?.[0] as WebhookHandlerError;
    expect(reported).toBeInstanceOf(WebhookHandlerError);
    expect(reported.stage).toBe('handler');
    expect(reported.cause).toBe(failure);
    const retry = await handler.handle({ body: cb.raw, headers: cb.headers });
    expect(retry.status).toBe(200);
    expect(retry.body.outcome).toBe('processed');
    expect(onEvent).toHaveBeenCalledTimes(2);
  });

  it('handles a synchronous throw the same way', async () => {
    const { handler, onEvent } = setup();
    onEvent.mockImplementationOnce(() => {
      throw new Error('sync');
    });
    const cb = await callback();
    expect((await handler.handle({ body: cb.raw })).status).toBe(500);
    expect((await handler.handle({ body: cb.raw })).status).toBe(200);
  });

  it('does not acknowledge a duplicate of a delivery still in flight (409 + Retry-After)', async () => {
    const gate = deferred();
    const { handler, onEvent } = setup();
    onEvent.mockImplementationOnce(() => gate.promise);
    const cb = await callback();
    const first = handler.handle({ body: cb.raw, headers: cb.headers });
    await new Promise((r) => setTimeout(r, 5));
    const during = await handler.handle({ body: cb.raw, headers: cb.headers });
    expect(during.status).toBe(409);
    expect(during.body).toEqual({ ok: false, outcome: 'in_flight' });
    expect(during.headers['retry-after']).toBe('1');
    gate.resolve();
    expect((await first).status).toBe(200);
    expect((await handler.handle({ body: cb.raw, headers: cb.headers })).body.outcome).toBe('duplicate');
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('runs the handler once for 100 concurrent duplicate deliveries', async () => {
    const { handler, onEvent } = setup();
    onEvent.mockImplementation(() => new Promise((r) => setTimeout(r, 20)));
    const cb = await callback();
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        handler.handle({ body: i % 2 ? cb.raw : Buffer.from(cb.raw), headers: cb.headers }),
      ),
    );
    expect(onEvent).toHaveBeenCalledTimes(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(99);
  });

  it('lets a retry take over a claim whose worker died (in-flight TTL)', async () => {
    let now = NOW;
    const store = new MemoryWebhookStore({ clock: () => now });
    const { handler, onEvent } = setup({ store, inFlightTtlMs: 1000 });
    onEvent.mockImplementationOnce(() => new Promise(() => {})); // never settles: a crashed worker
    const cb = await callback();
    void handler.handle({ body: cb.raw });
    await new Promise((r) => setTimeout(r, 5));
    expect((await handler.handle({ body: cb.raw })).status).toBe(409);
    now += 1001;
    expect((await handler.handle({ body: cb.raw })).status).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(2);
  });
});

describe('createWebhookHandler: answers', () => {
  it.each([
    ['a bad signature', 401, 'invalid_signature', (b: Record<string, unknown>) => ({ ...b, amount: 1 })],
    ['no signature', 401, 'missing_signature', (b: Record<string, unknown>) => ({ ...b, signature: undefined })],
    ['a malformed body', 400, 'malformed', () => 'not json'],
    ['a header mismatch', 400, 'header_mismatch', (b: Record<string, unknown>) => b],
  ])('answers %s with %i and the reason, without running the handler', async (_name, status, reason, change) => {
    const { handler, onEvent, onError } = setup();
    const cb = await callback();
    const headers = reason === 'header_mismatch' ? { 'x-webhook-id': 'other' } : {};
    const response = await handler.handle({ body: change({ ...cb.body }), headers });
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ ok: false, outcome: 'rejected', reason });
    expect(onEvent).not.toHaveBeenCalled();
    expect(onError.mock.calls[0]?.[0]).toBeInstanceOf(WebhookVerificationError);
  });

  it('answers a stale callback with 400', async () => {
    const { handler } = setup({ verifier: new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW + 301_000 }) });
    const cb = await callback();
    expect(await handler.handle({ body: cb.raw })).toMatchObject({ status: 400, body: { reason: 'stale' } });
  });

  it('answers 503 when the store cannot claim, and still 500 when it cannot release', async () => {
    const broken: WebhookStore = {
      claim: () => Promise.reject(new Error('redis down')),
      complete: () => Promise.resolve(),
      release: () => Promise.resolve(),
    };
    const a = setup({ store: broken });
    const cb = await callback();
    expect(await a.handler.handle({ body: cb.raw })).toMatchObject({ status: 503, body: { outcome: 'unavailable' } });
    expect(a.onEvent).not.toHaveBeenCalled();
    expect((a.onError.mock.calls[0]?.[0] as WebhookHandlerError).stage).toBe('store');

    const memory = new MemoryWebhookStore();
    const noRelease: WebhookStore = {
      claim: (k, t) => memory.claim(k, t),
      complete: (k, t, ttl) => memory.complete(k, t, ttl),
      release: () => Promise.reject(new Error('release failed')),
    };
    const b = setup({ store: noRelease });
    b.onEvent.mockRejectedValueOnce(new Error('handler failed'));
    expect((await b.handler.handle({ body: cb.raw })).status).toBe(500);
    expect(b.onError).toHaveBeenCalledTimes(2);
  });

  it('acknowledges when only recording completion fails (the handler did finish)', async () => {
    const memory = new MemoryWebhookStore();
    const store: WebhookStore = {
      claim: (k, t) => memory.claim(k, t),
      complete: () => Promise.reject(new Error('write failed')),
      release: (k, t) => memory.release(k, t),
    };
    const { handler, onError } = setup({ store });
    const cb = await callback();
    expect((await handler.handle({ body: cb.raw })).status).toBe(200);
    expect((onError.mock.calls[0]?.[0] as WebhookHandlerError).stage).toBe('store');
    // this process remembers it finished: a retry is a duplicate, never a second run
    expect((await handler.handle({ body: cb.raw })).body).toEqual({ ok: true, outcome: 'duplicate' });
  });

  it('with a store that cannot renew, says so when the handler outlives inFlightTtlMs', async () => {
    const memory = new MemoryWebhookStore();
    const store: WebhookStore = {
      claim: (k, t) => memory.claim(k, t),
      complete: (k, tk, t) => memory.complete(k, tk, t),
      release: (k, t) => memory.release(k, t),
    };
    const { handler, onError } = setup({
      store,
      inFlightTtlMs: 30,
      onEvent: () => new Promise((r) => setTimeout(r, 120)),
    });
    const cb = await callback();
    expect((await handler.handle({ body: cb.raw })).status).toBe(200);
    const errors = onError.mock.calls.map(([e]) => e as WebhookHandlerError);
    expect(errors.some((e) => e.stage === 'store' && /no renew/.test(e.message))).toBe(true);
  });

  it('refuses handlerTimeoutMs and maxRenewalMs that are not positive', () => {
    expect(() => setup({ handlerTimeoutMs: 0 })).toThrow(ConfigurationError);
    expect(() => setup({ maxRenewalMs: Number.NaN })).toThrow(ConfigurationError);
  });

  it('ignores an onError that throws', async () => {
    const { handler } = setup({
      onError: () => {
        throw new Error('logger broke');
      },
    });
    expect((await handler.handle({ body: 'x' })).status).toBe(400);
  });

  it('never throws, even when handed nonsense', async () => {
    const { handler } = setup();
    for (const input of [null, undefined, 5, 'x', { body: Symbol('s') }]) {
      const response = await handler.handle(input as never);
      expect(response.status).toBe(400);
    }
  });
});

describe('createWebhookHandler: configuration', () => {
  it('builds its verifier from options and defaults to a memory store', async () => {
    const handler = createWebhookHandler({ verifier: { apiKey: API_KEY, clock }, onEvent: () => {} });
    expect(handler.verifier).toBeInstanceOf(WebhookVerifier);
    expect(handler.store).toBeInstanceOf(MemoryWebhookStore);
    const cb = await callback();
    expect((await handler.handle({ body: cb.raw })).status).toBe(200);
    expect(toWebhookHandler(handler)).toBe(handler);
    expect(typeof toWebhookHandler({ verifier, onEvent: () => {} }).handle).toBe('function');
  });

  it('keeps the api key out of util.inspect and JSON of the handler', () => {
    const handler = createWebhookHandler({ verifier: { apiKey: API_KEY }, onEvent: () => {} });
    expect(inspect(handler, { depth: 10, showHidden: true })).not.toContain(API_KEY);
    expect(JSON.stringify(handler)).not.toContain(API_KEY);
  });

  it.each([
    [{ onEvent: undefined }],
    [{ idempotency: 'reference' }],
    [{ inFlightTtlMs: 0 }],
    [{ completedTtlMs: 599_999 }],
  ])('rejects %j', (bad) => {
    expect(() => createWebhookHandler({ verifier, onEvent: () => {}, ...bad } as never)).toThrow(ConfigurationError);
  });

  it('accepts a completed TTL of exactly twice the tolerance', () => {
    expect(() => createWebhookHandler({ verifier, onEvent: () => {}, completedTtlMs: 600_000 })).not.toThrow();
  });

  it('builds idempotency keys from signed fields only', async () => {
    const cb = await callback({ payment_id: 'PAY_K', status: 'FAILED' });
    const event = await verifier.verify({ body: cb.raw });
    expect(idempotencyKey(event, 'payment')).toBe('payment:PAY_K:FAILED');
    expect(idempotencyKey(event, 'webhook')).toBe(`webhook:${cb.body.webhook_id}`);
  });
});

describe('confirmDeposit', () => {
  function gateway(record: Partial<{ payment_id: string; reference_id: string; amount: number; status: string }>) {
    const retrieve = vi.fn(async (id: string) => ({
      payment_id: id,
      reference_id: 'ORDER1001',
      amount: 120.5,
      currency: 'MYR',
      status: 'SUCCESS',
      ...record,
    }));
    return { gateway: { payments: { retrieve } } satisfies PaymentStatusSource, retrieve };
  }

  it('confirms when the status record agrees, looking it up by the signed payment_id', async () => {
    const event = await verifier.verify({ body: (await callback()).raw });
    const { gateway: g, retrieve } = gateway({});
    const result = await confirmDeposit(event, g, { amount: 120.5, reference_id: 'ORDER1001' });
    expect(result.confirmed).toBe(true);
    expect(retrieve).toHaveBeenCalledWith('PAY_8F3K2M9Q');
  });

  it('reports every field that disagrees', async () => {
    const event = await verifier.verify({ body: (await callback()).raw });
    const result = await confirmDeposit(
      event,
      gateway({ status: 'PROCESSING', amount: 12.05, reference_id: 'X' }).gateway,
      {
        amount: 100,
        reference_id: 'Y',
      },
    );
    expect(result.confirmed).toBe(false);
    if (result.confirmed) return;
    expect(result.mismatches).toEqual(['reference_id', 'amount', 'status', 'expected_amount', 'expected_reference_id']);
  });

  it('compares amounts to the sen and refuses withdrawals', async () => {
    const event = await verifier.verify({ body: (await callback({ amount: 0.3 })).raw });
    expect((await confirmDeposit(event, gateway({ amount: 0.1 + 0.2 }).gateway)).confirmed).toBe(true);
    const withdrawal = await verifier.verify({
      body: (await callback({ payment_id: 'WD_1', transaction_type: 'WITHDRAWAL' })).raw,
    });
    const { gateway: g, retrieve } = gateway({});
    expect(await confirmDeposit(withdrawal, g)).toEqual({
      confirmed: false,
      mismatches: ['not_a_deposit'],
      payment: undefined,
    });
    expect(retrieve).not.toHaveBeenCalled();
  });

  it('lets lookup errors propagate (so the handler answers 5xx and the gateway retries)', async () => {
    const event = await verifier.verify({ body: (await callback()).raw });
    const failing: PaymentStatusSource = { payments: { retrieve: () => Promise.reject(new Error('timeout')) } };
    await expect(confirmDeposit(event, failing)).rejects.toThrow('timeout');
  });
});
