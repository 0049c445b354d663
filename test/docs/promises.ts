/**
 * What each doc snippet promises, beyond "it runs": the outcome its comments state, the
 * branch its catch is there for. test/docs/run-snippets.test.ts runs every block of README.md
 * and docs/*.md; a block listed here also gets its setup (a fault, a seeded payment) and its
 * check. A block is named by its file and a piece of its code, not its line, so edits above
 * it do not break the table; an entry that names no block, or two, fails the run.
 */
import { expect } from 'vitest';
import type { MyrGateway } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { signCallback, type SignedCallback, type WebhookVerifier } from '../../src/webhooks/index.js';
import { deliver, request, type Answer } from './deliver.js';
import { ORDER_TOTAL, SHOP, type Scene } from './scene.js';

/** What a snippet's run left behind, for its check. */
export interface Run {
  scene: Scene;
  /** The snippet's top-level names. */
  exports: Record<string, unknown>;
  /** The values given to its declared names. */
  inputs: Record<string, unknown>;
  /** What it wrote with console.log / info / warn / error, one formatted string a call. */
  console: Record<'log' | 'info' | 'warn' | 'error', string[]>;
  /** The lines pino wrote (test/docs/run-snippets.test.ts points pino's destination here). */
  logs: string[];
  /** The signed callback delivered to each receiver it exported, and the answer. */
  deliveries: { name: string; callback: SignedCallback; answer: Answer }[];
}

export interface DocPromise {
  doc: string;
  /** A piece of the block's code that only this block has. */
  match: string;
  /** Runs before the snippet; what it returns is added to the snippet's inputs. */
  setup?: (scene: Scene) => Promise<Record<string, unknown> | void>;
  /** The callback delivered to the receivers the snippet exports (default: a deposit the status API confirms). */
  callback?: (scene: Scene) => Promise<SignedCallback>;
  /** The snippet writes console.warn / console.error on purpose (its check says what). */
  warns?: true;
  check?: (run: Run) => Promise<void> | void;
}

const SANDBOX = { merchantId: 'MERCHANT_SANDBOX', apiKey: 'sk_sandbox_local_key_0001' };
const lostWithdrawAnswer = async (scene: Scene): Promise<void> =>
  scene.mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
const seedOrder1001 = async (scene: Scene, status?: 'SUCCESS'): Promise<void> => {
  const payment = await scene.gateway.payments.create({
    amount: ORDER_TOTAL, reference_id: 'ORDER1001', customer_name: 'Aisyah Rahman', customer_phone: '60123456789', payment_method: 'QR_PAYMENT',
  });
  if (status) await scene.mock.completePayment(payment.payment_id, status, { deliver: false });
};
const gatewayOf = (run: Run): MyrGateway => run.exports.gateway as MyrGateway;
const aUrl = /^https:\/\/\S+$/;

/** Redis samples: the same callback twice reaches onEvent once (the Redis store), the client pays through the mock. */
const fleetCheck = async (run: Run): Promise<void> => {
  const [first] = run.deliveries;
  expect(first?.answer.status).toBe(200);
  expect((await deliver(run.exports.handler, first?.callback as SignedCallback)).status).toBe(200);
  expect(run.scene.callsTo('onEvent')).toHaveLength(1);
  await expect(gatewayOf(run).payments.retrieve('ORDER5001')).resolves.toMatchObject({ status: 'SUCCESS' });
};

