/**
 * Small fetch helpers shared by the mock's integration tests. They talk to the mock
 * exactly as any HTTP client would: plain fetch, JSON bodies.
 */
import type { MockGateway } from '../../src/testing/index.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test-side JSON
  text: string;
}

export async function call(
  mock: Pick<MockGateway, 'baseUrl'> | { baseUrl: string },
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; token?: string | undefined; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  const response = await fetch(`${mock.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export async function getToken(mock: MockGateway, merchant = mock.merchant): Promise<string> {
  const answer = await call(mock, 'POST', '/auth/token', {
    body: { merchant_id: merchant.merchantId, api_key: merchant.apiKey },
  });
  if (answer.status !== 200) throw new Error(`token request failed: ${answer.status} ${answer.text}`);
  return answer.body.data.access_token as string;
}

let counter = 0;
/** A unique alphanumeric reference. */
export function ref(prefix = 'ORDER'): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}`.toUpperCase();
}

export function deposit(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 120.5,
    reference_id: ref(),
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
    payment_method: 'BANK_TRANSFER',
    metadata: { provider_channel_id: 'MB2U0227', order: 'A-1' },
    ...overrides,
  };
}

export function withdrawal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 250,
    currency: 'MYR',
    reference_id: ref('PAYOUT'),
    bank_code: 'PBBEMYKL',
    account_number: '5140123456789',
    account_name: 'Tan Wei Ming',
    method: 'BANK',
    ...overrides,
  };
}
