/**
 * What a payment create ends with when an attempt may have created the payment and the call
 * still failed: the existing payment, a typed "exists but its URL is lost", a genuine duplicate,
 * or "outcome unknown". Never "not created" on the strength of a lookup that found nothing.
 *
 * @module
 */
import { DuplicateReferenceError } from '../core/errors/service.js';
import { type MyrGatewayError } from '../core/errors/base.js';
import { type OutcomeUnknownError, PaymentUrlUnavailableError } from '../core/errors/outcome.js';
import { withResponse, type WithResponse } from '../core/observe/events.js';
import { outcomeUnknownError } from '../core/call/call-errors.js';
import type { RequestOptions } from '../core/call/call-spec.js';
import { type AnswerCheck, checkCustomerUrl, checkEcho } from '../core/validate.js';
import { notOurs } from './ownership.js';
import {
  customerRedirectUrl,
  type PaymentCreated,
  type PaymentMethod,
  type PaymentStatus,
} from '../schemas/payments.js';

/** The request fields the result is completed from. */
export interface SentPayment {
  amount: number;
  reference_id: string;
  currency?: string | undefined;
  payment_method: PaymentMethod;
}

/** The checked create answer (or a status record that carries a URL) as the merchant gets it. */
export function createdPayment(
  data: {
    payment_url: string;
    gateway?: { redirect_url?: string | undefined } | null | undefined;
    [k: string]: unknown;
  },
  body: SentPayment,
): PaymentCreated {
  const gateway = {
    ...data.gateway,
    behavior: (data.gateway as { behavior?: string } | null | undefined)?.behavior ?? 'REDIRECT_EXTERNAL',
    redirect_url: data.gateway?.redirect_url ?? data.payment_url,
  };
  const created = {
    ...data,
    payment_id: String(data.payment_id),
    status: (data.status as string | undefined) ?? 'PROCESSING',
    amount: (data.amount as number | undefined) ?? body.amount,
    currency: (data.currency as string | undefined) ?? body.currency ?? 'MYR',
    reference_id: body.reference_id,
    gateway,
  };
  return { ...created, customer_redirect_url: customerRedirectUrl(body.payment_method, created) };
}

const unknown = (final: MyrGatewayError, referenceId: string, why: string): OutcomeUnknownError =>
  outcomeUnknownError(
    { method: 'POST', path: 'payment/request', operation: 'payment.create', referenceId },
    final,
    why,
  );

/**
 * Looks the payment up within what is left of the call's total timeout and decides the answer.
 * Throws the error the merchant gets, or returns the payment when the record carries its URL.
 */
export async function reconcile(
  payments: { retrieve(identifier: string, options?: RequestOptions): Promise<WithResponse<PaymentStatus>> },
  final: MyrGatewayError,
  body: SentPayment,
  options: RequestOptions | undefined,
  remainingMs: number,
  check: AnswerCheck,
  /** Epoch ms when the create call started: a record created before it is not this call's. */
  callStartedAt: number,
): Promise<WithResponse<PaymentCreated>> {
  const referenceId = body.reference_id;
  if (remainingMs < 1) throw unknown(final, referenceId, 'no time was left to look it up');
  let existing: WithResponse<PaymentStatus>;
  try {
    existing = await payments.retrieve(referenceId, { ...options, totalTimeout: Math.floor(remainingMs) });
  } catch (lookupError) {
    const code = (lookupError as { code?: unknown } | null)?.code;
    throw unknown(
      final,
      referenceId,
      code === 'NOT_FOUND'
        ? 'a lookup right after found nothing, which does not prove it was not created'
        : `looking it up failed (${String(code)})`,
    );
  }
  // The message shows what rules the record out (its kind, status, amount, creation time).
  if (notOurs(existing, body.amount, callStartedAt)) {
    const error = new DuplicateReferenceError(
      `DUPLICATE_REFERENCE: reference_id ${referenceId} already belongs to ${existing.payment_id} (${existing.status}, amount ` +
        `${existing.amount}, created ${String(existing.created_at)}), not this call's; this call created no payment. Use a reference_id unique across deposits and withdrawals.`,
      {
        code: 'DUPLICATE_REFERENCE',
        status: final.status,
        correlationId: final.correlationId,
        referenceId,
        cause: final,
      },
    );
    error.existingPayment = existing;
    throw error;
  }
  if (typeof existing.payment_url === 'string') {
    checkCustomerUrl(check, 'payment_url', existing.payment_url);
    const gateway = existing.gateway as { redirect_url?: unknown } | null | undefined;
    checkCustomerUrl(check, 'gateway.redirect_url', gateway?.redirect_url);
    checkEcho(check, 'reference_id', referenceId, existing.reference_id);
    const created = createdPayment(
      { ...existing, payment_url: existing.payment_url, gateway: gateway as { redirect_url?: string } | undefined },
      body,
    );
    // The lookup's answer is the one the result came from.
    return withResponse(created, existing.lastResponse);
  }
  const expires = typeof existing.expires_at === 'string' ? ` It expires at ${existing.expires_at}.` : '';
  throw new PaymentUrlUnavailableError(
    `PAYMENT_URL_UNAVAILABLE: payment ${existing.payment_id} for reference_id ${referenceId} was created (its answer was lost: ` +
      `${final.code}) but its status has no payment_url; create a new payment under a new reference_id (this one expires unpaid).${expires}`,
    { referenceId, existingPayment: existing, status: final.status, correlationId: final.correlationId, cause: final },
  );
}
