/**
 * The dashboard at `/`: payments, withdrawals (account numbers masked) and every callback
 * delivery with its attempts, with buttons for the operator's actions and live updates
 * over server-sent events (`/events`; the script re-reads `/live` on each event).
 *
 * @module
 */
import type { MockPaymentRecord, MockWithdrawalRecord } from '../testing/types/records.js';
import { maskAccountNumber } from '../testing/validation.js';
import type { DeliveryEntry } from './deliveries.js';
import { formatAmount, html, raw, type SafeHtml } from './html.js';
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

const TERMINAL = new Set(['SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED']);

const status = (value: string) => html`<span class="status s-${value}">${value}</span>`;

function action(path: string, id: string, label: string, extra: SafeHtml = html``): SafeHtml {
  return html`<form class="inline" method="post" action="${path}"><input type="hidden" name="id" value="${id}">${extra}<button type="submit" class="small" data-action="${path}" data-id="${id}">${label}</button></form>`;
}

function paymentRow(p: MockPaymentRecord): SafeHtml {
  const page = p.payment_method === 'QR_PAYMENT' ? p.payment_url : p.gateway_redirect_url;
  return html`<tr data-payment="${p.payment_id}"><td class="mono">${p.payment_id}</td><td class="mono">${p.reference_id}</td>
<td>${p.payment_method}</td><td>${formatAmount(p.amount)}</td><td>${status(p.status)}</td><td>${p.customer_name}</td>
<td class="small">${p.created_at}</td><td>${p.status === 'PROCESSING' ? html`<a href="${page}">open page</a> ` : ''}
${p.status === 'SUCCESS' ? action('/actions/refund', p.payment_id, 'Refund') : ''}
${TERMINAL.has(p.status) ? action('/actions/resend', p.payment_id, 'Resend callback') : ''}</td></tr>`;
}

function withdrawalRow(w: MockWithdrawalRecord): SafeHtml {
  const outcome = (value: string) => html`<input type="hidden" name="status" value="${value}">`;
  return html`<tr data-withdrawal="${w.payment_id}"><td class="mono">${w.payment_id}</td><td class="mono">${w.reference_id}</td>
<td>${formatAmount(w.amount)}</td><td class="mono">${w.bank_code}</td><td class="mono">${maskAccountNumber(w.account_number)}</td>
<td>${w.account_name}</td><td>${status(w.status)}</td><td class="small">${w.created_at}</td><td>
${w.status === 'PROCESSING' ? [action('/actions/withdrawal', w.payment_id, 'Complete', outcome('SUCCESS')), ' ', action('/actions/withdrawal', w.payment_id, 'Fail', outcome('FAILED'))] : ''}
${TERMINAL.has(w.status) ? action('/actions/resend', w.payment_id, 'Resend callback') : ''}</td></tr>`;
}

function attempts(entry: DeliveryEntry): SafeHtml[] {
  return entry.attempts.map((a, i) => {
    const answer = a.status !== undefined ? `HTTP ${a.status}` : (a.error ?? 'no answer');
    const timing = a.durationMs !== undefined ? ` in ${a.durationMs} ms` : '';
    const reply = a.responseBody ? html` <span class="muted small" title="${a.responseBody}">${a.responseBody.slice(0, 60)}</span>` : '';
    return html`<div class="attempt small">#${i + 1}${a.duplicate ? ' (duplicate)' : ''} ${new Date(a.at).toISOString().slice(11, 23)}: <strong>${answer}</strong>${timing}${reply}</div>`;
  });
}

function deliveryRow(d: DeliveryEntry): SafeHtml {
  return html`<tr data-webhook="${d.webhook_id}" data-payment-id="${d.payment_id}" data-state="${d.state}"><td class="small">${new Date(d.started_at).toISOString().slice(11, 19)}</td>
<td class="mono">${d.payment_id}<br><span class="muted">${d.reference_id}</span></td><td>${d.transaction_type}</td><td>${status(d.status)}</td>
<td>${status(d.state)}</td><td class="mono small">${d.url ?? 'no callback URL'}</td><td>${attempts(d)}</td>
<td><details><summary class="small">body</summary><pre class="mono small">${JSON.stringify(d.body, null, 2)}</pre><div class="mono small muted">webhook_id ${d.webhook_id}</div></details></td></tr>`;
}

function table(headers: string[], rows: SafeHtml[], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table><thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** The part of the dashboard that live updates replace. */
export function dashboardLive(view: DashboardView): SafeHtml {
  const payments = [...view.payments].reverse();
  const withdrawals = [...view.withdrawals].reverse();
  return html`<section class="card" id="payments"><h2>Payments (${payments.length})</h2>
${table(['Payment', 'Reference', 'Method', 'Amount', 'Status', 'Customer', 'Created', ''], payments.map(paymentRow), 'No payment yet: create one with the client.')}</section>
<section class="card" id="withdrawals"><h2>Withdrawals (${withdrawals.length})</h2>
${table(['Withdrawal', 'Reference', 'Amount', 'Bank', 'Account', 'Name', 'Status', 'Created', ''], withdrawals.map(withdrawalRow), 'No withdrawal yet.')}</section>
<section class="card" id="deliveries"><h2>Callback deliveries (${view.deliveries.length})</h2>
${table(['Started', 'Payment', 'Type', 'Status', 'Delivery', 'URL', 'Attempts (merchant answer, time)', ''], view.deliveries.map(deliveryRow), 'No callback sent yet.')}</section>`;
}

// Re-reads /live on every server-sent event; keeps open <details> open across updates.
const SCRIPT = raw(`<script>
(() => {
  const live = document.getElementById('live');
  let pending = false;
  async function refresh() {
    if (pending) return; pending = true;
    try {
      const open = [...live.querySelectorAll('tr[data-webhook] details[open]')].map((d) => d.closest('tr').dataset.webhook);
      const res = await fetch('/live', { cache: 'no-store' });
      if (res.ok) {
        live.innerHTML = await res.text();
        for (const id of open) live.querySelector('tr[data-webhook="' + CSS.escape(id) + '"] details')?.setAttribute('open', '');
        document.body.dataset.updated = String(Date.now());
      }
    } finally { pending = false; }
  }
  const events = new EventSource('/events');
  events.addEventListener('change', refresh);
  events.addEventListener('open', () => { document.body.dataset.live = 'connected'; });
})();
</script>`);

/** The whole dashboard page. */
export function dashboardPage(view: DashboardView): SafeHtml {
  return layout(
    'MYR Gateway sandbox',
    html`<div class="card"><h1>MYR Gateway sandbox</h1><dl>
<dt>Base URL</dt><dd class="mono">${view.baseUrl}</dd><dt>Merchant id</dt><dd class="mono">${view.merchantId}</dd>
<dt>Default callback URL</dt><dd class="mono">${view.defaultCallbackUrl ?? 'none (set --callback-url or send callback_url)'}</dd></dl>
<p class="muted small">The API key and signing key are printed in the terminal that started the sandbox. Updates arrive live.</p></div>
<div id="live">${dashboardLive(view)}</div>${SCRIPT}`,
  );
}
