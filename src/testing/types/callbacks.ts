/**
 * Public types of the callbacks the mock delivers: delivery options, the body, and the record of each attempt.
 *
 * @module
 */
import type { CallbackBody } from '../../webhooks/sign.js';

/**
 * Options of `completePayment` / `completeWithdrawal`.
 *
 * @example
 * ```ts
 * await mock.completePayment(id, 'SUCCESS', { retryDelaysMs: [10, 20], duplicate: true });
 * await mock.completePayment(id, 'SUCCESS', { tamper: (body) => ({ ...body, amount: 1 }) });
 * await mock.completePayment(id, 'SUCCESS', { timestampOffsetMs: -10 * 60_000 }); // stale
 * ```
 */
export interface CallbackOptions {
  /**
   * Waits before attempts 2, 3, …: the spec's "about 1 s, about 5 s". Use small values in tests.
   * @default [1000, 5000]
   * @example { retryDelaysMs: [10, 20] }
   */
  retryDelaysMs?: number[];
  /**
   * After a successful delivery, deliver the same callback (same webhook_id and body) once more.
   * @default false
   * @example { duplicate: true }
   */
  duplicate?: boolean;
  /**
   * Change the body after it was signed, e.g. to test that a verifier rejects it.
   * Headers are built from the signed body, before tampering.
   * @example { tamper: (body) => ({ ...body, amount: 999999 }) }
   */
  tamper?: (body: MockCallbackBody) => Record<string, unknown>;
  /**
   * Change the callback headers before sending.
   * @example { tamperHeaders: (h) => ({ ...h, 'X-Webhook-Signature': '0'.repeat(64) }) }
   */
  tamperHeaders?: (headers: Record<string, string>) => Record<string, string>;
  /**
   * Added to the mock's clock for the body's `timestamp`, e.g. `-10 * 60_000` for a stale callback.
   * @default 0
   * @example { timestampOffsetMs: -10 * 60_000 }
   */
  timestampOffsetMs?: number;
  /**
   * Where to send the callback instead of the payment's `callback_url` / the merchant's default.
   * @example { callbackUrl: `http://127.0.0.1:${port}/webhooks/myr` }
   */
  callbackUrl?: string;
  /**
   * `false` changes the status without sending anything.
   * @default true
   * @example { deliver: false }
   */
  deliver?: boolean;
  /**
   * Time limit of one delivery attempt; a slower answer counts as a failed attempt.
   * @default 10000
   * @example { attemptTimeoutMs: 500 }
   */
  attemptTimeoutMs?: number;
}

/** Body of a callback, as the spec lists it (the webhooks side's {@link CallbackBody}). */
export type MockCallbackBody = CallbackBody;

/** One delivery attempt of a callback. */
export interface CallbackAttempt {
  /** HTTP status of the merchant's answer, when there was one. */
  status?: number;
  /** Why the attempt failed without an answer (network error, timeout). */
  error?: string;
  /** When the attempt started, on the mock's clock (ms). */
  at: number;
  /** True for the extra delivery made by `duplicate: true`. */
  duplicate?: boolean;
  /** How long the merchant took to answer (or to fail), in real milliseconds. */
  durationMs?: number;
  /** The start of the merchant's answer body (at most 500 characters), for debugging a refusal. */
  responseBody?: string;
}

/**
 * What happened to a callback.
 *
 * @example
 * ```ts
 * const delivery = await mock.completePayment(id, 'SUCCESS', { retryDelaysMs: [10, 20] });
 * expect(delivery.delivered).toBe(true);
 * expect(delivery.attempts.map((a) => a.status)).toEqual([500, 200]);
 * ```
 */
export interface CallbackDelivery {
  /** The body's `webhook_id`, the same on every attempt. */
  webhookId: string;
  /** The body as sent (after `tamper`). */
  body: Record<string, unknown>;
  /** The headers as sent. */
  headers: Record<string, string>;
  /** Where it was sent; null when there was no callback URL. */
  url: string | null;
  /** Every attempt, in order. Empty when nothing was sent. */
  attempts: CallbackAttempt[];
  /** Whether some attempt got a 2xx answer. */
  delivered: boolean;
}
