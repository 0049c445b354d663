/**
 * The sandbox's `qr_data_string`: an EMVCo merchant-presented dynamic QR payload (the
 * format of Malaysia's national QR scheme), drawn as SVG by the `qrcode` package.
 * Assumption A21 in docs/assumptions.md.
 *
 * @module
 */
import QRCode from 'qrcode';
import type { MockPaymentRecord } from '../testing/types/records.js';

/** Globally unique identifier of the sandbox's merchant-account template (tag 26, sub-tag 00). */
const SANDBOX_GUID = 'com.myr-gateway.sandbox';

/** One EMVCo TLV field: two-digit tag, two-digit length, value (at most 99 characters). */
function tlv(tag: string, value: string): string {
  return `${tag}${String(value.length).padStart(2, '0')}${value}`;
}

/** EMVCo allows a subset of ASCII in names; anything else becomes a space, cut to `max`. */
function ascii(value: string, max: number): string {
  return (
    value
      .replace(/[^A-Za-z0-9 .,_-]/g, ' ')
      .trim()
      .slice(0, max) || 'NA'
  );
}

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), as EMVCo tag 63 requires, in 4 upper-case hex digits. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/**
 * The QR payload of a payment: format 01, dynamic (12), the sandbox merchant account with
 * the merchant id and payment id, MCC, currency 458 (MYR), amount, country MY, merchant
 * name and city, the reference as bill number, then the CRC.
 *
 * @example qrPayload(payment) // '00020101021226…5303458540…6304ABCD'
 */
export function qrPayload(
  payment: Pick<MockPaymentRecord, 'merchantId' | 'payment_id' | 'reference_id' | 'amount'>,
): string {
  const account =
    tlv('00', SANDBOX_GUID) + tlv('01', ascii(payment.merchantId, 40)) + tlv('02', payment.payment_id.slice(0, 40));
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', account) +
    tlv('52', '5999') +
    tlv('53', '458') +
    tlv('54', payment.amount.toFixed(2)) +
    tlv('58', 'MY') +
    tlv('59', ascii(payment.merchantId, 25)) +
    tlv('60', 'KUALA LUMPUR') +
    tlv('62', tlv('01', payment.reference_id.slice(0, 25))) +
    '6304';
  return body + crc16(body);
}

/** The QR code of `payload` as an SVG element (scannable: medium error correction, quiet zone). */
export function qrSvg(payload: string): Promise<string> {
  return QRCode.toString(payload, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, width: 264 });
}
