import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_CHANNELS_GROUP_A, PROVIDER_CHANNELS_GROUP_B } from '../../src/schemas/bank-codes.js';
import { createMockGateway } from '../../src/testing/index.js';
import { call, deposit, getToken, ref, withdrawal } from '../helpers/mock-http.js';

const START = Date.parse('2026-03-01T08:00:00.000Z');
let clock = START;
let ids = 0;
const mock = createMockGateway({
  now: () => clock,
  generateId: (prefix) => (prefix === 'PAY_' ? `PAY_${++ids}` : `WD_${++ids}`),
  merchants: [
    { merchantId: 'MERCHANT_A', apiKey: 'sk_test_a' },
    { merchantId: 'MERCHANT_B', apiKey: 'sk_test_b' },
  ],
});
// A second mock in the test environment, and one whose ids can clash with references.
const testEnv = createMockGateway({ baseUrl: 'https://testenv.myr-gateway.test/api/v1', environment: 'test' });
let next = 0;
const clash = createMockGateway({
  baseUrl: 'https://clash.myr-gateway.test/api/v1',
  generateId: () => ['REFX1', 'PAY_second'][next++] as string,
});
// One msw server for all three, through their exported handlers.
const server = setupServer(...mock.handlers, ...testEnv.handlers, ...clash.handlers);
let token: string;

beforeAll(() => server.listen({ onUnhandledFrame: 'bypass' }));
afterEach(() => {
  mock.reset();
  clock = START;
});
afterAll(() => server.close());

const create = async (body: Record<string, unknown>, t?: string) =>
  call(mock, 'POST', '/payment/request', { token: t ?? (token = await getToken(mock)), body });

describe('POST /payment/request: success', () => {
  it('returns the spec data object and stores the payment in PROCESSING', async () => {
    const body = deposit({
      amount: 120.5,
      callback_url: 'https://shop.test/cb',
      redirect_url: 'https://shop.test/done',
    });
    const res = await create(body);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    const data = res.body.data;
    expect(data).toEqual({
      payment_id: expect.stringMatching(/^PAY_/),
      payment_url: expect.stringMatching(/^https:\/\//),
      status: 'PROCESSING',
      amount: 120.5,
      currency: 'MYR',
      reference_id: body.reference_id,
      expires_in: 900,
      expires_at: new Date(START + 900_000).toISOString(),
      gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: expect.stringContaining('/bank/'), qr_data_string: null },
    });
    expect(data.gateway.redirect_url).not.toBe(data.payment_url);
    const stored = mock.getPayment(data.payment_id);
    expect(stored?.status).toBe('PROCESSING');
    expect(stored?.metadata).toEqual({ provider_channel_id: 'MB2U0227', order: 'A-1' });
    expect(stored?.callback_url).toBe('https://shop.test/cb');
    expect(mock.getPayment(body.reference_id as string)?.payment_id).toBe(data.payment_id);
  });

  it('uses a wallet page for MOBILE_WALLET and accepts a missing currency and metadata', async () => {
    const res = await create(deposit({ payment_method: 'MOBILE_WALLET', metadata: undefined, currency: undefined }));
    expect(res.status).toBe(200);
    expect(res.body.data.gateway.redirect_url).toContain('/wallet/');
    expect(res.body.data.currency).toBe('MYR');
  });

  it('accepts both bank lists, and the range bounds with two decimals', async () => {
    const t = await getToken(mock);
    for (const channel of [
      PROVIDER_CHANNELS_GROUP_A[0],
      PROVIDER_CHANNELS_GROUP_B[PROVIDER_CHANNELS_GROUP_B.length - 1],
    ]) {
      expect((await create(deposit({ metadata: { provider_channel_id: channel } }), t)).status).toBe(200);
    }
    for (const amount of [5, 50_000, 19.99, 5.1]) {
      const res = await create(deposit({ amount, payment_method: 'QR_PAYMENT' }), t);
      expect(res.status, `amount ${amount}`).toBe(200);
      expect(res.body.data.amount).toBe(amount);
    }
  });

  it('honours paymentTtlSeconds-like expiry: PROCESSING turns EXPIRED when the clock passes expires_at (A8)', async () => {
    const res = await create(deposit());
    const id = res.body.data.payment_id as string;
    clock = START + 899_000;
    expect((await call(mock, 'GET', `/payment/status/${id}`, { token })).body.data.status).toBe('PROCESSING');
    clock = START + 900_000;
    const later = await call(mock, 'GET', `/payment/status/${id}`, { token });
    expect(later.body.data.status).toBe('EXPIRED');
    expect(later.body.data.completed_at).toBeNull();
    expect(mock.getPayment(id)?.status).toBe('EXPIRED');
  });
});

