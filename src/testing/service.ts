/**
 * The mock service without a transport: state, the dispatcher, completions and callbacks.
 * `createMockGateway` binds it to msw; the sandbox binds the same service to node:http.
 * Nothing here imports msw, so the sandbox runs where msw is not installed.
 *
 * @module
 */
import { TERMINAL_STATUSES } from '../schemas/statuses.js';
import { DEFAULT_TOKEN_LIFETIME_MS } from '../core/tokens/answer.js';
import { isMilliseconds } from '../core/milliseconds.js';
import { checkCallbackOptions, defaultCallbackFetch, deliverCallback } from './callback-sender.js';
import { FaultQueue } from './faults.js';
import type { ResolvedOptions } from './dispatch-context.js';
import { createDispatcher } from './dispatcher.js';
import { countDelayOf } from './rate-count-delay.js';
import { DEFAULT_PAGE_ORIGIN, defaultGenerateId } from './money-endpoints.js';
import type { MockGateway } from './types/gateway.js';
import { serveOverHttp } from './server.js';
import {
  DEFAULT_RATE_LIMITS,
  MockState,
  RATE_WINDOW_MS,
  randomHex,
  type MockRecord,
  type StateSnapshot,
} from './state.js';
import type { CallbackDelivery, CallbackOptions } from './types/callbacks.js';
import type { MockGatewayOptions, MockMerchant, MockTerminalStatus } from './types/options.js';
import type { MockPaymentRecord, MockWithdrawalRecord, RecordedRequest } from './types/records.js';

/** The default base URL of the mock. */
export const DEFAULT_BASE_URL = 'https://api.myr-gateway.test/api/v1';

/** The merchant the mock knows when none is configured. */
export const DEFAULT_MERCHANT: Readonly<Required<Pick<MockMerchant, 'merchantId' | 'apiKey'>>> = Object.freeze({
  merchantId: 'MERCHANT_TEST',
  apiKey: 'sk_test_mock_api_key_0001',
});

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** Options of the transport-free service: the mock's options plus what only the sandbox sets. */
export interface MockServiceOptions extends MockGatewayOptions {
  /** Origin of the hosted pages in `payment_url` / `gateway.redirect_url`. */
  pageOrigin?: string;
  /** `gateway.qr_data_string` for a new QR payment; null by default (the spec's shown response). */
  qrDataString?: (payment: MockPaymentRecord) => string | null;
  /** Told when a callback delivery starts and after each of its attempts. */
  onDelivery?: (delivery: CallbackDelivery, record: MockRecord) => void;
}

/** The mock without msw: everything of {@link MockGateway} but the msw binding, plus what the sandbox needs. */
export interface MockService extends Omit<MockGateway, 'handlers' | 'listen' | 'close'> {
  /** Answers one request to the API, whatever carried it. */
  readonly dispatch: (request: Request) => Promise<Response>;
  /** Delivers a new callback (new webhook_id) for a record's current terminal status, changing nothing. */
  resend(idOrReference: string, options?: CallbackOptions): Promise<CallbackDelivery>;
  /** Payments, withdrawals and tokens as plain data. */
  snapshot(): StateSnapshot;
  /** Replaces payments, withdrawals and tokens with a snapshot's. */
  restore(snapshot: StateSnapshot): void;
}

function windowOption(value: number | undefined): number {
  if (value === undefined) return RATE_WINDOW_MS;
  if (!isMilliseconds(value, 100, 3_600_000)) {
    throw new TypeError('rateLimitWindowMs must be a whole number of milliseconds from 100 to 3600000');
  }
  return value;
}

function resolveOptions(options: MockServiceOptions): ResolvedOptions {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  return {
    baseUrl,
    basePath,
    production: (options.environment ?? 'production') === 'production',
    tokenTtlSeconds: options.tokenTtlSeconds ?? DEFAULT_TOKEN_LIFETIME_MS / 1000,
    paymentTtlSeconds: options.paymentTtlSeconds ?? 900,
    now: options.now ?? Date.now,
    rateLimits: options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits },
    rateLimitShape: options.rateLimitShape ?? 'envelope',
    rateLimitWindowMs: windowOption(options.rateLimitWindowMs),
    rateCountDelay: countDelayOf(options.rateLimitCountDelay),
    generateId: options.generateId ?? defaultGenerateId,
    pageOrigin: (options.pageOrigin ?? DEFAULT_PAGE_ORIGIN).replace(/\/+$/, ''),
    qrDataString: options.qrDataString ?? (() => null),
  };
}

