/**
 * What the mock's dispatcher works on: the options after defaults were applied, the state,
 * the fault queue and the request recording. Shared by `dispatcher.ts`,
 * `money-endpoints.ts` (payment and withdrawal creation) and `service.ts` (which builds it).
 *
 * @module
 */
import type { FaultQueue } from './faults.js';
import type { MockState } from './state.js';
import type { MockRateLimits } from './types/options.js';
import type { MockPaymentRecord, RecordedRequest } from './types/records.js';

/** Options of the mock after defaults were applied. */
export interface ResolvedOptions {
  baseUrl: string;
  /** Path prefix of `baseUrl`, without a trailing slash (e.g. `/api/v1`). */
  basePath: string;
  production: boolean;
  tokenTtlSeconds: number;
  paymentTtlSeconds: number;
  now: () => number;
  rateLimits: MockRateLimits | false;
  rateLimitShape: 'envelope' | 'nest';
  rateLimitWindowMs: number;
  /** The delay before the next request is counted (`rateLimitCountDelay`); undefined: on arrival. */
  rateCountDelay: (() => number) | undefined;
  generateId: (prefix: 'PAY_' | 'WD_') => string;
  /** Origin of the hosted payment pages `payment_url` and `gateway.redirect_url` point to. */
  pageOrigin: string;
  /** `gateway.qr_data_string` of a new payment (null, as in the spec's shown response, by default). */
  qrDataString: (payment: MockPaymentRecord) => string | null;
}

/** What the dispatcher works on. */
export interface DispatchContext {
  options: ResolvedOptions;
  state: MockState;
  faults: FaultQueue;
  requests: RecordedRequest[];
}