describe('POST /payment/request: the spec rules', () => {
  it.each([
    ['hyphen in reference_id', { reference_id: 'ORDER-1' }],
    ['space in reference_id', { reference_id: 'ORDER 1' }],
    ['empty reference_id', { reference_id: '' }],
    ['101-char reference_id', { reference_id: 'A'.repeat(101) }],
    ['missing reference_id', { reference_id: undefined }],
    ['missing customer_name', { customer_name: undefined }],
    ['leading + in phone', { customer_phone: '+60123456789' }],
    ['empty phone', { customer_phone: '' }],
    ['51-char phone', { customer_phone: '6'.repeat(51) }],
    ['unknown payment_method', { payment_method: 'CARD' }],
    ['missing payment_method', { payment_method: undefined }],
    ['currency USD', { currency: 'USD' }],
    ['amount as string', { amount: '100' }],
    ['missing amount', { amount: undefined }],
    ['metadata as array', { payment_method: 'QR_PAYMENT', metadata: [1] }],
    ['callback_url not a URL', { callback_url: 'not a url' }],
  ])('%s gives 400 VALIDATION_ERROR', async (_name, overrides) => {
    const res = await create(deposit(overrides));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 'error', error: 'VALIDATION_ERROR', message: expect.any(String) });
    expect(mock.payments).toHaveLength(0);
  });

  it('accepts a 100-character reference_id', async () => {
    expect((await create(deposit({ reference_id: 'A'.repeat(100) }))).status).toBe(200);
  });

  it.each([4.99, 50_000.01, 0, -5, 1.005, 10.001, 10.1 + 0.2, 1e21])(
    'amount %s gives 400 INVALID_AMOUNT',
    async (amount) => {
      const res = await create(deposit({ amount }));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('INVALID_AMOUNT');
    },
  );

  it.each(['callback_url', 'redirect_url'])(
    'http:// %s gives 422 VALIDATION_ERROR in production (A3)',
    async (field) => {
      const res = await create(deposit({ [field]: 'http://shop.test/x' }));
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('VALIDATION_ERROR');
      expect(res.body.message).toContain(field);
    },
  );

  it('accepts http:// URLs in the test environment (A10)', async () => {
    {
      const t = await getToken(testEnv);
      const res = await call(testEnv, 'POST', '/payment/request', {
        token: t,
        body: deposit({ callback_url: 'http://127.0.0.1:9/cb', redirect_url: 'http://localhost/done' }),
      });
      expect(res.status).toBe(200);
      const ftp = await call(testEnv, 'POST', '/payment/request', {
        token: t,
        body: deposit({ callback_url: 'ftp://x.test/cb' }),
      });
      expect(ftp.status).toBe(422);
    }
  });

  it.each([
    ['no metadata', undefined],
    ['metadata without the channel', { other: 1 }],
    ['an empty channel', { provider_channel_id: '' }],
  ])('BANK_TRANSFER with %s gives 400 MISSING_PROVIDER_CHANNEL', async (_name, metadata) => {
    const res = await create(deposit({ metadata }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('MISSING_PROVIDER_CHANNEL');
  });

  it.each(['MAYBANK', 'mb2u0227', 'MBBEMYKL', 42])(
    'provider_channel_id %s gives 400 INVALID_PROVIDER_CHANNEL',
    async (channel) => {
      const res = await create(deposit({ metadata: { provider_channel_id: channel } }));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('INVALID_PROVIDER_CHANNEL');
    },
  );

  it('a reused reference_id gives 409 DUPLICATE_REFERENCE and keeps the first payment', async () => {
    const body = deposit();
    const first = await create(body);
    const again = await create({ ...body, amount: 999 }, token);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('DUPLICATE_REFERENCE');
    expect(mock.payments).toHaveLength(1);
    expect(mock.getPayment(first.body.data.payment_id)?.amount).toBe(120.5);
  });

  it('references are unique per merchant across deposits and withdrawals (A7), not across merchants', async () => {
    const reference = ref('SHARED');
    const a = await getToken(mock);
    expect(
      (await call(mock, 'POST', '/payment/withdraw', { token: a, body: withdrawal({ reference_id: reference }) }))
        .status,
    ).toBe(200);
    const dup = await create(deposit({ reference_id: reference }), a);
    expect(dup.status).toBe(409);
    const b = await getToken(mock, { merchantId: 'MERCHANT_B', apiKey: 'sk_test_b' });
    expect((await create(deposit({ reference_id: reference }), b)).status).toBe(200);
  });

  it('a method without an active gateway gives 503 NO_GATEWAY_AVAILABLE, per method', async () => {
    mock.setGatewayAvailable('BANK_TRANSFER', false);
    const res = await create(deposit());
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('NO_GATEWAY_AVAILABLE');
    expect((await create(deposit({ payment_method: 'QR_PAYMENT' }), token)).status).toBe(200);
    mock.setGatewayAvailable('BANK_TRANSFER', true);
    expect((await create(deposit(), token)).status).toBe(200);
  });
});

