/**
 * The dashboard's own stylesheet and script. The tables fit the window at any width: on a
 * wide one the long values (the merchant's answer, a callback's body) wrap inside their
 * cell or open in a row as wide as the table; on a phone each row becomes a small card of
 * label and value lines, without the columns marked optional.
 *
 * @module
 */
import { raw } from '../html.js';

/** Width under which each table row is drawn as a card. */
const PHONE = '720px';

export const DASHBOARD_STYLE = raw(`<style>
main{max-width:1360px}
.card{overflow-x:visible}
table.rows td>div{min-width:0}
.id{white-space:nowrap}
td.money{white-space:nowrap;font-variant-numeric:tabular-nums}
td.row-actions>div{display:flex;gap:6px;flex-wrap:wrap;justify-content:flex-end}
.attempt{white-space:normal;font-size:12.5px;margin-bottom:4px}
.attempt time{color:#5a6477}
.reply{color:#6b7486;overflow-wrap:anywhere;font-size:12px}
tr.delivery-body>td{background:#fafbfd}
tr.delivery-body pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:8px 0 0}
tr[hidden]{display:none!important}
time{white-space:nowrap}
@media (max-width:${PHONE}){
  main{padding:10px}
  .card{padding:14px}
  table.rows,table.rows tbody{display:block}
  table.rows thead{display:none}
  table.rows tr{display:block;padding:8px 0;border-bottom:1px solid #dde2ec}
  table.rows td{display:grid;grid-template-columns:92px minmax(0,1fr);gap:8px;padding:3px 0;border:0}
  table.rows td::before{content:attr(data-label);color:#6b7486;font-size:12.5px}
  table.rows td.optional{display:none}
  table.rows td.row-actions>div{justify-content:flex-start}
  tr.delivery-body>td{display:block;padding:8px}
  tr.delivery-body>td::before{content:none}
  .id{white-space:normal;overflow-wrap:anywhere}
}
</style>`);

// Re-reads /live on every server-sent event, keeping open bodies open; a body button shows or
// hides the row under its delivery.
export const DASHBOARD_SCRIPT = raw(`<script>
(() => {
  const live = document.getElementById('live');
  const bodyRow = (id) => live.querySelector('tr.delivery-body[data-body-of="' + CSS.escape(id) + '"]');
  const show = (button, open) => {
    const row = bodyRow(button.dataset.body);
    if (!row) return;
    row.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    button.textContent = open ? 'hide' : 'body';
  };
  live.addEventListener('click', (event) => {
    const button = event.target.closest('button.body-toggle');
    if (button) show(button, button.getAttribute('aria-expanded') !== 'true');
  });
  let pending = false;
  async function refresh() {
    if (pending) return; pending = true;
    try {
      const open = [...live.querySelectorAll('button.body-toggle[aria-expanded="true"]')].map((b) => b.dataset.body);
      const res = await fetch('/live', { cache: 'no-store' });
      if (res.ok) {
        live.innerHTML = await res.text();
        for (const id of open) {
          const button = live.querySelector('button.body-toggle[data-body="' + CSS.escape(id) + '"]');
          if (button) show(button, true);
        }
        document.body.dataset.updated = String(Date.now());
      }
    } finally { pending = false; }
  }
  const events = new EventSource('/events');
  events.addEventListener('change', refresh);
  events.addEventListener('open', () => { document.body.dataset.live = 'connected'; });
})();
</script>`);
