/**
 * A tracer can never change the outcome of a call or of a callback: a span method that throws
 * (an exporter hiccup), or a tracer that throws instead of calling back, leaves the money call's
 * own result standing. Before, a span whose end() threw turned a withdrawal the service had
 * CREATED into an untyped rejection (no MyrGatewayError, no referenceId), inviting a merchant to
 * send it again: a double payout.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createWebhookHandler, signCallback } from '../../src/webhooks/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { clientFor, withdrawalParams } from '../helpers/client.js';
import { warningLogger } from '../helpers/warnings.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

/** Every span method throws. */
const throwingSpans = {
  startActiveSpan: (_name: string, _options: unknown, fn: (span: unknown) => unknown) =>
    fn({
      setAttribute: () => {
        throw new Error('exporter down');
      },
      addEvent: () => {
        throw new Error('exporter down');
      },
      setStatus: () => {
        throw new Error('exporter down');
      },
      end: () => {
        throw new Error('exporter down');
      },
    }),
};
/** Throws after the work started: the work's own promise must still be the answer. */
const throwsAfterStarting = {
  startActiveSpan: (_name: string, _options: unknown, fn: (span: unknown) => unknown) => {
    fn({ setAttribute() {}, addEvent() {}, setStatus() {}, end() {} });
    throw new Error('context manager broke');
  },
};
/** Throws before calling back: the work runs untraced, once. */
const throwsBeforeStarting = {
  startActiveSpan: () => {
    throw new Error('no provider');
  },
};

it.each([
  ['span methods that throw', throwingSpans],
  ['a tracer that throws after starting the call', throwsAfterStarting],
  ['a tracer that throws before starting it', throwsBeforeStarting],
])('a created withdrawal is reported as created, once, with %s', async (_name, tracer) => {
  const log = warningLogger(); // the tracer's failure is told once, to the logger, not printed here
  const { gateway } = clientFor(mock, { tracer: tracer as never, logger: log.logger });
  const params = withdrawalParams();
  const withdrawal = await gateway.withdrawals.create(params);
  expect(withdrawal.reference_id).toBe(params.reference_id);
  expect(mock.count('withdraw')).toBe(1); // sent once: the tracer never made it run twice
  expect(log.lines).toEqual([
    'myr-gateway: the OpenTelemetry tracer threw; the call went on, its span may be incomplete',
  ]);
});

it.each([
  ['span methods that throw', throwingSpans],
  ['a tracer that throws after starting the call', throwsAfterStarting],
  ['a tracer that throws before starting it', throwsBeforeStarting],
])('a callback is answered and handled once with %s', async (_name, tracer) => {
  let runs = 0;
  const handler = createWebhookHandler({
    verifier: { apiKey: 'sk_tracer_test' },
    tracer: tracer as never,
    onEvent: () => {
      runs += 1;
    },
  });
  const { rawBody, headers } = await signCallback('sk_tracer_test', {
    payment_id: 'PAY_TRACE1',
    reference_id: 'TRACE1',
    amount: 10,
    status: 'SUCCESS',
  });
  const response = await handler.handle({ body: rawBody, headers });
  expect(response.status).toBe(200);
  expect(runs).toBe(1);
});