/** Creates the transport-free service behind `createMockGateway` and the sandbox. */
export function createMockService(options: MockServiceOptions = {}): MockService {
  const resolved = resolveOptions(options);
  const merchants = options.merchants && options.merchants.length > 0 ? options.merchants : [DEFAULT_MERCHANT];
  const first = merchants[0] as MockMerchant; // non-empty: checked on the line above
  const state = new MockState(merchants);
  const faults = new FaultQueue();
  const requests: RecordedRequest[] = [];
  const dispatch = createDispatcher({ options: resolved, state, faults, requests });
  const callbackFetch = options.callbackFetch ?? defaultCallbackFetch();

  function find(kind: MockRecord['kind'], idOrReference: string): MockRecord {
    const record = state.find(idOrReference);
    if (!record || record.kind !== kind) {
      const noun = kind === 'DEPOSIT' ? 'payment' : 'withdrawal';
      throw new Error(`mock gateway: no ${noun} with id or reference_id ${idOrReference}`);
    }
    return record;
  }

  function deliver(record: MockRecord, callbackOptions: CallbackOptions): Promise<CallbackDelivery> {
    const merchant = state.merchants.get(record.merchantId);
    const url =
      callbackOptions.callbackUrl ??
      (record.kind === 'DEPOSIT' ? record.callback_url : null) ??
      merchant?.defaultCallbackUrl ??
      null;
    const onDelivery = options.onDelivery;
    return deliverCallback({
      record,
      apiKey: merchant?.apiKey ?? '',
      url,
      now: resolved.now,
      fetch: callbackFetch,
      options: callbackOptions,
      ...(onDelivery ? { observe: (delivery: CallbackDelivery) => onDelivery(delivery, record) } : {}),
    });
  }

  function complete(
    kind: MockRecord['kind'],
    idOrReference: string,
    status: MockTerminalStatus,
    callbackOptions: CallbackOptions = {},
  ): Promise<CallbackDelivery> {
    if (!TERMINAL.has(status)) {
      return Promise.reject(new RangeError(`status must be one of ${[...TERMINAL].join(', ')}, got ${String(status)}`));
    }
    let record: MockRecord;
    try {
      checkCallbackOptions(callbackOptions);
      record = find(kind, idOrReference);
    } catch (error) {
      return Promise.reject(error);
    }
    const previous = record.completed_at;
    record.status = status;
    record.completed_at =
      status === 'SUCCESS' ? new Date(resolved.now()).toISOString() : status === 'REFUNDED' ? previous : null;
    if ((status === 'SUCCESS' || status === 'FAILED' || status === 'REFUNDED') && record.gateway_reference === null) {
      record.gateway_reference = `GW${randomHex(8)}`;
    }
    return deliver(record, callbackOptions);
  }

  const service: MockService = {
    baseUrl: resolved.baseUrl,
    merchant: { merchantId: first.merchantId, apiKey: first.apiKey },
    dispatch,
    reset() {
      state.clear();
      faults.clear();
      requests.length = 0;
    },
    requests,
    count(endpoint) {
      return endpoint === undefined ? requests.length : requests.filter((r) => r.endpoint === endpoint).length;
    },
    fault(fault) {
      faults.add(fault);
    },
    expireTokens() {
      state.expireAllTokens();
    },
    setGatewayAvailable(method, available) {
      if (available) state.unavailable.delete(method);
      else state.unavailable.add(method);
    },
    setMerchantStatus(merchantId, status) {
      const merchant = state.merchants.get(merchantId);
      if (!merchant) throw new Error(`mock gateway: unknown merchant ${merchantId}`);
      merchant.status = status;
    },
    get payments() {
      const now = resolved.now();
      return [...state.records.values()].filter(
        (r): r is MockPaymentRecord => r.kind === 'DEPOSIT' && state.applyExpiry(r, now) === r,
      );
    },
    get withdrawals() {
      return [...state.records.values()].filter((r): r is MockWithdrawalRecord => r.kind === 'WITHDRAWAL');
    },
    getPayment(idOrReference) {
      const record = state.applyExpiry(state.find(idOrReference), resolved.now());
      return record?.kind === 'DEPOSIT' ? record : undefined;
    },
    getWithdrawal(idOrReference) {
      const record = state.find(idOrReference);
      return record?.kind === 'WITHDRAWAL' ? record : undefined;
    },
    completePayment(idOrReference, status, callbackOptions) {
      return complete('DEPOSIT', idOrReference, status, callbackOptions);
    },
    completeWithdrawal(idOrReference, status, callbackOptions) {
      return complete('WITHDRAWAL', idOrReference, status, callbackOptions);
    },
    async resend(idOrReference, callbackOptions = {}) {
      checkCallbackOptions(callbackOptions);
      const record = state.applyExpiry(state.find(idOrReference), resolved.now());
      if (!record) throw new Error(`mock gateway: no payment or withdrawal with id or reference_id ${idOrReference}`);
      if (!TERMINAL.has(record.status))
        throw new Error(
          `mock gateway: ${record.payment_id} is ${record.status}; only terminal statuses have callbacks`,
        );
      return deliver(record, callbackOptions);
    },
    snapshot: () => state.snapshot(),
    restore: (snapshot) => state.restore(snapshot),
    serve(serveOptions) {
      return serveOverHttp(dispatch, resolved.basePath, serveOptions);
    },
  };
  return service;
}
