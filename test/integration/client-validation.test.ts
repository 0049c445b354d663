import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidRequestError,
  MemoryTokenStore,
  MyrGateway,
  MyrGatewayError,
  PROVIDER_CHANNELS_GROUP_A,
  PROVIDER_CHANNELS_GROUP_B,
} from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams, withdrawalParams } from '../helpers/client.js';
import { captureConsoleWarn, MANY_CLIENTS_WARNING } from '../helpers/warnings.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());
// Each test builds a client of its own (a fresh token cache): past the 20th, the process warns
// once that clients should be reused. Expected here: captured, and checked by the last test.
const consoleWarnings = captureConsoleWarn();

/** Every rejected request must fail with the right code and field, and send nothing at all. */
async function expectRejected(promise: Promise<unknown>, code: string, field: string) {
  const error = await caught(promise);
  expect(error).toBeInstanceOf(InvalidRequestError);
  expect(error).toBeInstanceOf(MyrGatewayError);
  expect(error.code).toBe(code);
  expect(error.field).toBe(field);
  expect(error.message).toContain(field.split('.').pop() as string);
  expect(mock.count()).toBe(0);
}

describe('payment create: validation before the network', () => {
  // A fresh client per test: mock.reset() forgets the tokens a shared client would hold.
  let gateway: MyrGateway;
  beforeEach(() => {
    gateway = clientFor(mock).gateway;
  });
  const create = (patch: Record<string, unknown>) =>
    gateway.payments.create({ ...paymentParams('QR_PAYMENT'), ...patch });

  it.each([
    [4.99, 'below the 5 MYR minimum'],
    [50_000.01, 'above the 50,000 MYR maximum'],
    [0, 'zero'],
    [-10, 'negative'],
    [1.005, 'three decimals'],
    [0.1 + 0.2, 'float artefact 0.30000000000000004'],
    [10.001, 'three decimals in range'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
  ])('rejects amount %s (%s) with INVALID_AMOUNT', async (amount) => {
    await expectRejected(create({ amount }), 'INVALID_AMOUNT', 'amount');
  });

  it.each([5, 19.99, 50_000, 100.1, 7.5])('accepts amount %s', async (amount) => {
    const payment = await create({ amount });
    expect(payment.amount).toBe(amount);
    expect(mock.count('payment.create')).toBe(1);
  });

  it.each([
    ['120.50', 120.5],
    ['100', 100],
    ['5.00', 5],
    ['50000', 50_000],
    ['19.99', 19.99],
  ])('accepts the decimal string %j and sends the JSON number %d', async (amount, sent) => {
    await expect(create({ amount })).resolves.toMatchObject({ amount: sent });
    const body = mock.requests.find((r) => r.endpoint === 'payment.create')?.body as { amount: unknown };
    expect(body.amount).toBe(sent);
    expect(typeof body.amount).toBe('number');
  });

  it('names metadata, not the provider channel, when a QR payment carries metadata that is not an object', async () => {
    await expectRejected(create({ metadata: 'not-an-object' }), 'VALIDATION_ERROR', 'metadata');
  });

  it.each([
    ['1e3', 'an exponent'],
    ['12.345', 'three decimals'],
    ['120.500', 'three decimals, even as zeros'],
    [' 120', 'a space'],
    ['-10', 'a sign'],
    ['+10', 'a plus sign'],
    ['1,000', 'a thousands separator'],
    ['NaN', 'NaN as text'],
    ['Infinity', 'Infinity as text'],
    ['', 'an empty string'],
    ['4.99', 'below the minimum'],
    ['50000.01', 'above the maximum'],
    ['0x10', 'hexadecimal'],
  ])('rejects the amount string %j (%s) before sending', async (amount) => {
    await expectRejected(create({ amount }), 'INVALID_AMOUNT', 'amount');
  });

  it.each(['ORDER-1', 'ORDER 1', 'ORDER_1', 'ÖRDER1', '', 'A'.repeat(101)])(
    'rejects reference_id %j with VALIDATION_ERROR',
    async (reference_id) => {
      await expectRejected(create({ reference_id }), 'VALIDATION_ERROR', 'reference_id');
    },
  );

  it('accepts a 100-character alphanumeric reference_id', async () => {
    const reference_id = 'A1'.repeat(50);
    await expect(create({ reference_id })).resolves.toMatchObject({ reference_id });
  });

  it.each([
    ['+60123456789', 'leading plus'],
    ['', 'empty'],
    ['6'.repeat(51), '51 characters'],
  ])('rejects customer_phone %j (%s)', async (customer_phone) => {
    await expectRejected(create({ customer_phone }), 'VALIDATION_ERROR', 'customer_phone');
  });

  it('accepts a 50-character customer_phone', async () => {
    await expect(create({ customer_phone: '6'.repeat(50) })).resolves.toBeDefined();
  });

  it('rejects an unknown payment_method', async () => {
    await expectRejected(create({ payment_method: 'CARD' }), 'VALIDATION_ERROR', 'payment_method');
  });

  it('rejects a missing customer_name', async () => {
    await expectRejected(create({ customer_name: undefined }), 'VALIDATION_ERROR', 'customer_name');
  });

  it('rejects a currency other than MYR', async () => {
    await expectRejected(create({ currency: 'USD' }), 'VALIDATION_ERROR', 'currency');
  });

  it.each(['callback_url', 'redirect_url'])('rejects an http:// %s', async (field) => {
    await expectRejected(create({ [field]: 'http://merchant.example/cb' }), 'VALIDATION_ERROR', field);
  });

  it.each(['callback_url', 'redirect_url'])(
    'rejects an http:// loopback %s unless the client allows insecure loopback',
    async (field) => {
      await expectRejected(create({ [field]: 'http://127.0.0.1:3000/webhooks/myr' }), 'VALIDATION_ERROR', field);
    },
  );

  it.each(['callback_url', 'redirect_url'])(
    'sends an http:// loopback %s when the client allows insecure loopback (a local sandbox)',
    async (field) => {
      const served = await mock.serve();
      try {
        const local = new MyrGateway({
          baseUrl: served.baseUrl,
          ...mock.merchant,
          allowInsecureLoopback: true,
          tokenStore: new MemoryTokenStore(),
        });
        const url = 'http://127.0.0.1:3000/webhooks/myr';
        await local.payments.create({ ...paymentParams('QR_PAYMENT'), [field]: url }).catch(() => undefined);
        const sent = mock.requests.find((r) => r.endpoint === 'payment.create')?.body as
          Record<string, unknown> | undefined;
        expect(sent?.[field]).toBe(url);
        // Any other http URL stays refused, before sending.
        const before = mock.count('payment.create');
        await expect(
          local.payments.create({ ...paymentParams('QR_PAYMENT'), [field]: 'http://merchant.example/cb' }),
        ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', field });
        expect(mock.count('payment.create')).toBe(before);
      } finally {
        await served.close();
      }
    },
  );

  it.each(['callback_url', 'redirect_url'])('rejects a %s that is not a URL', async (field) => {
    await expectRejected(create({ [field]: 'merchant.example/cb' }), 'VALIDATION_ERROR', field);
  });

  it.each(['callback_url', 'redirect_url'])(
    'says first what is wrong with a %s that is no URL at all',
    async (field) => {
      const error = await caught(create({ [field]: 'not a url' }));
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field });
      expect(error.message).toContain(`${field} must be an absolute https:// URL`);
      expect(error.message).not.toMatch(/spaces|more problem/);
      const spaced = await caught(create({ [field]: 'https://shop.example/re turn' }));
      expect(spaced.message).toContain(`${field} must not contain spaces`);
    },
  );

  // `new URL()` silently drops tabs and line breaks and trims spaces, so a check on the parsed
  // URL passed while the raw string (a header injection, a tab in the host) was sent verbatim.
  it.each([
    ['a CR LF header injection', 'https://shop.example/return\r\nSet-Cookie: session=evil'],
    ['a line feed', 'https://shop.example/re\nturn'],
    ['a tab inside the host', 'https://shop.exa\tmple/return'],
    ['a space in the path', 'https://shop.example/re turn'],
    ['a leading space', ' https://shop.example/return'],
    ['a trailing space', 'https://shop.example/return '],
    ['a NUL', 'https://shop.example/return\u0000'],
    ['a leading NUL (which the URL parser strips)', '\u0000https://shop.example/return'],
    ['a DEL', 'https://shop.example/return\u007f'],
    ['a no-break space', 'https://shop.example/return\u00a0'],
  ])('refuses a URL field with %s before sending', async (_label, url) => {
    for (const field of ['callback_url', 'redirect_url']) {
      await expectRejected(create({ [field]: url }), 'VALIDATION_ERROR', field);
    }
  });

  it('sends the normalised URL, not the raw string', async () => {
    const params = {
      ...paymentParams('QR_PAYMENT'),
      callback_url: 'HTTPS://Shop.Example:443/a/../webhooks/myr',
      redirect_url: 'https://shop.example',
    };
    await gateway.payments.create(params);
    const sent = mock.requests.find((r) => r.endpoint === 'payment.create')?.body as
      Record<string, unknown> | undefined;
    expect(sent?.callback_url).toBe('https://shop.example/webhooks/myr');
    expect(sent?.redirect_url).toBe('https://shop.example/');
  });

  it('requires metadata.provider_channel_id for BANK_TRANSFER', async () => {
    await expectRejected(
      create({ payment_method: 'BANK_TRANSFER', metadata: undefined }),
      'MISSING_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    );
    await expectRejected(
      create({ payment_method: 'BANK_TRANSFER', metadata: { note: 'x' } }),
      'MISSING_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    );
  });

  it('rejects a provider_channel_id outside both bank lists', async () => {
    await expectRejected(
      create({ payment_method: 'BANK_TRANSFER', metadata: { provider_channel_id: 'MAYBANK' } }),
      'INVALID_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    );
  });

  it('accepts every code of both bank lists', async () => {
    for (const code of [...PROVIDER_CHANNELS_GROUP_A, ...PROVIDER_CHANNELS_GROUP_B]) {
      const params = paymentParams('BANK_TRANSFER');
      await expect(
        gateway.payments.create({ ...params, metadata: { provider_channel_id: code } }),
      ).resolves.toMatchObject({ reference_id: params.reference_id });
    }
    expect(mock.count('payment.create')).toBe(PROVIDER_CHANNELS_GROUP_A.length + PROVIDER_CHANNELS_GROUP_B.length);
  });

  it('does not need provider_channel_id for QR_PAYMENT and MOBILE_WALLET', async () => {
    await expect(gateway.payments.create(paymentParams('QR_PAYMENT'))).resolves.toBeDefined();
    await expect(gateway.payments.create(paymentParams('MOBILE_WALLET'))).resolves.toBeDefined();
  });

  it('rejects params that are not an object', async () => {
    const error = await caught(gateway.payments.create(null as never));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(mock.count()).toBe(0);
  });
});

describe('withdrawal create: validation before the network', () => {
  // A fresh client per test: mock.reset() forgets the tokens a shared client would hold.
  let gateway: MyrGateway;
  beforeEach(() => {
    gateway = clientFor(mock).gateway;
  });
  const create = (patch: Record<string, unknown>) => gateway.withdrawals.create({ ...withdrawalParams(), ...patch });

  it.each([49.99, 50_000.01, 100.123, 0.1 + 0.2])('rejects amount %s with INVALID_AMOUNT', async (amount) => {
    await expectRejected(create({ amount }), 'INVALID_AMOUNT', 'amount');
  });

  it.each([50, 50_000, 19_999.99])('accepts amount %s', async (amount) => {
    await expect(create({ amount })).resolves.toMatchObject({ amount });
  });

  it('rejects method other than BANK', async () => {
    await expectRejected(create({ method: 'WALLET' }), 'VALIDATION_ERROR', 'method');
  });

  it('rejects a non-alphanumeric reference_id', async () => {
    await expectRejected(create({ reference_id: 'PAYOUT-1' }), 'VALIDATION_ERROR', 'reference_id');
  });

  it.each(['account_name', 'account_number', 'bank_code'])('rejects a missing %s', async (field) => {
    await expectRejected(create({ [field]: undefined }), 'VALIDATION_ERROR', field);
  });

  it('never echoes the account number in a validation error', async () => {
    // A fixed reference_id: a random one contained "5140" once in CI.
    const error = await caught(create({ account_number: '5140 1234 5678 99', reference_id: 'PAYOUTFIXED1' }));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).not.toContain('5140');
    expect(JSON.stringify(error)).not.toContain('5140');
  });

  it('sends currency MYR and method BANK when omitted', async () => {
    await create({});
    const sent = mock.requests.find((r) => r.endpoint === 'withdraw')?.body as Record<string, unknown>;
    expect(sent.currency).toBe('MYR');
    expect(sent.method).toBe('BANK');
  });
});

describe('status lookup: identifier checked before the network', () => {
  // A fresh client per test: mock.reset() forgets the tokens a shared client would hold.
  let gateway: MyrGateway;
  beforeEach(() => {
    gateway = clientFor(mock).gateway;
  });
  it.each(['ORDER-1', '../auth/token', 'a b', ''])('rejects identifier %j', async (identifier) => {
    const error = await caught(gateway.payments.retrieve(identifier));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.field).toBe('identifier');
    expect(mock.count()).toBe(0);
  });
});

it('printed no warning but the one about the 20+ clients these tests create', () => {
  expect(consoleWarnings.lines).toEqual([expect.stringMatching(MANY_CLIENTS_WARNING)]);
});
