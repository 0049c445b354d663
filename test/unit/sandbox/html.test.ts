/**
 * src/sandbox/html.ts: every value put into the dashboard's markup is escaped (a reference_id
 * or customer name typed by anyone becomes text, never markup), only markup the sandbox made
 * itself passes through, and amounts and times read as a Malaysian developer expects.
 */
import { describe, expect, it } from 'vitest';
import { escapeHtml, formatAmount, html, malaysiaTime, raw } from '../../../src/sandbox/html.js';

describe('html', () => {
  it('escapes every interpolated value, in text and in quoted attributes', () => {
    const name = `<img src=x onerror="alert('x')">&`;
    expect(html`<td title="${name}">${name}</td>`.toString()).toBe(
      '<td title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</td>',
    );
  });

  it('passes its own markup and raw() through, joins lists, and renders null, undefined and false as nothing', () => {
    const rows = ['<A>', 'B'].map((ref) => html`<tr>${ref}</tr>`);
    expect(html`<table>${rows}${raw('<svg/>')}${null}${undefined}${false}</table>`.toString()).toBe(
      '<table><tr>&lt;A&gt;</tr><tr>B</tr><svg/></table>',
    );
  });

  it('a plain object pretending to be safe markup is escaped', () => {
    expect(html`${{ value: '<script>' }}`.toString()).toBe('[object Object]');
    expect(escapeHtml({ toString: () => '<b>' })).toBe('&lt;b&gt;');
  });

  it('0 is rendered, not dropped', () => {
    expect(html`<td>${0}</td>`.toString()).toBe('<td>0</td>');
  });
});

describe('formatAmount and malaysiaTime', () => {
  it.each([
    [1234.5, 'RM 1,234.50'],
    [5, 'RM 5.00'],
    [50_000, 'RM 50,000.00'],
  ])('formatAmount(%d) is %s', (amount, text) => {
    expect(formatAmount(amount)).toBe(text);
  });

  it('shows a moment in Malaysia time (UTC+8) whatever the machine zone, with the ISO value kept', () => {
    const iso = '2026-11-24T03:03:03.941Z';
    expect(malaysiaTime(iso).toString()).toBe(`<time datetime="${iso}" title="${iso}">24 Nov, 11:03:03</time>`);
    expect(malaysiaTime(Date.parse(iso), true).toString()).toBe(
      `<time datetime="${iso}" title="${iso}">11:03:03.941</time>`,
    );
  });

  it('text that is not a time is shown as it is, escaped', () => {
    expect(malaysiaTime('<soon>').toString()).toBe('<span>&lt;soon&gt;</span>');
  });
});
