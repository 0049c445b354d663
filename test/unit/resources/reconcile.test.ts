/**
 * src/resources/reconcile.ts on its own: what a payment create ends with when an attempt may
 * have created the payment and the call still failed (its answer was lost). The lookup is a
 * stand-in for `payments.retrieve`; which found record is this call's is ownership.ts's rule
 * (its own test lists every row), here only the consequences: the payment returned, a typed
 * "exists but its URL is lost", a genuine duplicate, or "outcome unknown", never "not created".
 * Also `createdPayment`, the result a merchant gets from a create answer.
 */
import { describe, expect, it } from 'vitest';
import {
  DuplicateReferenceError,
  InvalidResponseError,
  NotFoundError,
  OutcomeUnknownError,
  PaymentUrlUnavailableError,
  RateLimitError,
  type PaymentMethod,
  type PaymentStatus,
  type ResponseInfo,
} from '../../../src/index.js';
import { withResponse } from '../../../src/core/observe/events.js';
import type { RequestOptions } from '../../../src/core/call/call-spec.js';
import type { AnswerCheck } from '../../../src/core/validate.js';
import { CLOCK_TOLERANCE_MS } from '../../../src/resources/ownership.js';
import { createdPayment, reconcile, type SentPayment } from '../../../src/resources/reconcile.js';
import { caught } from '../../helpers/client.js';

const START = Date.parse('2026-11-24T08:00:00.000Z');
const at = (offsetMs: number) => new Date(START + offsetMs).toISOString();

const sent = (over: Partial<SentPayment> = {}): SentPayment => ({
  amount: 300,
  reference_id: 'ORDER77',
  payment_method: 'BANK_TRANSFER',
  ...over,
});

/** The error the create call ended with: a resend met DUPLICATE_REFERENCE. */
const final = new DuplicateReferenceError('DUPLICATE_REFERENCE (HTTP 409): reference_id already used', {
  code: 'DUPLICATE_REFERENCE',
  status: 409,
  correlationId: 'corr-final',
});

const check = (allowInsecureLoopback = false): AnswerCheck => ({
  what: 'payment create',
  followUp: '. FOLLOW-UP ADVICE',
  allowInsecureLoopback,
});

/** The status record of the payment this call created (open, same amount, created during the call), with its URLs. */
const ours = (over: Partial<PaymentStatus> = {}): PaymentStatus => ({
  payment_id: 'PAY_77',
  reference_id: 'ORDER77',
  amount: 300,
  currency: 'MYR',
  status: 'PROCESSING',
  created_at: at(2000),
  expires_at: at(900_000),
  payment_url: 'https://pay.gw.test/p/77',
  gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: 'https://bank.gw.test/auth/77' },
  ...over,
});

const LOOKUP_ANSWER: ResponseInfo = {
  status: 200,
  correlationId: 'corr-lookup',
  rateLimit: undefined,
  attempts: 1,
  durationMs: 12,
};

/** A `payments.retrieve` stand-in answering with `answer` (or throwing it), recording each lookup. */
function lookup(answer: PaymentStatus | Error) {
  const calls: { identifier: string; options: RequestOptions | undefined }[] = [];
  const payments = {
    retrieve: async (identifier: string, options?: RequestOptions) => {
      calls.push({ identifier, options });
      if (answer instanceof Error) throw answer;
      return withResponse(answer, LOOKUP_ANSWER);
    },
  };
  return { payments, calls };
}

