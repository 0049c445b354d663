import { describe, expect, it } from 'vitest';
import { crc16, qrPayload } from '../../../src/sandbox/qr.js';

/** Splits an EMVCo payload into its top-level tag/value pairs. */
function fields(payload: string): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < payload.length;) {
    const tag = payload.slice(i, i + 2);
    const length = Number(payload.slice(i + 2, i + 4));
    out.set(tag, payload.slice(i + 4, i + 4 + length));
    i += 4 + length;
  }
  return out;
}

describe('sandbox QR payload (A21)', () => {
  it('CRC-16/CCITT-FALSE matches the standard check value', () => {
    expect(crc16('123456789')).toBe('29B1');
  });

  it('is a well-formed EMVCo dynamic QR with the amount, MYR, the reference and a valid CRC', () => {
    const payload = qrPayload({
      merchantId: 'SHOP|<1>',
      payment_id: 'PAY_ABC',
      reference_id: 'R'.repeat(100),
      amount: 1234.5,
    });
    const tags = fields(payload);
    expect([...tags.keys()]).toEqual(['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '63']);
    expect(tags.get('01')).toBe('12');
    expect(tags.get('53')).toBe('458');
    expect(tags.get('54')).toBe('1234.50');
    expect(tags.get('59')).toBe('SHOP  1'); // outside EMVCo's character set becomes a space
    expect(fields(tags.get('62') as string).get('01')).toBe('R'.repeat(25));
    expect(fields(tags.get('26') as string).get('02')).toBe('PAY_ABC');
    expect(payload.slice(-4)).toBe(crc16(payload.slice(0, -4)));
  });
});
