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
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
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
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] as string);
  return new SafeHtml(out);
}

/** Trusted markup (an SVG the qrcode package drew, a fixed stylesheet). Never for input. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Ringgit with two decimals and thousands separators: `MYR 1,234.50`. */
export function formatAmount(amount: number): string {
  return `MYR ${amount.toLocaleString('en-MY', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}
