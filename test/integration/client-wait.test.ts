/** payments.waitForCompletion through the public client against the mock (issue 8). */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, InvalidRequestError, NotFoundError, PaymentPendingError } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams } from '../helpers/client.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

const lookups = () => mock.requests.filter((r) => r.endpoint === 'payment.status').length;

describe('payments.waitForCompletion', () => {
  it('polls until the status is terminal and returns that record, pausing with growing intervals', async () => {
    const { gateway, delays } = clientFor(mock, { random: () => 0.5 });
    const created = await gateway.payments.create(paymentParams());
    // The payment settles while the poller sleeps for the third time.
    const sleep = async (ms: number) => {
      delays.push(ms);
      if (delays.length === 3) await mock.completePayment(created.payment_id, 'SUCCESS');
    };
    const { gateway: poller } = clientFor(mock, { random: () => 0.5, sleep });
    const status = await poller.payments.waitForCompletion(created.reference_id, {
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
    expect(status).toMatchObject({
      payment_id: created.payment_id,
      reference_id: created.reference_id,
      status: 'SUCCESS',
    });
    expect(delays).toEqual([1000, 1500, 2250]);
    expect(lookups()).toBe(4);
  });

  it('gives up after timeoutMs with PaymentPendingError carrying the last status and the reference', async () => {
    const { gateway, delays } = clientFor(mock, { random: () => 0.5 });
    const created = await gateway.payments.create(paymentParams());
    const error = await caught(
      gateway.payments.waitForCompletion(created.payment_id, { timeoutMs: 10_000, intervalMs: 2000 }),
    );
    expect(error).toBeInstanceOf(PaymentPendingError);
    expect(error).toMatchObject({
      code: 'PAYMENT_PENDING',
      retryable: true,
      identifier: created.payment_id,
      referenceId: created.reference_id,
      lastStatus: { status: 'PROCESSING', payment_id: created.payment_id },
    });
    expect(error.message).toContain('callback');
    // 2000 + 3000 + 4500 = 9500 waited; the next pause (6750) would end past 10 s.
    expect(delays).toEqual([2000, 3000, 4500]);
    expect(lookups()).toBe(4);
  });

  it('an abort ends the wait with AbortError', async () => {
    const controller = new AbortController();
    const sleep = (_ms: number, signal?: AbortSignal) => {
      controller.abort();
      return Promise.reject(signal?.reason as Error);
    };
    const { gateway } = clientFor(mock, { sleep });
    const created = await gateway.payments.create(paymentParams());
    const error = await caught(
      gateway.payments.waitForCompletion(created.payment_id, { timeoutMs: 60_000, signal: controller.signal }),
    );
    expect(error).toBeInstanceOf(AbortError);
    expect(lookups()).toBe(1);
  });

  it('an unknown payment is a NotFoundError at once, and bad options fail before any request', async () => {
    const { gateway } = clientFor(mock);
    expect(await caught(gateway.payments.waitForCompletion('NOSUCHORDER', { timeoutMs: 60_000 }))).toBeInstanceOf(
      NotFoundError,
    );
    expect(lookups()).toBe(1);
    for (const options of [{ timeoutMs: 0 }, { timeoutMs: 1.5 }, { timeoutMs: 1000, intervalMs: -1 }]) {
      const error = await caught(gateway.payments.waitForCompletion('ORDER1', options));
      expect(error).toBeInstanceOf(InvalidRequestError);
    }
    expect(lookups()).toBe(1);
  });
});
