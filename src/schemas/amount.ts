/**
 * Exact MYR amounts as decimal text, without any schema library: the client's amount rule and
 * the webhooks entry's `confirmDeposit` share it, and the webhooks entry must not load zod.
 * Every comparison is on decimal digits, never on float arithmetic.
 *
 * @module
 */

/** A plain decimal: digits, an optional `.` and decimals (no sign, exponent, spaces or separators). */
export const DECIMAL_STRING = /^\d+(?:\.\d+)?$/;
/** A plain decimal with at most two decimal places. */
export const TWO_DECIMALS = /^\d+(?:\.\d{1,2})?$/;

/**
 * The decimal text of an amount: a finite number's shortest form (`String(n)`, so `0.1 + 0.2`
 * stays `0.30000000000000004`), or a string that is a plain decimal. Undefined for anything
 * else (`NaN`, `1e21`, `'1,000'`, `' 5'`), which therefore never equals any amount.
 *
 * @example
 * ```ts
 * amountText(149.9); // '149.9'
 * amountText('149.90'); // '149.90'
 * amountText('1e3'); // undefined
 * ```
 */
export function amountText(value: unknown): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return undefined;
    const text = String(value);
    return DECIMAL_STRING.test(text) ? text : undefined;
  }
  return typeof value === 'string' && DECIMAL_STRING.test(value) ? value : undefined;
}

/** `text` without leading zeros of the whole part and trailing zeros of the decimals: `'0149.90'` → `'149.9'`. */
function canonical(text: string): string {
  const [whole = '', decimals = ''] = text.split('.');
  const w = whole.replace(/^0+(?=\d)/, '');
  const d = decimals.replace(/0+$/, '');
  return d === '' ? w : `${w}.${d}`;
}

/**
 * Whether two amounts (numbers or decimal strings) are the same decimal value, exactly:
 * `149.9` equals `'149.90'`; `1.005` does not equal `1.01`; anything that is not a plain
 * decimal equals nothing.
 *
 * @example
 * ```ts
 * sameAmount('149.90', 149.9); // true
 * sameAmount(0.1 + 0.2, 0.3); // false
 * ```
 */
export function sameAmount(a: unknown, b: unknown): boolean {
  const x = amountText(a);
  const y = amountText(b);
  return x !== undefined && y !== undefined && canonical(x) === canonical(y);
}
