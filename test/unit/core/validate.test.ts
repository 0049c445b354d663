/**
 * src/core/validate.ts on its own: which spec code and field a broken rule is reported under,
 * how a 2xx answer is checked, and the answer checks that keep a hostile URL or a foreign
 * echo from reaching a merchant.
 */
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../../src/core/errors/base.js';
import { InvalidResponseError } from '../../../src/core/errors/service.js';
import {
  type AnswerCheck,
  checkCustomerUrl,
  checkEcho,
  parseSuccess,
  validateRequest,
} from '../../../src/core/validate.js';
import { paymentCreateParamsSchema } from '../../../src/schemas/payments.js';

const bankTransfer = {
  amount: 100,
  reference_id: 'ORDER1',
  customer_name: 'Aisyah Rahman',
  customer_phone: '60123456789',
  payment_method: 'BANK_TRANSFER',
  metadata: { provider_channel_id: 'MB2U0227' },
};

function refusal(input: unknown): InvalidRequestError {
  try {
    validateRequest(paymentCreateParamsSchema(input), input, 'payment create');
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return error as InvalidRequestError;
  }
  throw new Error('expected a refusal');
}

describe('validateRequest: the code and field of the first broken rule', () => {
  it('returns the parsed params when they are valid', () => {
    expect(validateRequest(paymentCreateParamsSchema(bankTransfer), bankTransfer, 'payment create')).toMatchObject({
      amount: 100,
      reference_id: 'ORDER1',
    });
  });

  it.each([
    ['an amount below the minimum', { ...bankTransfer, amount: 1 }, 'INVALID_AMOUNT', 'amount'],
    ['an amount with three decimals', { ...bankTransfer, amount: 10.005 }, 'INVALID_AMOUNT', 'amount'],
    [
      'BANK_TRANSFER without metadata',
      { ...bankTransfer, metadata: undefined },
      'MISSING_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    ],
    [
      'BANK_TRANSFER with an empty channel',
      { ...bankTransfer, metadata: { provider_channel_id: '' } },
      'MISSING_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    ],
    [
      'a channel outside both lists',
      { ...bankTransfer, metadata: { provider_channel_id: 'NOPE0001' } },
      'INVALID_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    ],
    ['a reference_id with a dash', { ...bankTransfer, reference_id: 'ORDER-1' }, 'VALIDATION_ERROR', 'reference_id'],
    [
      'an unknown payment_method, even beside other problems',
      { ...bankTransfer, payment_method: 'CARD', amount: 1 },
      'VALIDATION_ERROR',
      'payment_method',
    ],
    [
      'QR_PAYMENT with metadata that is not an object',
      { ...bankTransfer, payment_method: 'QR_PAYMENT', metadata: ['x'] },
      'VALIDATION_ERROR',
      'metadata',
    ],
    // A Map would be sent as {} (its entries lost), a Date as a string: only plain objects are data.
    [
      'QR_PAYMENT with a Map as metadata',
      { ...bankTransfer, payment_method: 'QR_PAYMENT', metadata: new Map([['order', 1]]) },
      'VALIDATION_ERROR',
      'metadata',
    ],
    [
      'MOBILE_WALLET with a Date as metadata',
      { ...bankTransfer, payment_method: 'MOBILE_WALLET', metadata: new Date(0) },
      'VALIDATION_ERROR',
      'metadata',
    ],
    ['an empty reference_id', { ...bankTransfer, reference_id: '' }, 'VALIDATION_ERROR', 'reference_id'],
  ])('%s is %s on %s', (_what, input, code, field) => {
    const error = refusal(input);
    expect(error).toMatchObject({ code, field });
    expect(error.message.startsWith(`${code}: payment create rejected before sending`)).toBe(true);
  });

  it('names every payment method when payment_method is unknown', () => {
    expect(refusal({ ...bankTransfer, payment_method: 'CARD' }).message).toContain(
      'payment_method must be one of QR_PAYMENT, BANK_TRANSFER, MOBILE_WALLET',
    );
  });

  it.each([null, 'ORDER1', 42, [bankTransfer]])('refuses %j as params that are not an object', (input) => {
    expect(refusal(input)).toMatchObject({ code: 'VALIDATION_ERROR', field: undefined });
  });

  it('says how many more problems there were, and keeps the first one as the field', () => {
    const error = refusal({ ...bankTransfer, amount: 1, reference_id: 'A-1', customer_phone: '' });
    expect(error.field).toBe('amount');
    expect(error.message).toMatch(/and 2 more problem\(s\)/);
  });

  it('a metadata problem on another method stays a plain validation error', () => {
    const schema = z.object({ payment_method: z.string(), metadata: z.object({ note: z.string() }) });
    const error = (() => {
      try {
        validateRequest(schema, { payment_method: 'QR_PAYMENT', metadata: 5 }, 'x');
      } catch (e) {
        return e as InvalidRequestError;
      }
      throw new Error('expected a refusal');
    })();
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'metadata' });
  });
});

describe('parseSuccess: the success envelope and the data schema', () => {
  const schema = z.looseObject({ payment_id: z.string() });

  it('returns the data, extra fields kept', () => {
    expect(
      parseSuccess(schema, { status: 'success', data: { payment_id: 'PAY_1', extra: 1 } }, 'payment status'),
    ).toEqual({ payment_id: 'PAY_1', extra: 1 });
  });

  it.each([
    ['null', null],
    ['an error envelope', { status: 'error', error: 'X' }],
    ['an envelope without data', { status: 'success' }],
    ['a bare data object', { payment_id: 'PAY_1' }],
  ])('refuses %s as not the envelope, with the follow-up appended', (_what, body) => {
    expect(() => parseSuccess(schema, body, 'payment create', ' (it may have been created)')).toThrow(
      expect.objectContaining({
        name: 'InvalidResponseError',
        code: 'INVALID_RESPONSE',
        message: expect.stringMatching(/may have been created\)$/),
      }),
    );
  });

  it('names the malformed field of the data', () => {
    expect(() => parseSuccess(schema, { status: 'success', data: { payment_id: 5 } }, 'payment status')).toThrow(
      expect.objectContaining({ field: 'payment_id', message: expect.stringContaining('malformed field payment_id') }),
    );
    expect(() => parseSuccess(schema, { status: 'success', data: 'x' }, 'payment status')).toThrow(
      InvalidResponseError,
    );
  });
});

