import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_CHANNELS_GROUP_A, PROVIDER_CHANNELS_GROUP_B } from '../../src/schemas/bank-codes.js';
import { WITHDRAWAL_EWALLET_CODES } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { call, getToken, withdrawal } from '../helpers/mock-http.js';

const START = Date.parse('2026-03-01T08:00:00.000Z');
const mock = createMockGateway({ now: () => START });
let token: string | undefined;

beforeAll(async () => {
  mock.listen();
});
afterEach(() => {
  mock.reset();
  token = undefined;
});
afterAll(() => mock.close());

const withdraw = async (body: Record<string, unknown>) => {
  token ??= await getToken(mock);
  return call(mock, 'POST', '/payment/withdraw', { token, body });
};

describe('POST /payment/withdraw', () => {
  it('stores the withdrawal and answers per A4 with the account number masked', async () => {
    const body = withdrawal({ account_number: '5140123456789' });
    const res = await withdraw(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success',
      data: {
        payment_id: expect.stringMatching(/^WD_[0-9A-F]{24}$/),
        reference_id: body.reference_id,
        amount: 250,
        currency: 'MYR',
        status: 'PROCESSING',
        method: 'BANK',
        bank_code: 'PBBEMYKL',
        account_number: '****6789',
        account_name: 'Tan Wei Ming',
        created_at: new Date(START).toISOString(),
      },
    });
    expect(res.text).not.toContain('5140123456789');
    const stored = mock.getWithdrawal(res.body.data.payment_id);
    expect(stored?.account_number).toBe('5140123456789');
    expect(mock.getWithdrawal(body.reference_id as string)).toBe(stored);
    expect(mock.getPayment(res.body.data.payment_id)).toBeUndefined();
  });

  it('accepts both bank lists and the e-wallet codes (A5), and the amount bounds', async () => {
    const codes = [PROVIDER_CHANNELS_GROUP_A[3], PROVIDER_CHANNELS_GROUP_B[5], ...WITHDRAWAL_EWALLET_CODES];
    for (const bank_code of codes) expect((await withdraw(withdrawal({ bank_code }))).status, bank_code).toBe(200);
    for (const amount of [50, 50_000, 99.99])
      expect((await withdraw(withdrawal({ amount }))).status, String(amount)).toBe(200);
    expect(mock.withdrawals).toHaveLength(codes.length + 3);
  });

  it.each([49.99, 50_000.01, 100.001, 0, -100])('amount %s gives 400 INVALID_AMOUNT', async (amount) => {
    const res = await withdraw(withdrawal({ amount }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 'error', error: 'INVALID_AMOUNT', message: expect.any(String) });
    expect(mock.withdrawals).toHaveLength(0);
  });

  it.each(['MAYBANK', 'XXXXMYKL', 'mb2u0227'])('bank_code %s gives 400 INVALID_BANK_CODE', async (bank_code) => {
    const res = await withdraw(withdrawal({ bank_code }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('INVALID_BANK_CODE');
  });

  it.each([
    ['reference with a hyphen', { reference_id: 'PAY-OUT-1' }],
    ['method other than BANK', { method: 'WALLET' }],
    ['missing method', { method: undefined }],
    ['currency USD', { currency: 'USD' }],
    ['missing currency', { currency: undefined }],
    ['missing account_number', { account_number: undefined }],
    ['blank account_name', { account_name: '  ' }],
    ['missing bank_code', { bank_code: undefined }],
    ['amount as a string', { amount: '250' }],
  ])('%s gives 400 VALIDATION_ERROR', async (_name, overrides) => {
    const res = await withdraw(withdrawal(overrides));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('VALIDATION_ERROR');
  });

  it('a reused reference_id gives 409 DUPLICATE_REFERENCE', async () => {
    const body = withdrawal();
    expect((await withdraw(body)).status).toBe(200);
    const again = await withdraw({ ...body, amount: 60 });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('DUPLICATE_REFERENCE');
    expect(mock.withdrawals).toHaveLength(1);
  });

  it('gives 503 NO_GATEWAY_AVAILABLE when withdrawals are switched off, and stores nothing', async () => {
    mock.setGatewayAvailable('WITHDRAWAL', false);
    const res = await withdraw(withdrawal());
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('NO_GATEWAY_AVAILABLE');
    expect(mock.withdrawals).toHaveLength(0);
    mock.setGatewayAvailable('WITHDRAWAL', true);
    expect((await withdraw(withdrawal())).status).toBe(200);
  });
});
