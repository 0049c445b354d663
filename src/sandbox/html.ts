/**
 * HTML built with a tagged template that escapes every interpolated value, so a hostile
 * reference_id or customer name can never become markup. Only {@link SafeHtml} (made by
 * `html` itself or {@link raw}) passes through unescaped.
 *
 * @module
 */

/** Markup that is already safe to insert. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] as string); // the pattern matches only keys of ESCAPES
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

/**
 * Builds markup; each `${value}` is escaped unless it is SafeHtml (arrays are joined, null,
 * undefined and false render as nothing).
 *
 * @example html`<td>${payment.reference_id}</td>`
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  // A template has one more string than values: [0] and [i + 1] exist.
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] as string); // see above
  return new SafeHtml(out);
}

/** Trusted markup (an SVG the qrcode package drew, a fixed stylesheet). Never for input. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Ringgit as Malaysians write it, two decimals and thousands separators: `RM 1,234.50`. */
export function formatAmount(amount: number): string {
  return `RM ${amount.toLocaleString('en-MY', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

// The developer reads the dashboard in Malaysia's clock, whatever the machine's zone is.
const MALAYSIA_ZONE = 'Asia/Kuala_Lumpur';
const DAY_AND_TIME = new Intl.DateTimeFormat('en-GB', {
  timeZone: MALAYSIA_ZONE,
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});
const TIME_WITH_MILLIS = new Intl.DateTimeFormat('en-GB', {
  timeZone: MALAYSIA_ZONE,
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
  hourCycle: 'h23',
});

/**
 * A moment in Malaysia time (`24 Nov, 11:03:03`, or `11:03:03.941` with `precise`), with its
 * ISO 8601 value in `datetime` and on hover. Text that is not a time is shown as it is.
 */
export function malaysiaTime(moment: string | number, precise = false): SafeHtml {
  const date = new Date(moment);
  if (Number.isNaN(date.getTime())) return html`<span>${moment}</span>`;
  const iso = typeof moment === 'string' ? moment : date.toISOString();
  return html`<time datetime="${iso}" title="${iso}">${(precise ? TIME_WITH_MILLIS : DAY_AND_TIME).format(date)}</time>`;
}