describe('createdPayment', () => {
  const answer = {
    payment_id: 'PAY_1',
    payment_url: 'https://pay.gw.test/p/1',
    gateway: { redirect_url: 'https://bank.gw.test/auth/1' },
  };

  it.each<[PaymentMethod, string]>([
    ['QR_PAYMENT', 'https://pay.gw.test/p/1'],
    ['BANK_TRANSFER', 'https://bank.gw.test/auth/1'],
    ['MOBILE_WALLET', 'https://bank.gw.test/auth/1'],
  ])('sends a %s customer to %s (the spec’s URL table)', (method, url) => {
    expect(createdPayment(answer, sent({ payment_method: method })).customer_redirect_url).toBe(url);
  });

  it('fills what the service left out from the request: status PROCESSING, the amount, MYR, the reference, the gateway', () => {
    const created = createdPayment(
      { payment_id: 'PAY_1', payment_url: 'https://pay.gw.test/p/1' },
      sent({ payment_method: 'MOBILE_WALLET' }),
    );
    expect(created).toEqual({
      payment_id: 'PAY_1',
      payment_url: 'https://pay.gw.test/p/1',
      status: 'PROCESSING',
      amount: 300,
      currency: 'MYR',
      reference_id: 'ORDER77',
      gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: 'https://pay.gw.test/p/1' },
      // Without a gateway URL, a wallet customer still has somewhere to go: the payment page.
      customer_redirect_url: 'https://pay.gw.test/p/1',
    });
  });

  it('takes the currency the request named when the answer has none', () => {
    expect(createdPayment(answer, sent({ currency: 'MYR' })).currency).toBe('MYR');
  });

  it('a null gateway is filled like a missing one', () => {
    const created = createdPayment({ ...answer, gateway: null }, sent());
    expect(created.gateway).toEqual({ behavior: 'REDIRECT_EXTERNAL', redirect_url: answer.payment_url });
  });

  it('keeps what the service sent, extra fields included, but always the reference the request used', () => {
    const gateway = {
      behavior: 'REDIRECT_EXTERNAL',
      redirect_url: 'https://bank.gw.test/auth/1',
      qr_data_string: null,
    };
    const created = createdPayment(
      {
        ...answer,
        status: 'PENDING',
        amount: 300,
        currency: 'MYR',
        reference_id: 'SOMETHINGELSE',
        expires_in: 900,
        expires_at: at(900_000),
        gateway,
        channel: 'FPX',
      },
      sent(),
    );
    expect(created).toMatchObject({
      status: 'PENDING',
      expires_in: 900,
      expires_at: at(900_000),
      channel: 'FPX',
      reference_id: 'ORDER77',
      gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: 'https://bank.gw.test/auth/1', qr_data_string: null },
    });
  });
});

describe('reconcile: the lookup', () => {
  it.each([0, 0.9, -25])(
    'with %d ms left of the call it looks nothing up: the outcome is unknown',
    async (remainingMs) => {
      const { payments, calls } = lookup(ours());
      const error = await caught(reconcile(payments, final, sent(), undefined, remainingMs, check(), START));
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect(error.message).toContain('no time was left to look it up');
      expect(calls).toHaveLength(0);
    },
  );

  it('looks the payment up by its reference_id, with the caller’s options and what is left of the call as its total timeout', async () => {
    const signal = new AbortController().signal;
    const { payments, calls } = lookup(ours());
    await reconcile(
      payments,
      final,
      sent(),
      { signal, timeout: 5000, maxRetries: 1, totalTimeout: 120_000 },
      1234.7,
      check(),
      START,
    );
    expect(calls).toEqual([
      { identifier: 'ORDER77', options: { signal, timeout: 5000, maxRetries: 1, totalTimeout: 1234 } },
    ]);
  });

  it.each<[string, Error, string]>([
    [
      'a lookup that found nothing',
      new NotFoundError('NOT_FOUND (HTTP 404): no payment', { code: 'NOT_FOUND', status: 404 }),
      'a lookup right after found nothing, which does not prove it was not created',
    ],
    [
      'a rate-limited lookup',
      new RateLimitError('RATE_LIMITED (HTTP 429): slow down', { code: 'RATE_LIMITED', status: 429, retryable: true }),
      'looking it up failed (RATE_LIMITED)',
    ],
    ['a lookup that threw something else', new TypeError('a bug'), 'looking it up failed (undefined)'],
  ])('after %s the outcome is unknown, never "not created"', async (_label, lookupError, why) => {
    const { payments } = lookup(lookupError);
    const error = await caught(reconcile(payments, final, sent(), undefined, 30_000, check(), START));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      retryable: false,
      referenceId: 'ORDER77',
      status: 409,
      correlationId: 'corr-final',
    });
    expect(error.cause).toBe(final);
    expect(error.message).toContain(why);
    // What the call ended with, and what to do: the same reference_id again, never a new one.
    expect(error.message).toContain(final.message);
    expect(error.message).toContain('payments.create again with the same reference_id ORDER77');
  });
});

