/**
 * The mock's callback sender: signs the spec's body and delivers it with the spec's
 * retry schedule (immediate, about 1 s, about 5 s), the same webhook_id on every attempt.
 *
 * @module
 */
import { callbackHeaders, signCallback } from '../webhooks/sign.js';
import type { CallbackAttempt, CallbackDelivery, CallbackOptions, MockCallbackBody } from './types/callbacks.js';
import type { MockRecord } from './state.js';
import { maskAccountNumber } from '../schemas/withdrawals.js';
import { DELIVERY_ATTEMPT_TIMEOUT_MS, GATEWAY_RETRY_DELAYS_MS } from '../webhooks/delivery-policy.js';
import { wait as sleep } from '../core/wait.js';
import { isMilliseconds, MAX_TIMER_MS } from '../core/milliseconds.js';

/**
 * The fetch to deliver callbacks with when none is configured: the global one as it is when the
 * mock is created, which is before its own msw server patches it, so a callback to the merchant's
 * local server is a real request (never read at module load: a runtime may install fetch later).
 */
export function defaultCallbackFetch(): typeof fetch {
  const current = globalThis.fetch;
  return (input, init) => current(input, init);
}

/** The spec's retry schedule after the first, immediate attempt (the one the webhook handler plans for). */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = GATEWAY_RETRY_DELAYS_MS;

/** Everything needed to send one callback. */
export interface CallbackJob {
  record: MockRecord;
  apiKey: string;
  url: string | null;
  now: () => number;
  fetch: typeof fetch;
  options: CallbackOptions;
  /** Told when the delivery starts and after every attempt (the sandbox's live dashboard). */
  observe?: (delivery: CallbackDelivery) => void;
}

/** How much of the merchant's answer body an attempt keeps. */
const RESPONSE_BODY_LIMIT = 500;

/** Builds the signed callback body of a transaction at its current status. */
export async function buildCallback(
  record: MockRecord,
  apiKey: string,
  timestamp: string,
): Promise<{ body: MockCallbackBody; headers: Record<string, string> }> {
  const signed = await signCallback(apiKey, {
    payment_id: record.payment_id,
    reference_id: record.reference_id,
    amount: record.amount,
    currency: record.currency,
    status: record.status,
    transaction_type: record.kind,
    gateway_reference: record.gateway_reference,
    ...(record.kind === 'WITHDRAWAL'
      ? { bank_code: record.bank_code, account_number: maskAccountNumber(record.account_number) }
      : {}),
    completed_at: record.completed_at,
    created_at: record.created_at,
    timestamp,
  });
  return { body: signed.body, headers: signed.headers };
}

async function attempt(
  job: CallbackJob,
  url: string,
  headers: Record<string, string>,
  rawBody: string,
): Promise<CallbackAttempt> {
  const at = job.now();
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  try {
    const response = await job.fetch(url, {
      method: 'POST',
      headers,
      body: rawBody,
      signal: AbortSignal.timeout(job.options.attemptTimeoutMs ?? DELIVERY_ATTEMPT_TIMEOUT_MS),
    });
    // Read the body so the connection can be reused; its content is not checked (spec),
    // only kept (cut short) for the person reading the delivery log.
    const text = await response.text().catch(() => '');
    return { status: response.status, at, durationMs: durationMs(), responseBody: text.slice(0, RESPONSE_BODY_LIMIT) };
  } catch (error) {
    return { error: describe(error), at, durationMs: durationMs() };
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: { code?: unknown } }).cause; // undici's fetch failure: cause carries the system code; checked before use
    const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
    return `${error.name}: ${error.message}${code}`;
  }
  return String(error);
}

const ok = (a: CallbackAttempt) => a.status !== undefined && a.status >= 200 && a.status <= 299;

/**
 * The sender's time options, by the SDK's one millisecond rule (a timer given more than 2^31 − 1
 * ms fires after 1 ms): a RangeError naming the option, thrown before the record changes.
 */
export function checkCallbackOptions(options: CallbackOptions): void {
  const { retryDelaysMs, attemptTimeoutMs } = options;
  if (
    retryDelaysMs !== undefined &&
    !(Array.isArray(retryDelaysMs) && retryDelaysMs.every((delay) => isMilliseconds(delay, 0)))
  ) {
    throw new RangeError(`retryDelaysMs must be whole numbers of milliseconds from 0 to ${MAX_TIMER_MS}`);
  }
  if (attemptTimeoutMs !== undefined && !isMilliseconds(attemptTimeoutMs)) {
    throw new RangeError(`attemptTimeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);
  }
}

/** Signs and delivers one callback with retries; resolves when delivery ended. */
export async function deliverCallback(job: CallbackJob): Promise<CallbackDelivery> {
  const timestamp = new Date(job.now() + (job.options.timestampOffsetMs ?? 0)).toISOString();
  const signed = await buildCallback(job.record, job.apiKey, timestamp);
  const body: Record<string, unknown> = job.options.tamper
    ? job.options.tamper({ ...signed.body })
    : { ...signed.body };
  const baseHeaders = callbackHeaders(signed.body);
  const headers = job.options.tamperHeaders ? job.options.tamperHeaders({ ...baseHeaders }) : baseHeaders;
  const delivery: CallbackDelivery = {
    webhookId: signed.body.webhook_id,
    body,
    headers,
    url: job.url,
    attempts: [],
    delivered: false,
  };
  job.observe?.(delivery);
  if (job.url === null || job.options.deliver === false) return delivery;

  const rawBody = JSON.stringify(body);
  const delays = [0, ...(job.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS)];
  for (const delay of delays) {
    if (delay > 0) await sleep(delay);
    const result = await attempt(job, job.url, headers, rawBody);
    delivery.attempts.push(result);
    job.observe?.(delivery);
    if (ok(result)) {
      delivery.delivered = true;
      break;
    }
  }
  if (delivery.delivered && job.options.duplicate) {
    delivery.attempts.push({ ...(await attempt(job, job.url, headers, rawBody)), duplicate: true });
    job.observe?.(delivery);
  }
  return delivery;
}