export const PROMISES: DocPromise[] = [
  { doc: 'README.md', match: '// send the customer here', check: (run) => {
    expect(run.console.log).toEqual([expect.stringMatching(aUrl)]);
    expect(run.scene.mock.getPayment('ORDER1001')?.status).toBe('PROCESSING');
  } },
  { doc: 'README.md', match: 'res.redirect(payment.customer_redirect_url)', check: (run) => {
    expect(run.scene.callsTo('res.redirect')).toEqual([[expect.stringMatching(aUrl)]]);
    expect(run.exports.status).toMatchObject({ reference_id: 'ORDER1001', status: 'PROCESSING' });
  } },
  { doc: 'README.md', match: 'awaitCallback(recovery.referenceId)', setup: lostWithdrawAnswer, check: (run) => {
    expect(run.scene.callsTo('awaitCallback')).toEqual([['PAYOUT7781']]);
    expect(run.scene.mock.withdrawals).toHaveLength(1);
  } },
  { doc: 'README.md', match: "onRetry: (e) => metrics.increment('retries')",
    setup: async (scene) => scene.mock.fault({ endpoint: 'payment.create', times: 1, response: { type: 'status', status: 503 } }),
    check: (run) => {
      expect(run.console.log).toEqual([expect.stringMatching(/\S/)]);
      expect(run.scene.callsTo('metrics.increment')).toEqual([['retries']]);
      expect(run.logs.length).toBeGreaterThan(0);
      expect(run.logs.join('\n')).not.toContain(SHOP.apiKey);
    } },
  { doc: 'README.md', match: 'await orders.markPaid(order.id)', check: (run) => {
    expect(run.scene.callsTo('orders.markPaid')).toEqual([['order-ORDER5001']]);
  } },
  { doc: 'README.md', match: 'rateLimiter: new RedisRateLimiter', check: fleetCheck },
  { doc: 'docs/fleet.md', match: 'tokenStore: new RedisTokenStore({ client: redis }) });', check: fleetCheck },
  { doc: 'docs/amounts.md', match: "reference_id: 'ORDER3', amount: 5", check: (run) => {
    const amounts = run.scene.mock.requests.filter((r) => r.endpoint === 'payment.create').map((r) => (r.body as { amount: unknown }).amount);
    expect(amounts).toEqual([120.5, 120.5, 5]); // "sent as 120.5"
  } },
  { doc: 'docs/amounts.md', match: 'amount: 10.125', check: (run) => {
    expect(run.console.log).toEqual(['INVALID_AMOUNT amount INVALID_AMOUNT: payment create rejected before sending: amount must have at most 2 decimal places']);
    expect(run.scene.mock.count('payment.create')).toBe(0);
  } },
  { doc: 'docs/errors.md', match: 'totalTimeout: 30_000', setup: (scene) => seedOrder1001(scene), check: (run) => {
    expect(run.exports.status).toMatchObject({ reference_id: 'ORDER1001' });
  } },
  { doc: 'docs/errors.md', match: 'check ${error.referenceId} later', warns: true,
    // The answer is lost and the status lookup cannot tell: "a payment create failed and the lookup could not tell".
    setup: async (scene) => {
      scene.mock.fault({ endpoint: 'payment.create', when: 'after', times: 1, response: { type: 'networkError' } });
      scene.mock.fault({ endpoint: 'payment.status', times: 20, response: { type: 'networkError' } });
    },
    check: (run) => expect(run.console.warn).toEqual(['check ORDER1001 later, same reference_id']) },
  { doc: 'docs/getting-started.md', match: 'export const gateway = new MyrGateway', check: async (run) => {
    await expect(gatewayOf(run).payments.create({
      amount: '149.90', reference_id: 'ORDER1001', customer_name: 'Aisyah Rahman', customer_phone: '60123456789', payment_method: 'QR_PAYMENT',
    })).resolves.toMatchObject({ status: 'PROCESSING' });
  } },
  { doc: 'docs/getting-started.md', match: "// redirect the customer's browser here", check: (run) => {
    expect(run.console.log).toEqual([expect.stringMatching(aUrl)]);
  } },
  { doc: 'docs/observability.md', match: 'logger: pino(),', check: async (run) => {
    await seedOrder1001(run.scene);
    await gatewayOf(run).payments.retrieve('ORDER1001');
    expect(run.logs.some((line) => (JSON.parse(line) as { level: number }).level === 30)).toBe(true);
    expect(run.logs.join('\n')).not.toContain(SHOP.apiKey);
  } },
  { doc: 'docs/observability.md', match: "metrics.histogram('gateway.duration_ms'", check: async (run) => {
    await seedOrder1001(run.scene);
    await gatewayOf(run).payments.retrieve('ORDER1001');
    expect(run.scene.callsTo('metrics.increment')).toContainEqual(['gateway.requests', { path: expect.any(String) }]);
    expect(run.scene.callsTo('metrics.histogram')).toContainEqual(['gateway.duration_ms', expect.any(Number), { status: '200' }]);
  } },
  { doc: 'docs/observability.md', match: 'onEvent: async (event) => fulfil(event)', check: (run) => {
    expect(run.scene.callsTo('fulfil')).toHaveLength(1);
  } },
  { doc: 'docs/observability.md', match: 'log.info({ correlationId', check: (run) => {
    expect(run.scene.callsTo('log.info')).toEqual([[{ correlationId: expect.stringMatching(/\S/), attempts: 1 }]]);
  } },
  { doc: 'docs/payments.md', match: "res.status(400).send('choose a bank')", check: async (run) => {
    const app = run.inputs.app;
    const chosen = await request(app, '/checkout/ORDER42', { bank: 'MB2U0227' });
    expect(chosen.status).toBe(302);
    expect(chosen.location).toMatch(aUrl);
    expect(chosen.location).toContain(run.scene.mock.getPayment('ORDER42')?.payment_id ?? 'the payment');
    expect((await request(app, '/checkout/ORDER43', { bank: 'NOBANK' })).status).toBe(400);
  } },
  { doc: 'docs/payments.md', match: "console.log('paid at', status.completed_at)", setup: (scene) => seedOrder1001(scene, 'SUCCESS'), check: (run) => {
    expect(run.console.log).toEqual([expect.stringMatching(/^paid at \d{4}-\d\d-\d\dT/)]);
  } },
  { doc: 'docs/sandbox.md', match: "baseUrl: 'http://127.0.0.1:41873/api/v1'",
    // The sandbox's address and merchant, served by msw: no port is taken.
    setup: async (scene) => {
      const sandbox = createMockGateway({ baseUrl: 'http://127.0.0.1:41873/api/v1', merchants: [SANDBOX] });
      scene.use(...sandbox.handlers);
      return { sandbox };
    },
    callback: () => signCallback(SANDBOX.apiKey, { payment_id: 'PAY_SANDBOX1', reference_id: 'ORDER1001', amount: 120.5, status: 'SUCCESS' }),
    check: (run) => {
      const sandbox = run.inputs.sandbox as ReturnType<typeof createMockGateway>;
      expect(sandbox.getPayment('ORDER1001')?.status).toBe('PROCESSING');
    } },
  { doc: 'docs/testing.md', match: 'setupServer(...mock.handlers, ...myOtherHandlers)', check: async (run) => {
    const { server, mock } = run.exports as { server: { close(): void }; mock: ReturnType<typeof createMockGateway> };
    try {
      const { MyrGateway } = await import('../../src/index.js');
      const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant });
      await expect(gateway.payments.create({
        amount: 120.5, reference_id: 'ORDER1001', customer_name: 'Aisyah Rahman', customer_phone: '60123456789', payment_method: 'QR_PAYMENT',
      })).resolves.toMatchObject({ status: 'PROCESSING' });
    } finally {
      server.close();
    }
  } },
  { doc: 'docs/testing.md', match: "expect(mock.count('auth')).toBe(1);",
    setup: async (scene) => {
      await seedOrder1001(scene);
      const refused = await seedOrder1001(scene).then(() => 'created', (error: unknown) => error);
      expect(refused).toMatchObject({ code: 'DUPLICATE_REFERENCE' });
    } },
  { doc: 'docs/testing.md', match: 'declare const id: string, id2: string',
    setup: async (scene) => {
      const [id, id2, id3, id4, id5, id6] = await scene.paymentIds(6);
      scene.failOnce.add('ORDER7001'); // "your handler fails the first time"
      return { id, id2, id3, id4, id5, id6 };
    },
    check: (run) => {
      // fulfilled once each; the forged, stale and mismatched callbacks never reach the handler
      expect(run.scene.fulfilled).toEqual(['ORDER7001', 'ORDER7002']);
      expect(run.scene.mock.getPayment('ORDER7006')?.status).toBe('CANCELLED');
    } },
  { doc: 'docs/testing.md', match: 'const res = await fetch(webhookUrl', check: (run) => {
    expect(run.scene.fulfilled).toEqual(['ORDER1001']);
  } },
  { doc: 'docs/webhooks.md', match: 'await orders.markPaid(event.signed.reference_id, event.signed.amount)', check: (run) => {
    expect(run.scene.callsTo('orders.markPaid')).toEqual([['ORDER5001', 120.5]]);
  } },
  { doc: 'docs/webhooks.md', match: "console.warn('callback refused:', error.reason)" },
  { doc: 'docs/webhooks.md', match: 'await orders.fulfil(order.id)', check: (run) => {
    expect(run.scene.callsTo('orders.fulfil')).toEqual([['order-ORDER5001']]);
  } },
  { doc: 'docs/webhooks.md', match: 'const { status, body, headers } = await handler.handle', check: (run) => {
    expect(run.exports.status).toBe(200);
    expect(run.scene.callsTo('log.warn')).toEqual([]);
  } },
  { doc: 'docs/webhooks.md', match: 'fastifyWebhookPlugin', check: async (run) => {
    const app = run.inputs.app as { close(): Promise<void> };
    try {
      expect((await deliver(app, await run.scene.paidDeposit())).status).toBe(200);
      expect(run.scene.callsTo('onEvent')).toHaveLength(1);
    } finally {
      await app.close();
    }
  } },
  { doc: 'docs/webhooks.md', match: 'MYR_GATEWAY_API_KEY_OLD', check: async (run) => {
    const { rawBody, headers } = await signCallback(`${SHOP.apiKey}_old`, { payment_id: 'PAY_1', reference_id: 'ORDER1', amount: 120.5, status: 'SUCCESS' });
    const event = await (run.exports.verifier as WebhookVerifier).verify({ body: rawBody, headers });
    expect(event.keyIndex).toBe(1);
  } },
  { doc: 'docs/webhooks.md', match: "fetch('http://127.0.0.1:3000/webhooks/myr'", check: (run) => {
    expect((run.exports.response as Response).status).toBe(200);
    expect(run.scene.port3000.map((event) => event.signed.reference_id)).toEqual(['ORDER1']);
  } },
  { doc: 'docs/webhooks.md', match: 'declare const paymentId: string;',
    setup: async (scene) => ({ paymentId: (await scene.paymentIds(1))[0] }),
    check: (run) => expect(run.scene.fulfilled).toEqual(['ORDER7001']) },
  { doc: 'docs/withdrawals.md', match: '// PROCESSING ****6789', check: (run) => {
    expect(run.console.log).toEqual(['PROCESSING ****6789']);
  } },
  { doc: 'docs/withdrawals.md', match: 'await markPayoutSent(recovery.referenceId)', setup: lostWithdrawAnswer, check: (run) => {
    expect(run.scene.callsTo('markPayoutSent')).toEqual([['PAYOUT7781']]);
    expect(run.console.log).toEqual([]);
  } },
];
