/**
 * The callback both webhook benches verify, and the node:crypto floor they compare against:
 * one definition, so the wall-clock bench (bench/webhooks.ts) and the instruction-count bench
 * (bench/webhooks-instructions.ts) measure the same payload against the same floor.
 *
 * @module
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import {
  deriveSigningKeyBytesWeb,
  signCallbackFields,
  type SignedCallbackFields,
} from '../src/webhooks/signing-scheme.js';

/** The api key every bench callback is signed with. */
export const BENCH_API_KEY = 'sk_live_bench_0123456789abcdef';

/** A signed callback as the service sends it, as raw text and headers. */
export interface BenchCallback {
  /** The raw JSON body. */
  readonly raw: string;
  /** The headers the service sends with it. */
  readonly headers: Readonly<Record<string, string>>;
  /** The signature (64 lowercase hex). */
  readonly signature: string;
}

/** A deposit callback signed with {@link BENCH_API_KEY}, timestamped `now`. */
export async function benchCallback(now: number): Promise<BenchCallback> {
  const timestamp = new Date(now).toISOString();
  const fields = {
    webhook_id: '6f1c2a9e-3b1d-4c8e-9a51-2f7d8e0b4c11',
    payment_id: 'PAY_8F3K2M9Q7X',
    reference_id: 'ORDER20260301000123',
    amount: 1250.5,
    currency: 'MYR',
    status: 'SUCCESS',
    transaction_type: 'DEPOSIT',
    gateway_reference: 'GW2026030112345678',
    completed_at: timestamp,
    created_at: new Date(now - 60_000).toISOString(),
    timestamp,
  };
  const signature = await signCallbackFields(BENCH_API_KEY, fields);
  const raw = JSON.stringify({ ...fields, signature });
  const headers = {
    'content-type': 'application/json',
    'x-webhook-signature': signature,
    'x-webhook-id': fields.webhook_id,
    'x-webhook-timestamp': timestamp,
    'x-payment-id': fields.payment_id,
  };
  return { raw, headers, signature };
}

/** A callback body as the floor reads it: the signed fields and the signature. */
type FloorBody = SignedCallbackFields & { signature: string };

/**
 * The floor: the least any correct Node verifier must do for `raw` (JSON.parse, the signed
 * string, HMAC with a cached KeyObject, a constant-time compare). Throws when the signature
 * does not match, so a broken floor cannot look fast.
 */
export async function benchFloor(raw: string): Promise<() => void> {
  const key = createSecretKey(await deriveSigningKeyBytesWeb(BENCH_API_KEY));
  return () => {
    const b = JSON.parse(raw) as FloorBody;
    const message = `${b.webhook_id}|${b.payment_id}|${b.reference_id}|${b.amount}|${b.currency}|${b.status}|${b.timestamp}|${b.completed_at ?? ''}`;
    const mac = createHmac('sha256', key).update(message, 'utf8').digest();
    if (!timingSafeEqual(mac, Buffer.from(b.signature, 'hex'))) throw new Error('floor: bad signature');
  };
}
