/**
 * The hosted pages a customer is sent to, one per method: the QR page (`payment_url` of a
 * QR_PAYMENT), the bank's approval page for the provider channel (BANK_TRANSFER) and the
 * e-wallet's page (MOBILE_WALLET). Each offers the outcomes: pay, decline, cancel, expire.
 *
 * @module
 */
import type { MockPaymentRecord } from '../../testing/types/records.js';
import { formatAmount, html, malaysiaTime, raw, type SafeHtml } from '../html.js';
import { layout } from './layout.js';

/** The outcomes a customer can choose on a hosted page, and the status each one sets. */
export const OUTCOMES = {
  pay: 'SUCCESS',
  decline: 'FAILED',
  cancel: 'CANCELLED',
  expire: 'EXPIRED',
} as const;

/** An outcome button's name. */
export type Outcome = keyof typeof OUTCOMES;

/** Display names of the provider channels of both bank lists (codes without a well-known name show the code). */
const BANK_NAMES: Record<string, string> = {
  ABB0233: 'Affin Bank',
  AFBQMYKL: 'Affin Bank',
  ABMB0212: 'Alliance Bank',
  MFBBMYKL: 'Alliance Bank',
  AGRO01: 'Agrobank',
  AGOBMYKL: 'Agrobank',
  AMBB0209: 'AmBank',
  ARBKMYKL: 'AmBank',
  BCBB0235: 'CIMB Clicks',
  CIBBMYKL: 'CIMB Bank',
  BIMB0340: 'Bank Islam',
  BIMBMYKL: 'Bank Islam',
  BKRM0602: 'Bank Rakyat',
  BKRMMYKL: 'Bank Rakyat',
  BMMB0341: 'Bank Muamalat',
  BMMBMYKL: 'Bank Muamalat',
  BSN0601: 'BSN',
  BSNAMYK1: 'BSN',
  HLB0224: 'Hong Leong Bank',
  PHBMMYKL: 'Hong Leong Bank',
  HSBC0223: 'HSBC Bank',
  HBMBMYKL: 'HSBC Bank',
  KFH0346: 'KFH',
  MB2U0227: 'Maybank2u',
  OCBC0229: 'OCBC Bank',
  OCBCMYKL: 'OCBC Bank',
  PBB0233: 'Public Bank',
  PBBEMYKL: 'Public Bank',
  RHB0218: 'RHB Bank',
  SCB0216: 'Standard Chartered',
  UOB0226: 'UOB Bank',
  UOVBMYKL: 'UOB Bank',
  RJHIMYKL: 'Al Rajhi Bank',
  BKCHMYKL: 'Bank of China',
};

const METHOD_LOOK: Record<MockPaymentRecord['payment_method'], { color: string; badge: string }> = {
  QR_PAYMENT: { color: '#c2185b', badge: 'QR' },
  BANK_TRANSFER: { color: '#0b5cad', badge: 'FPX' },
  MOBILE_WALLET: { color: '#0f8a5f', badge: 'eW' },
};

/** The bank name of a BANK_TRANSFER's provider channel, else its code. */
export function bankName(payment: MockPaymentRecord): string {
  const channel = payment.metadata?.provider_channel_id;
  if (typeof channel !== 'string') return 'your bank';
  // The channel may come from a --data file: an own key only, never `constructor` or the like.
  return Object.hasOwn(BANK_NAMES, channel) ? (BANK_NAMES[channel] as string) : `Bank ${channel}`;
}

function summary(payment: MockPaymentRecord, merchantId: string): SafeHtml {
  return html`<div class="amount">${formatAmount(payment.amount)}</div>
<dl><dt>Merchant</dt><dd>${merchantId}</dd><dt>Reference</dt><dd class="mono">${payment.reference_id}</dd>
<dt>Payment</dt><dd class="mono">${payment.payment_id}</dd><dt>Customer</dt><dd>${payment.customer_name}</dd>
<dt>Expires</dt><dd>${malaysiaTime(payment.expires_at)} (Malaysia time)</dd></dl>`;
}

function outcomeButtons(payment: MockPaymentRecord, payLabel: string): SafeHtml {
  const action = `/pay/${encodeURIComponent(payment.payment_id)}/outcome`;
  const button = (outcome: Outcome, label: string, cls: string) =>
    html`<form class="inline" method="post" action="${action}"><input type="hidden" name="outcome" value="${outcome}"><button type="submit" class="${cls}" data-outcome="${outcome}">${label}</button></form>`;
  return html`<div class="actions">${button('pay', payLabel, 'primary')}${button('decline', 'Decline', 'danger')}${button('cancel', 'Cancel', '')}${button('expire', 'Let it expire', '')}</div>`;
}

function finished(payment: MockPaymentRecord): SafeHtml {
  return html`<p>This payment is <span class="status s-${payment.status}" id="payment-status">${payment.status}</span>; there is nothing left to do here.</p>
${payment.redirect_url ? html`<p><a href="${payment.redirect_url}">Return to the merchant</a></p>` : ''}`;
}

/**
 * The hosted page of a payment for its method. `qrSvg` is the drawn QR code (QR_PAYMENT only).
 *
 * @example paymentPage(record, 'MERCHANT_SANDBOX', await qrSvg(record.qr_data_string))
 */
export function paymentPage(payment: MockPaymentRecord, merchantId: string, qrSvg?: string): SafeHtml {
  const look = METHOD_LOOK[payment.payment_method];
  const open = payment.status === 'PROCESSING';
  let title: string;
  let body: SafeHtml;
  if (payment.payment_method === 'QR_PAYMENT') {
    title = 'Scan to pay';
    body = html`<p class="muted">Scan this QR code with a banking or e-wallet app, or choose an outcome below.</p>
${open && qrSvg ? html`<div class="qr" id="qr">${raw(qrSvg)}</div><details><summary class="small muted">QR payload (qr_data_string)</summary><pre class="mono small" id="qr-payload">${payment.qr_data_string}</pre></details>` : ''}
${open ? outcomeButtons(payment, 'Pay (simulate a scan)') : finished(payment)}`;
  } else if (payment.payment_method === 'BANK_TRANSFER') {
    title = `${bankName(payment)}: approve payment`;
    body = html`<p class="muted">Log in to ${bankName(payment)} online banking to approve this transfer (sandbox: no login).</p>
${open ? outcomeButtons(payment, 'Approve') : finished(payment)}`;
  } else {
    title = 'E-wallet: confirm payment';
    body = html`<p class="muted">Confirm this payment in your e-wallet.</p>
${open ? outcomeButtons(payment, 'Confirm and pay') : finished(payment)}`;
  }
  return layout(
    title,
    html`<div class="card narrow"><div class="brand"><div class="logo" style="background:${look.color}">${look.badge}</div><h1>${title}</h1></div>
${summary(payment, merchantId)}${body}</div>`,
  );
}

/** What a customer sees after choosing an outcome when the payment has no `redirect_url`. */
export function outcomePage(payment: MockPaymentRecord): SafeHtml {
  return layout(
    'Payment result',
    html`<div class="card narrow"><h1>Payment <span class="status s-${payment.status}" id="payment-status">${payment.status}</span></h1>
${summary(payment, payment.merchantId)}<p class="muted">The merchant was sent a signed callback. This payment had no redirect_url, so the page stops here.</p></div>`,
  );
}

/** A plain message page (not found, refused). */
export function messagePage(title: string, message: string): SafeHtml {
  return layout(
    title,
    html`<div class="card narrow"><h1>${title}</h1><p>${message}</p><p><a href="/">Dashboard</a></p></div>`,
  );
}
