/**
 * The two endpoints that store money movements, `POST /payments` and `POST /withdrawals`
 * (validation, duplicate reference, availability, the new record and its answer), and the
 * status record view `GET /payments/{id}` answers with. The dispatcher in `dispatcher.ts` has
 * already routed, authenticated and rate-limited the request.
 *
 * @module
 */
import type { DispatchContext } from './dispatch-context.js';
import { errorBody, json } from './responses.js';
import { randomHex, type MerchantState, type MockRecord } from './state.js';
import type { MockPaymentRecord, MockRecordCommon, MockWithdrawalRecord } from './types/records.js';
import { maskAccountNumber } from '../schemas/withdrawals.js';
import { validateDeposit, validateWithdrawal, type Rejection } from './validation.js';

/** Page host for payment and gateway URLs. */
export const DEFAULT_PAGE_ORIGIN = 'https://pay.myr-gateway.test';

/** Path segment of each method's gateway page (`/bank/PAY_…`), after the `/pay/PAY_…` payment page. */
export const GATEWAY_PAGES: Record<MockPaymentRecord['payment_method'], string> = {
  QR_PAYMENT: 'qr',
  BANK_TRANSFER: 'bank',
  MOBILE_WALLET: 'wallet',
};

/** The status record of a payment or withdrawal (same shape for both, A6). */
export function statusView(record: MockRecord) {
  return {
    payment_id: record.payment_id,
    reference_id: record.reference_id,
    amount: record.amount,
    currency: record.currency,
    status: record.status,
    gateway_reference: record.gateway_reference,
    created_at: record.created_at,
    completed_at: record.completed_at,
    expires_at: record.kind === 'DEPOSIT' ? record.expires_at : null,
  };
}

/** The payment and withdrawal creation endpoints, bound to the mock's options and state. */
export interface MoneyEndpoints {
  /** `POST /payments` for an authenticated, active merchant. */
  createPayment: (merchant: MerchantState, body: unknown, h: Record<string, string>, now: number) => Response;
  /** `POST /withdrawals` for an authenticated, active merchant. */
  createWithdrawal: (merchant: MerchantState, body: unknown, h: Record<string, string>, now: number) => Response;
}

/** Binds the creation endpoints to a dispatch context. */
export function createMoneyEndpoints(ctx: Pick<DispatchContext, 'options' | 'state'>): MoneyEndpoints {
  const { options, state } = ctx;
  return { createPayment, createWithdrawal };

  function duplicateOrUnavailable(
    merchant: MerchantState,
    reference: string,
    channel: MockPaymentRecord['payment_method'] | 'WITHDRAWAL',
  ): Rejection | undefined {
    if (state.findByReference(merchant.merchantId, reference)) {
      return { status: 409, code: 'DUPLICATE_REFERENCE', message: `reference_id ${reference} was already used` };
    }
    if (state.unavailable.has(channel)) {
      return { status: 503, code: 'NO_GATEWAY_AVAILABLE', message: `No active gateway for ${channel}` };
    }
    return undefined;
  }

  function createPayment(merchant: MerchantState, body: unknown, h: Record<string, string>, now: number): Response {
    const checked = validateDeposit(body, options.production);
    if (!checked.ok) return json(checked.error.status, errorBody(checked.error.code, checked.error.message), h);
    const req = checked.value;
    const refused = duplicateOrUnavailable(merchant, req.reference_id, req.payment_method);
    if (refused) return json(refused.status, errorBody(refused.code, refused.message), h);

    const id = options.generateId('PAY_');
    const expiresAt = new Date(now + options.paymentTtlSeconds * 1000).toISOString();
    const record: MockPaymentRecord = {
      ...newRecord(id, merchant, req, now),
      kind: 'DEPOSIT',
      payment_method: req.payment_method,
      customer_name: req.customer_name,
      customer_phone: req.customer_phone,
      callback_url: req.callback_url,
      redirect_url: req.redirect_url,
      metadata: req.metadata,
      payment_url: `${options.pageOrigin}/pay/${encodeURIComponent(id)}`,
      gateway_redirect_url: `${options.pageOrigin}/${GATEWAY_PAGES[req.payment_method]}/${encodeURIComponent(id)}`,
      qr_data_string: null,
      expires_at: expiresAt,
    };
    if (record.payment_method === 'QR_PAYMENT') record.qr_data_string = options.qrDataString(record);
    return stored(
      record,
      {
        payment_id: id,
        payment_url: record.payment_url,
        status: record.status,
        amount: record.amount,
        currency: record.currency,
        reference_id: record.reference_id,
        expires_in: options.paymentTtlSeconds,
        expires_at: expiresAt,
        gateway: {
          behavior: 'REDIRECT_EXTERNAL',
          redirect_url: record.gateway_redirect_url,
          qr_data_string: record.qr_data_string,
        },
      },
      h,
    );
  }

  /** Keeps a new payment or withdrawal and answers the success envelope around `data`. */
  function stored(record: MockRecord, data: Record<string, unknown>, h: Record<string, string>): Response {
    state.records.set(record.payment_id, record);
    return json(200, { status: 'success', data }, h);
  }

  function createWithdrawal(merchant: MerchantState, body: unknown, h: Record<string, string>, now: number): Response {
    const checked = validateWithdrawal(body);
    if (!checked.ok) return json(checked.error.status, errorBody(checked.error.code, checked.error.message), h);
    const req = checked.value;
    const refused = duplicateOrUnavailable(merchant, req.reference_id, 'WITHDRAWAL');
    if (refused) return json(refused.status, errorBody(refused.code, refused.message), h);

    const id = options.generateId('WD_');
    const record: MockWithdrawalRecord = {
      ...newRecord(id, merchant, req, now),
      kind: 'WITHDRAWAL',
      method: 'BANK',
      bank_code: req.bank_code,
      account_number: req.account_number,
      account_name: req.account_name,
    };
    return stored(
      record,
      {
        payment_id: id,
        reference_id: record.reference_id,
        amount: record.amount,
        currency: record.currency,
        status: record.status,
        method: record.method,
        bank_code: record.bank_code,
        account_number: maskAccountNumber(record.account_number),
        account_name: record.account_name,
        created_at: record.created_at,
      },
      h,
    );
  }
}

/** What every new payment or withdrawal starts with: PROCESSING, in MYR, not completed. */
function newRecord(
  id: string,
  merchant: MerchantState,
  req: { reference_id: string; amount: number },
  now: number,
): MockRecordCommon {
  return {
    payment_id: id,
    merchantId: merchant.merchantId,
    reference_id: req.reference_id,
    amount: req.amount,
    currency: 'MYR',
    status: 'PROCESSING',
    gateway_reference: null,
    created_at: new Date(now).toISOString(),
    completed_at: null,
  };
}

/** The default id generator: prefix and 24 random upper-case hex characters. */
export function defaultGenerateId(prefix: 'PAY_' | 'WD_'): string {
  return `${prefix}${randomHex(12)}`;
}
