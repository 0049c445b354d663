import { MemoryRateLimiter, MemoryTokenStore, MyrGateway, type MyrGatewayOptions } from '../../src/index.js';
import type { MockGateway } from '../../src/testing/index.js';

/** A sleep that records every requested delay and returns at once (still honouring abort). */
export function recordingSleep() {
  const delays: number[] = [];
  const sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
    delays.push(ms);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return Promise.resolve();
  };
  return { delays, sleep };
}

/**
 * A client wired to the mock, with instant recorded backoff and no jitter unless asked. Each
 * gets a token cache and a rate budget of its own, so a test's requests (token included) are
 * its own; the process-wide defaults are tested in tokens/shared-in-process.test.ts and
 * client-pacing.test.ts.
 */
export function clientFor(mock: MockGateway, overrides: Partial<MyrGatewayOptions> = {}) {
  const recorder = recordingSleep();
  const gateway = new MyrGateway({
    baseUrl: mock.baseUrl,
    merchantId: mock.merchant.merchantId,
    apiKey: mock.merchant.apiKey,
    sleep: recorder.sleep,
    random: () => 0,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: new MemoryRateLimiter(),
    ...overrides,
  });
  return { gateway, delays: recorder.delays };
}

let counter = 0;
/** A fresh alphanumeric reference_id. */
export function ref(prefix = 'ORDER'): string {
  counter += 1;
  return `${prefix}${Date.now()}${counter}`;
}

/** Valid payment params for each method. */
export function paymentParams(method: 'QR_PAYMENT' | 'BANK_TRANSFER' | 'MOBILE_WALLET' = 'QR_PAYMENT', amount = 120.5) {
  const base = {
    amount,
    reference_id: ref(),
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
  };
  if (method === 'BANK_TRANSFER') {
    return { ...base, payment_method: method, metadata: { provider_channel_id: 'MB2U0227' as const } };
  }
  return { ...base, payment_method: method };
}

/** Valid withdrawal params. */
export function withdrawalParams(amount = 250) {
  return {
    amount,
    reference_id: ref('PAYOUT'),
    bank_code: 'PBBEMYKL',
    account_number: '5140123456789',
    account_name: 'Tan Wei Ming',
  };
}

/** Captures a rejected promise's error for assertions. */
export async function caught(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected the promise to reject');
}