describe('answer checks', () => {
  const check: AnswerCheck = { what: 'payment create', followUp: ' FOLLOW-UP', allowInsecureLoopback: false };

  it('an echo must be what was sent; a missing echo is fine', () => {
    expect(() => checkEcho(check, 'reference_id', 'ORDER1', 'ORDER1')).not.toThrow();
    expect(() => checkEcho(check, 'reference_id', 'ORDER1', undefined)).not.toThrow();
    expect(() => checkEcho(check, 'reference_id', 'ORDER1', null)).not.toThrow();
    expect(() => checkEcho(check, 'amount', 100, 100)).not.toThrow();
    expect(() => checkEcho(check, 'reference_id', 'ORDER1', 'ORDER2')).toThrow(
      expect.objectContaining({
        name: 'InvalidResponseError',
        field: 'reference_id',
        message: expect.stringMatching(/ORDER2.*ORDER1.* FOLLOW-UP$/),
      }),
    );
    expect(() => checkEcho(check, 'amount', 100, '100')).toThrow(InvalidResponseError);
  });

  it.each([
    'javascript:alert(1)',
    'data:text/html,x',
    'http://pay.example.com/x',
    'https://user:pw@pay.example.com/',
    'not a url',
    42,
  ])('refuses %j as a customer URL', (value) => {
    expect(() => checkCustomerUrl(check, 'payment_url', value)).toThrow(
      expect.objectContaining({ field: 'payment_url' }),
    );
  });

  it('accepts https, and http only to loopback when the client allows it', () => {
    expect(() => checkCustomerUrl(check, 'payment_url', 'https://pay.example.com/p/1')).not.toThrow();
    expect(() => checkCustomerUrl(check, 'payment_url', undefined)).not.toThrow();
    expect(() => checkCustomerUrl(check, 'payment_url', 'http://127.0.0.1:8080/p/1')).toThrow(InvalidResponseError);
    const loopback = { ...check, allowInsecureLoopback: true };
    expect(() => checkCustomerUrl(loopback, 'payment_url', 'http://127.0.0.1:8080/p/1')).not.toThrow();
    expect(() => checkCustomerUrl(loopback, 'payment_url', 'http://[::1]/p')).not.toThrow();
    expect(() => checkCustomerUrl(loopback, 'payment_url', 'http://pay.example.com/p')).toThrow(InvalidResponseError);
  });
});
