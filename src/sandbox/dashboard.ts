/**
 * The dashboard at `/`: payments, withdrawals (account numbers masked) and every callback
 * delivery with its attempts, with buttons for the operator's actions and live updates
 * over server-sent events (`/events`; the script re-reads `/live` on each event).
 *
 * @module
 */
import type { MockPaymentRecord, MockWithdrawalRecord } from '../testing/types/records.js';
import { maskAccountNumber } from '../schemas/withdrawals.js';
import { TERMINAL_STATUSES } from '../schemas/statuses.js';
import type { DeliveryEntry } from './delivery-log.js';
import { formatAmount, html, malaysiaTime, type SafeHtml } from './html.js';
import { DASHBOARD_SCRIPT, DASHBOARD_STYLE } from './pages/dashboard-assets.js';
import { layout } from './pages/layout.js';

/** What the dashboard shows. */
export interface DashboardView {
  baseUrl: string;
  merchantId: string;
  defaultCallbackUrl: string | undefined;
  payments: readonly MockPaymentRecord[];
  withdrawals: readonly MockWithdrawalRecord[];
  deliveries: readonly DeliveryEntry[];
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

const status = (value: string) => html`<span class="status s-${value}">${value}</span>`;

/**
 * One table cell. `label` names the column: the header on a wide window, and the line's label
 * on a phone, where each row is drawn as a small card. `optional` cells are left out there.
 */
function cell(label: string, content: unknown, kind: '' | 'optional' | 'row-actions' | 'money' = ''): SafeHtml {
  return html`<td data-label="${label}" class="${kind}"><div>${content}</div></td>`;
}

/** An id with the merchant's reference (and what else identifies it) under it. */
const identity = (id: string, below: string) =>
  html`<span class="mono id">${id}</span><div class="muted small">${below}</div>`;

function action(path: string, id: string, label: string, extra: SafeHtml = html``): SafeHtml {
  return html`<form class="inline" method="post" action="${path}"><input type="hidden" name="id" value="${id}">${extra}<button type="submit" class="small" data-action="${path}" data-id="${id}">${label}</button></form>`;
}

function paymentRow(p: MockPaymentRecord): SafeHtml {
  const page = p.payment_method === 'QR_PAYMENT' ? p.payment_url : p.gateway_redirect_url;
  const actions = [
    p.status === 'PROCESSING' ? html`<a href="${page}">open page</a>` : '',
    p.status === 'SUCCESS' ? action('/actions/refund', p.payment_id, 'Refund') : '',
    TERMINAL.has(p.status) ? action('/actions/resend', p.payment_id, 'Resend callback') : '',
  ];
  return html`<tr data-payment="${p.payment_id}">${[
    cell('Payment', identity(p.payment_id, p.reference_id)),
    cell('Method', p.payment_method, 'optional'),
    cell('Amount', formatAmount(p.amount), 'money'),
    cell('Status', status(p.status)),
    cell('Customer', p.customer_name, 'optional'),
    cell('Created', malaysiaTime(p.created_at)),
    cell('', actions, 'row-actions'),
  ]}</tr>`;
}

function withdrawalRow(w: MockWithdrawalRecord): SafeHtml {
  const outcome = (value: string) => html`<input type="hidden" name="status" value="${value}">`;
  const actions =
    w.status === 'PROCESSING'
      ? [
          action('/actions/withdrawal', w.payment_id, 'Complete', outcome('SUCCESS')),
          action('/actions/withdrawal', w.payment_id, 'Fail', outcome('FAILED')),
        ]
      : TERMINAL.has(w.status)
        ? action('/actions/resend', w.payment_id, 'Resend callback')
        : '';
  return html`<tr data-withdrawal="${w.payment_id}">${[
    cell('Withdrawal', identity(w.payment_id, w.reference_id)),
    cell('Amount', formatAmount(w.amount), 'money'),
    cell('Bank', html`<span class="mono">${w.bank_code}</span>`, 'optional'),
    cell('Account', html`<span class="mono">${maskAccountNumber(w.account_number)}</span>`),
    cell('Name', w.account_name, 'optional'),
    cell('Status', status(w.status)),
    cell('Created', malaysiaTime(w.created_at)),
    cell('', actions, 'row-actions'),
  ]}</tr>`;
}

/** Longest part of the merchant's answer body shown in the row; all of it is on hover. */
const REPLY_SHOWN = 160;

/** Each attempt: when, the merchant's HTTP status (or the network error), how long, what it answered. */
function attempts(entry: DeliveryEntry): SafeHtml[] {
  if (entry.url === null) return [html`<span class="muted">no callback URL</span>`];
  return entry.attempts.map((a, i) => {
    const answer = a.status !== undefined ? `HTTP ${a.status}` : (a.error ?? 'no answer');
    const timing = a.durationMs !== undefined ? ` in ${a.durationMs} ms` : '';
    const body = a.responseBody ?? '';
    const reply = body
      ? html`<div class="reply mono" title="${body}">${body.length > REPLY_SHOWN ? `${body.slice(0, REPLY_SHOWN)}…` : body}</div>`
      : '';
    return html`<div class="attempt">#${i + 1}${a.duplicate ? ' (duplicate)' : ''} ${malaysiaTime(a.at, true)} <strong>${answer}</strong>${timing}${reply}</div>`;
  });
}

/** Columns of the deliveries table; the body row spans them all. */
const DELIVERY_HEADERS = ['Started (MYT)', 'Payment', 'Status', "Merchant's answer", ''];

function deliveryRows(d: DeliveryEntry): SafeHtml {
  return html`<tr data-webhook="${d.webhook_id}" data-payment-id="${d.payment_id}" data-state="${d.state}">${[
    cell('Started', malaysiaTime(d.started_at)),
    cell('Payment', identity(d.payment_id, `${d.reference_id} · ${d.transaction_type}`)),
    cell('Status', html`${status(d.status)} ${status(d.state)}`),
    cell("Merchant's answer", attempts(d)),
    cell(
      '',
      html`<button type="button" class="small body-toggle" aria-expanded="false" data-body="${d.webhook_id}">body</button>`,
      'row-actions',
    ),
  ]}</tr>
<tr class="delivery-body" data-body-of="${d.webhook_id}" hidden><td colspan="${DELIVERY_HEADERS.length}">
<div class="small muted">Sent to <span class="mono">${d.url ?? 'nowhere (no callback URL)'}</span> · webhook_id <span class="mono">${d.webhook_id}</span></div>
<pre class="mono small">${JSON.stringify(d.body, null, 2)}</pre></td></tr>`;
}

function table(
  headers: string[],
  rows: SafeHtml[],
  empty: string,
  optional: ReadonlySet<number> = new Set(),
): SafeHtml {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table class="rows"><thead><tr>${headers.map((h, i) => html`<th class="${optional.has(i) ? 'optional' : ''}">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** The part of the dashboard that live updates replace. */
export function dashboardLive(view: DashboardView): SafeHtml {
  const payments = [...view.payments].reverse();
  const withdrawals = [...view.withdrawals].reverse();
  return html`<section class="card" id="payments"><h2>Payments (${payments.length})</h2>
${table(['Payment', 'Method', 'Amount', 'Status', 'Customer', 'Created (MYT)', ''], payments.map(paymentRow), 'No payment yet: create one with the client.', new Set([1, 4]))}</section>
<section class="card" id="withdrawals"><h2>Withdrawals (${withdrawals.length})</h2>
${table(['Withdrawal', 'Amount', 'Bank', 'Account', 'Name', 'Status', 'Created (MYT)', ''], withdrawals.map(withdrawalRow), 'No withdrawal yet.', new Set([2, 4]))}</section>
<section class="card" id="deliveries"><h2>Callback deliveries (${view.deliveries.length})</h2>
${table(DELIVERY_HEADERS, view.deliveries.map(deliveryRows), 'No callback sent yet.')}</section>`;
}

/** The whole dashboard page. */
export function dashboardPage(view: DashboardView): SafeHtml {
  return layout(
    'MYR Gateway sandbox',
    html`<div class="card"><h1>MYR Gateway sandbox</h1><dl>
<dt>Base URL</dt><dd class="mono">${view.baseUrl}</dd><dt>Merchant id</dt><dd class="mono">${view.merchantId}</dd>
<dt>Default callback URL</dt><dd class="mono">${view.defaultCallbackUrl ?? 'none (set --callback-url or send callback_url)'}</dd></dl>
<p class="muted small">The API key and signing key are printed in the terminal that started the sandbox. Updates arrive live. Times are Malaysia time (MYT, UTC+8); hover one for its ISO 8601 value.</p></div>
<div id="live">${dashboardLive(view)}</div>${DASHBOARD_SCRIPT}`,
    DASHBOARD_STYLE,
  );
}