describe('reconcile: the record found', () => {
  it('returns the payment this call created, with its URL, as if the first answer had arrived', async () => {
    const { payments } = lookup(ours());
    const created = await reconcile(payments, final, sent(), undefined, 30_000, check(), START);
    expect(created).toMatchObject({
      payment_id: 'PAY_77',
      reference_id: 'ORDER77',
      amount: 300,
      currency: 'MYR',
      status: 'PROCESSING',
      payment_url: 'https://pay.gw.test/p/77',
      customer_redirect_url: 'https://bank.gw.test/auth/77',
    });
    // The lookup's answer is the one the result came from.
    expect(created.lastResponse).toEqual(LOOKUP_ANSWER);
    expect(Object.keys(created)).not.toContain('lastResponse');
  });

  it('a QR payment found this way sends the customer to its payment_url', async () => {
    const { payments } = lookup(ours());
    const created = await reconcile(
      payments,
      final,
      sent({ payment_method: 'QR_PAYMENT' }),
      undefined,
      30_000,
      check(),
      START,
    );
    expect(created.customer_redirect_url).toBe('https://pay.gw.test/p/77');
  });

  it('a record created just inside the clock tolerance before the call is still this call’s', async () => {
    const { payments } = lookup(ours({ created_at: at(-CLOCK_TOLERANCE_MS) }));
    await expect(reconcile(payments, final, sent(), undefined, 30_000, check(), START)).resolves.toMatchObject({
      payment_id: 'PAY_77',
    });
  });

  it('this call’s payment without a payment_url: PaymentUrlUnavailableError with the record and its expiry', async () => {
    const record = ours({ payment_url: undefined, gateway: undefined });
    const { payments } = lookup(record);
    const error = await caught(reconcile(payments, final, sent(), undefined, 30_000, check(), START));
    expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
    expect(error).toMatchObject({
      code: 'PAYMENT_URL_UNAVAILABLE',
      retryable: false,
      referenceId: 'ORDER77',
      expiresAt: at(900_000),
      status: 409,
      correlationId: 'corr-final',
    });
    expect(error.existingPayment).toBe(record);
    expect(error.cause).toBe(final);
    expect(error.message).toContain('payment PAY_77 for reference_id ORDER77 was created');
    expect(error.message).toContain('under a new reference_id');
    expect(error.message).toContain(`It expires at ${at(900_000)}.`);
  });

  it('without an expiry the PaymentUrlUnavailableError says none', async () => {
    const { payments } = lookup(ours({ payment_url: undefined, expires_at: null }));
    const error = await caught(reconcile(payments, final, sent(), undefined, 30_000, check(), START));
    expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
    expect(error.expiresAt).toBeUndefined();
    expect(error.message).not.toContain('It expires');
  });

  it.each<[string, Partial<PaymentStatus>]>([
    ['another amount', { amount: 3000 }],
    ['already paid', { status: 'SUCCESS' }],
    ['expired', { status: 'EXPIRED' }],
    ['created before the call', { created_at: at(-CLOCK_TOLERANCE_MS - 1) }],
    ['created at an unknown time', { created_at: undefined }],
    ['a withdrawal', { payment_id: 'WD_77' }],
    ['a withdrawal by its transaction_type', { transaction_type: 'WITHDRAWAL' }],
  ])(
    'a record not this call’s (%s) is a DuplicateReferenceError with the record, never the old payment as the new one',
    async (_label, over) => {
      // It has a URL: returning it would hand the customer someone else's payment.
      const record = ours(over);
      const { payments } = lookup(record);
      const error = await caught(reconcile(payments, final, sent(), undefined, 30_000, check(), START));
      expect(error).toBeInstanceOf(DuplicateReferenceError);
      expect(error).toMatchObject({
        code: 'DUPLICATE_REFERENCE',
        referenceId: 'ORDER77',
        status: 409,
        correlationId: 'corr-final',
      });
      expect(error.existingPayment).toBe(record);
      expect(error.cause).toBe(final);
      expect(error.message).toContain(`already belongs to ${record.payment_id}`);
      expect(error.message).toContain('this call created no payment');
    },
  );

  it.each<[string, Partial<PaymentStatus>, string]>([
    ['a javascript: payment_url', { payment_url: 'javascript:alert(1)' }, 'payment_url'],
    ['an http:// payment_url', { payment_url: 'http://pay.gw.test/p/77' }, 'payment_url'],
    [
      'an http:// gateway.redirect_url',
      { gateway: { redirect_url: 'http://bank.gw.test/auth/77' } },
      'gateway.redirect_url',
    ],
    ['a payment_url with credentials', { payment_url: 'https://user:pw@pay.gw.test/p/77' }, 'payment_url'],
    ['another reference_id', { reference_id: 'ORDER78' }, 'reference_id'],
  ])(
    'this call’s record with %s is an InvalidResponseError, never handed to a customer',
    async (_label, over, field) => {
      const { payments } = lookup(ours(over));
      const error = await caught(reconcile(payments, final, sent(), undefined, 30_000, check(), START));
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(error).toMatchObject({ code: 'INVALID_RESPONSE', field });
      expect(error.message).toContain('FOLLOW-UP ADVICE');
    },
  );

  it('accepts loopback http URLs only when the client allows insecure loopback', async () => {
    const local = ours({
      payment_url: 'http://127.0.0.1:4010/pay/77',
      gateway: { redirect_url: 'http://localhost:4010/bank/77' },
    });
    const refused = await caught(
      reconcile(lookup(local).payments, final, sent(), undefined, 30_000, check(false), START),
    );
    expect(refused).toBeInstanceOf(InvalidResponseError);
    const created = await reconcile(lookup(local).payments, final, sent(), undefined, 30_000, check(true), START);
    expect(created.customer_redirect_url).toBe('http://localhost:4010/bank/77');
  });
});
