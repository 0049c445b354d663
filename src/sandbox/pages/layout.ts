/**
 * The page shell every sandbox page shares: a small stylesheet, a banner saying this is a
 * local sandbox, and the body.
 *
 * @module
 */
import { html, raw, type SafeHtml } from '../html.js';

const STYLE = raw(`
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f4f6fa}
.banner{background:#fff4d6;color:#6b4e00;padding:6px 16px;font-size:13px;border-bottom:1px solid #f0dca0}
main{max-width:1180px;margin:0 auto;padding:20px}
.card{overflow-x:auto;background:#fff;border:1px solid #dde2ec;border-radius:10px;padding:20px;margin-bottom:18px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.narrow{max-width:460px;margin:28px auto}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:0 0 10px}
table{border-collapse:collapse;width:100%;font-size:13.5px}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #edf0f5;vertical-align:top}
th{color:#5a6477;font-weight:600;background:#fafbfd}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.amount{font-size:28px;font-weight:700;margin:6px 0}
.muted{color:#6b7486}.small{font-size:12.5px}
.status{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;background:#e9edf5}
.s-SUCCESS,.s-delivered{background:#dcf5e3;color:#11652e}.s-FAILED,.s-failed{background:#fde2e1;color:#9b1c1c}
.s-PROCESSING,.s-sending{background:#e3ecff;color:#1f4db8}.s-REFUNDED{background:#efe4ff;color:#5b2ca0}
.s-EXPIRED,.s-CANCELLED,.s-no-url{background:#eceff3;color:#525a66}
.actions{display:flex;gap:8px;flex-wrap:wrap;margin-top:16px}form.inline{display:inline}
button{font:inherit;border:1px solid #c7cfdd;background:#fff;border-radius:8px;padding:8px 14px;cursor:pointer}
button.small{padding:3px 9px;font-size:12.5px}button.primary{background:#1f6feb;border-color:#1f6feb;color:#fff}
button.danger{color:#b42318;border-color:#f1b8b3}
.qr{display:flex;justify-content:center;margin:12px 0}.qr svg{width:264px;height:264px}
dl{display:grid;grid-template-columns:auto 1fr;gap:4px 14px;margin:10px 0}dt{color:#6b7486}dd{margin:0;word-break:break-all}
.attempt{white-space:nowrap}details pre{white-space:pre-wrap;word-break:break-all;max-width:520px}
.brand{display:flex;align-items:center;gap:10px;margin-bottom:10px}.logo{width:36px;height:36px;border-radius:8px;display:grid;place-items:center;color:#fff;font-weight:700}
`);

/** A full page: title, the sandbox banner, the body. */
export function layout(title: string, body: SafeHtml, extraHead: SafeHtml = html``): SafeHtml {
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><style>${STYLE}</style>${extraHead}</head>
<body><div class="banner">MYR Gateway <strong>sandbox</strong>: local development only. No real money moves.</div>
<main>${body}</main></body></html>`;
}