describe('GET /payment/status/:identifier', () => {
  it('finds a payment by payment_id and by reference_id with the status record shape', async () => {
    const body = deposit();
    const created = (await create(body)).body.data;
    for (const identifier of [created.payment_id, body.reference_id]) {
      const res = await call(mock, 'GET', `/payment/status/${identifier}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        data: {
          payment_id: created.payment_id,
          reference_id: body.reference_id,
          amount: 120.5,
          currency: 'MYR',
          status: 'PROCESSING',
          gateway_reference: null,
          created_at: new Date(START).toISOString(),
          completed_at: null,
          expires_at: created.expires_at,
        },
      });
      expect(res.body.data).not.toHaveProperty('metadata');
    }
  });

  it('a payment_id match wins over a reference_id match', async () => {
    // Real ids carry "_" and references cannot, so the clash needs the custom id generator
    // of the `clash` mock: its first payment gets the id REFX1, the second the reference REFX1.
    {
      const t = await getToken(clash);
      const first = await call(clash, 'POST', '/payment/request', {
        token: t,
        body: deposit({ reference_id: 'FIRST1', amount: 10 }),
      });
      expect(first.body.data.payment_id).toBe('REFX1');
      const second = await call(clash, 'POST', '/payment/request', {
        token: t,
        body: deposit({ reference_id: 'REFX1', amount: 20 }),
      });
      expect(second.body.data.payment_id).toBe('PAY_second');
      const res = await call(clash, 'GET', '/payment/status/REFX1', { token: t });
      expect(res.body.data.payment_id).toBe('REFX1');
      expect(res.body.data.amount).toBe(10);
      expect((await call(clash, 'GET', '/payment/status/PAY_second', { token: t })).body.data.reference_id).toBe(
        'REFX1',
      );
    }
  });

  it('looks up references only within the calling merchant, and ids of other merchants are not found', async () => {
    const body = deposit();
    const created = (await create(body)).body.data;
    const b = await getToken(mock, { merchantId: 'MERCHANT_B', apiKey: 'sk_test_b' });
    for (const identifier of [created.payment_id, body.reference_id]) {
      const res = await call(mock, 'GET', `/payment/status/${identifier}`, { token: b });
      expect(res.status).toBe(404);
    }
  });

  it('answers 404 NOT_FOUND for an unknown identifier (A2)', async () => {
    const res = await call(mock, 'GET', '/payment/status/NOSUCHPAYMENT', { token: await getToken(mock) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: 'error', error: 'NOT_FOUND', message: expect.any(String) });
  });

  it('finds withdrawals too, by id and by reference (A6)', async () => {
    const t = await getToken(mock);
    const body = withdrawal();
    const created = (await call(mock, 'POST', '/payment/withdraw', { token: t, body })).body.data;
    for (const identifier of [created.payment_id, body.reference_id]) {
      const res = await call(mock, 'GET', `/payment/status/${identifier}`, { token: t });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        payment_id: created.payment_id,
        status: 'PROCESSING',
        amount: 250,
        expires_at: null,
      });
    }
  });
});
