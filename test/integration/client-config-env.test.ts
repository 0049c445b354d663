/**
 * Issue 15: `new MyrGateway()` reads MYR_GATEWAY_BASE_URL, MYR_GATEWAY_MERCHANT_ID and
 * MYR_GATEWAY_API_KEY when the options are absent. A value that is missing fails the first call
 * (never the construction, so a module-scope client cannot break a build); a value that is
 * given and wrong still fails the construction.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, MemoryRateLimiter, MemoryTokenStore, MyrGateway } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, paymentParams, withdrawalParams } from '../helpers/client.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => {
  mock.reset();
  vi.unstubAllEnvs();
});
afterAll(() => mock.close());

const isolated = { tokenStore: new MemoryTokenStore(), rateLimiter: new MemoryRateLimiter() };
const VARIABLES = ['MYR_GATEWAY_BASE_URL', 'MYR_GATEWAY_MERCHANT_ID', 'MYR_GATEWAY_API_KEY'] as const;
function unsetAll() {
  for (const name of VARIABLES) vi.stubEnv(name, undefined);
}
function setAll() {
  vi.stubEnv('MYR_GATEWAY_BASE_URL', mock.baseUrl);
  vi.stubEnv('MYR_GATEWAY_MERCHANT_ID', mock.merchant.merchantId);
  vi.stubEnv('MYR_GATEWAY_API_KEY', mock.merchant.apiKey);
}

describe('configuration from the environment', () => {
  it('new MyrGateway() takes all three settings from MYR_GATEWAY_*', async () => {
    setAll();
    const gateway = new MyrGateway(isolated);
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.requests.find((r) => r.endpoint === 'auth')?.body).toMatchObject({
      merchant_id: mock.merchant.merchantId,
    });
  });

  it('options win over the environment', async () => {
    setAll();
    vi.stubEnv('MYR_GATEWAY_MERCHANT_ID', 'M_FROM_ENV_UNKNOWN');
    const gateway = new MyrGateway({ ...isolated, merchantId: mock.merchant.merchantId });
    await expect(gateway.payments.create(paymentParams())).resolves.toMatchObject({ status: 'PROCESSING' });
  });

  it('with nothing set, construction succeeds and every call fails with a ConfigurationError naming the options and variables, sending nothing', async () => {
    unsetAll();
    const gateway = new MyrGateway();
    const calls = [
      () => gateway.payments.create(paymentParams()),
      () => gateway.payments.retrieve('ORDER1001'),
      () => gateway.withdrawals.create(withdrawalParams()),
      () => gateway.withdrawals.recover(withdrawalParams()),
    ];
    for (const call of calls) {
      const error = await caught(call());
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error.code).toBe('INVALID_CONFIGURATION');
      for (const name of ['baseUrl', 'merchantId', 'apiKey', ...VARIABLES]) expect(error.message).toContain(name);
    }
    expect(mock.count()).toBe(0);
  });

  it('settings that arrive after the construction (a .env loaded after the import) are read at the next call', async () => {
    unsetAll();
    const gateway = new MyrGateway(isolated);
    expect(await caught(gateway.payments.retrieve('ORDER1001'))).toBeInstanceOf(ConfigurationError);
    setAll();
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(gateway.toJSON()).toEqual({ baseUrl: `${mock.baseUrl}/`, merchantId: mock.merchant.merchantId });
  });

  it('one missing setting is named alone, with its variable', async () => {
    setAll();
    vi.stubEnv('MYR_GATEWAY_API_KEY', '');
    const error = await caught(new MyrGateway(isolated).payments.create(paymentParams()));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.field).toBe('apiKey');
    expect(error.message).toContain('MYR_GATEWAY_API_KEY');
    expect(error.message).not.toContain('MYR_GATEWAY_BASE_URL');
    expect(mock.count()).toBe(0);
  });

  it('a value that is given and wrong still fails at construction, naming where it came from', () => {
    unsetAll();
    expect(() => new MyrGateway({ baseUrl: 'http://api.gateway.example/api/v1' })).toThrow(ConfigurationError);
    vi.stubEnv('MYR_GATEWAY_BASE_URL', 'http://api.gateway.example/api/v1');
    expect(() => new MyrGateway()).toThrow(/MYR_GATEWAY_BASE_URL/);
    vi.stubEnv('MYR_GATEWAY_BASE_URL', 'not a url');
    expect(() => new MyrGateway()).toThrow(ConfigurationError);
  });

  it.each([
    ['a trailing newline', (key: string) => `${key}\n`, 'at its end'],
    ['a leading tab', (key: string) => `\t${key}`, 'at its start'],
  ])(
    'an api key with %s, from the environment or the options, fails the construction with a ConfigurationError naming where it came from and the whitespace, never the key',
    (_what, spoil, where) => {
      setAll();
      vi.stubEnv('MYR_GATEWAY_API_KEY', spoil(mock.merchant.apiKey));
      const fromEnv = (() => {
        try {
          return new MyrGateway(isolated);
        } catch (error) {
          return error;
        }
      })();
      expect(fromEnv).toBeInstanceOf(ConfigurationError);
      expect(fromEnv).toMatchObject({ code: 'INVALID_CONFIGURATION', field: 'apiKey' });
      expect(String(fromEnv)).toContain('MYR_GATEWAY_API_KEY');
      expect(String(fromEnv)).toContain(`whitespace ${where}`);
      expect(JSON.stringify(fromEnv) + String(fromEnv)).not.toContain(mock.merchant.apiKey);
      expect(() => new MyrGateway({ ...isolated, apiKey: spoil(mock.merchant.apiKey) })).toThrow(
        /apiKey has whitespace/,
      );
    },
  );

  it('a runtime without process (an edge runtime, workerd) or with an env that throws (Deno without --allow-env) does not crash the construction', async () => {
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'process');
    if (!saved) throw new Error('expected a process global under Node');
    let withoutProcess: MyrGateway;
    let throwingEnv: MyrGateway;
    try {
      Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true, writable: true });
      withoutProcess = new MyrGateway(isolated);
      Object.defineProperty(globalThis, 'process', {
        value: {
          env: new Proxy(
            {},
            {
              get: () => {
                throw new Error('NotCapable: Requires env access');
              },
            },
          ),
        },
        configurable: true,
        writable: true,
      });
      throwingEnv = new MyrGateway(isolated);
    } finally {
      Object.defineProperty(globalThis, 'process', saved);
    }
    expect(await caught(withoutProcess.payments.retrieve('ORDER1001'))).toBeInstanceOf(ConfigurationError);
    expect(await caught(throwingEnv.payments.retrieve('ORDER1001'))).toBeInstanceOf(ConfigurationError);
  });
});
