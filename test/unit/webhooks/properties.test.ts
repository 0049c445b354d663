/**
 * Property-based tests of the verifier (fast-check). Runs per property come from
 * FC_RUNS (CI runs with at least 10,000).
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, WebhookVerifier, type WebhookEvent } from '../../../src/webhooks/index.js';
import { parseTimestamp } from '../../../src/webhooks/timestamp-parse.js';
import { API_KEY, NOW, headersFor, sign, type CallbackBody } from '../../fixtures/webhook-vectors-helpers.js';

const NUM_RUNS = Number(process.env.FC_RUNS ?? 10_000);
const TOLERANCE_MS = 300_000;
const clock = () => NOW;
const node = new WebhookVerifier({ apiKey: API_KEY, clock, crypto: 'node' });
const web = new WebhookVerifier({ apiKey: API_KEY, clock, crypto: 'web' });

const SIGNED = [
  'webhook_id',
  'payment_id',
  'reference_id',
  'amount',
  'currency',
  'status',
  'timestamp',
  'completed_at',
] as const;
type SignedName = (typeof SIGNED)[number];

/** Text that may legitimately appear in a signed field: any well-formed Unicode without "|". */
const fieldText = fc
  .oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }))
  .filter((s) => !s.includes('|'));
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

const validBody = fc.record({
  webhook_id: fc.oneof(
    fc.uuid(),
    fieldText.filter((s) => s.length > 0),
  ),
  payment_id: fieldText.map((s) => `PAY_${s}`),
  reference_id: fieldText,
  amount: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 5, max: 50_000 })),
  currency: fc.oneof(fc.constant('MYR'), fieldText),
  status: fc.constantFrom('SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED'),
  transaction_type: fc.constant('DEPOSIT'),
  gateway_reference: fc.option(fc.string(), { nil: null }),
  completed_at: fc.option(fieldText, { nil: null }),
  created_at: fc.string(),
  timestamp: fc.integer({ min: -TOLERANCE_MS, max: TOLERANCE_MS }).map(iso),
});

/** Settles verify() and fails the property if it throws synchronously or rejects with anything but a WebhookVerificationError. */
async function outcome(
  v: WebhookVerifier,
  request: { body: unknown; headers?: unknown },
): Promise<WebhookEvent | WebhookVerificationError> {
  let promise: Promise<WebhookEvent>;
  try {
    promise = v.verify(request as never);
  } catch (error) {
    throw new Error(`verify() threw synchronously: ${String(error)}`, { cause: error });
  }
  try {
    return await promise;
  } catch (error) {
    if (!(error instanceof WebhookVerificationError))
      throw new Error(`verify() rejected with a foreign error: ${String(error)}`, { cause: error });
    return error;
  }
}

function differentValue(name: SignedName, original: unknown) {
  const sameType =
    name === 'amount'
      ? fc.double({ noNaN: true, noDefaultInfinity: true }).filter((a) => String(a) !== String(original))
      : name === 'completed_at'
        ? fc.option(fieldText, { nil: null }).filter((v) => (v ?? '') !== (original ?? ''))
        : fieldText.filter((v) => v !== original);
  // What the tampered body carries is its JSON: NaN and ±Infinity are sent as null, -0 as 0. And
  // null and "" sign identically for completed_at (the spec maps null to ""). Neither is a change.
  const onWire = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');
  const same = (v: unknown) => {
    const [sent, was] = [onWire(v), onWire(original)];
    return isDeepStrictEqual(sent, was) || (name === 'completed_at' && (sent ?? '') === (was ?? ''));
  };
  return fc.oneof(
    { weight: 4, arbitrary: sameType },
    { weight: 1, arbitrary: fc.anything().filter((v) => !same(v) && v !== undefined) },
  );
}

describe(`verifier properties (${NUM_RUNS} runs each)`, () => {
  it('accepts every correctly signed, fresh callback and returns exactly its signed fields', async () => {
    await fc.assert(
      fc.asyncProperty(validBody, fc.boolean(), async (unsigned, asString) => {
        const cb = await sign(unsigned);
        const result = await outcome(node, { body: asString ? cb.raw : cb.body, headers: cb.headers });
        expect(result).not.toBeInstanceOf(WebhookVerificationError);
        const event = result as WebhookEvent;
        expect(event.signed).toEqual({
          webhook_id: unsigned.webhook_id,
          payment_id: unsigned.payment_id,
          reference_id: unsigned.reference_id,
          amount: unsigned.amount === 0 ? 0 : unsigned.amount,
          currency: unsigned.currency,
          status: unsigned.status,
          timestamp: unsigned.timestamp,
          completed_at: unsigned.completed_at || null,
        });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('rejects any change to a signed field with a WebhookVerificationError (invalid_signature unless the new value cannot even be signed)', async () => {
    const bodyAndChange = validBody.chain((body) =>
      fc.tuple(
        fc.constant(body),
        fc.constantFrom(...SIGNED).chain((name) => fc.tuple(fc.constant(name), differentValue(name, body[name]))),
      ),
    );
    await fc.assert(
      fc.asyncProperty(bodyAndChange, fc.boolean(), async ([unsigned, [name, value]], keepHeaders) => {
        const cb = await sign(unsigned);
        const tampered: Record<string, unknown> = { ...cb.body, [name]: value };
        const headers = keepHeaders ? cb.headers : headersFor(tampered as unknown as CallbackBody);
        const result = await outcome(node, { body: JSON.stringify(tampered), headers });
        expect(result).toBeInstanceOf(WebhookVerificationError);
        const signable =
          name === 'amount'
            ? typeof value === 'number' && Number.isFinite(value)
            : name === 'completed_at'
              ? value === null || (typeof value === 'string' && !value.includes('|'))
              : typeof value === 'string' && !value.includes('|');
        if (signable) expect((result as WebhookVerificationError).reason).toBe('invalid_signature');
        else expect(['invalid_signature', 'malformed']).toContain((result as WebhookVerificationError).reason);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('rejects any other signature', async () => {
    const otherSignature = fc.oneof(
      fc.stringMatching(/^[0-9a-f]{64}$/),
      fc.string(),
      fc.stringMatching(/^[0-9A-Fa-f]{64}$/),
    );
    await fc.assert(
      fc.asyncProperty(validBody, otherSignature, async (unsigned, signature) => {
        const cb = await sign(unsigned);
        fc.pre(signature !== cb.body.signature);
        const body = { ...cb.body, signature };
        const result = await outcome(node, { body, headers: { ...cb.headers, 'x-webhook-signature': signature } });
        expect(result).toBeInstanceOf(WebhookVerificationError);
        expect((result as WebhookVerificationError).reason).toBe('invalid_signature');
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('rejects a callback signed with any other key', async () => {
    await fc.assert(
      fc.asyncProperty(validBody, fc.string({ minLength: 1, unit: 'binary' }), async (unsigned, otherKey) => {
        fc.pre(otherKey !== API_KEY);
        const cb = await sign(unsigned, otherKey);
        const result = await outcome(node, { body: cb.raw, headers: cb.headers });
        expect((result as WebhookVerificationError).reason).toBe('invalid_signature');
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('rejects a correctly signed timestamp beyond the tolerance either way, and accepts it within', async () => {
    const offset = fc.oneof(
      fc.integer({ min: -TOLERANCE_MS, max: TOLERANCE_MS }),
      fc.integer({ min: TOLERANCE_MS + 1, max: 50 * 365 * 86_400_000 }),
      fc.integer({ min: -50 * 365 * 86_400_000, max: -TOLERANCE_MS - 1 }),
    );
    await fc.assert(
      fc.asyncProperty(validBody, offset, async (unsigned, ms) => {
        const cb = await sign({ ...unsigned, timestamp: iso(ms) });
        const result = await outcome(node, { body: cb.raw, headers: cb.headers });
        if (ms > TOLERANCE_MS) expect((result as WebhookVerificationError).reason).toBe('future');
        else if (ms < -TOLERANCE_MS) expect((result as WebhookVerificationError).reason).toBe('stale');
        else expect(result).not.toBeInstanceOf(WebhookVerificationError);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('never throws anything but a WebhookVerificationError, whatever the input', async () => {
    const headers = fc.oneof(
      fc.constant(undefined),
      fc.anything(),
      fc.dictionary(
        fc.constantFrom('x-webhook-signature', 'X-Webhook-ID', 'x-webhook-timestamp', 'x-payment-id', 'other'),
        fc.oneof(fc.string(), fc.array(fc.string()), fc.anything()),
      ),
    );
    const body = fc.oneof(
      fc.anything(),
      fc.string(),
      fc.json(),
      fc.uint8Array({ maxLength: 200 }),
      fc.record(Object.fromEntries([...SIGNED, 'signature', 'transaction_type'].map((k) => [k, fc.anything()])), {
        requiredKeys: [],
      }),
    );
    await fc.assert(
      fc.asyncProperty(body, headers, async (b, h) => {
        await outcome(node, { body: b, headers: h });
        await outcome(node, b as never);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('never throws anything else on arbitrary edits of a valid raw body', async () => {
    const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 5 }), insert: fc.string({ maxLength: 5 }) });
    await fc.assert(
      fc.asyncProperty(validBody, fc.array(edit, { minLength: 1, maxLength: 4 }), async (unsigned, edits) => {
        const cb = await sign(unsigned);
        let raw = cb.raw;
        for (const e of edits) {
          const at = e.at % (raw.length + 1);
          raw = raw.slice(0, at) + e.insert + raw.slice(at + e.remove);
        }
        fc.pre(raw !== cb.raw);
        const result = await outcome(node, { body: raw, headers: cb.headers });
        if (!(result instanceof WebhookVerificationError)) {
          // An edit that still verifies must have left every signed field as it was.
          expect(result.signed.webhook_id).toBe(unsigned.webhook_id);
          expect(result.signed.amount).toBe(unsigned.amount === 0 ? 0 : unsigned.amount);
          expect(result.signed.status).toBe(unsigned.status);
          expect(result.signed.payment_id).toBe(unsigned.payment_id);
          expect(result.signed.reference_id).toBe(unsigned.reference_id);
          expect(result.signed.timestamp).toBe(unsigned.timestamp);
          expect(result.signed.completed_at).toBe(unsigned.completed_at || null);
          expect(result.signed.currency).toBe(unsigned.currency);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('gives the same result on the node:crypto and Web Crypto paths', async () => {
    const mutate = fc.option(
      fc.tuple(fc.constantFrom<string>(...SIGNED, 'signature', 'transaction_type'), fc.anything()),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(validBody, mutate, async (unsigned, mutation) => {
        const cb = await sign(unsigned);
        const body: Record<string, unknown> = mutation ? { ...cb.body, [mutation[0]]: mutation[1] } : { ...cb.body };
        const a = await outcome(node, { body, headers: cb.headers });
        const b = await outcome(web, { body, headers: cb.headers });
        if (a instanceof WebhookVerificationError) {
          expect(b).toBeInstanceOf(WebhookVerificationError);
          expect((b as WebhookVerificationError).reason).toBe(a.reason);
        } else {
          expect(b).toEqual(a);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('parseTimestamp agrees with Date on every valid ISO 8601 date-time, with any offset and fraction', () => {
    const date = fc.date({
      min: new Date('0002-01-01T00:00:00Z'),
      max: new Date('9998-12-31T23:59:59.999Z'),
      noInvalidDate: true,
    });
    const offsetMinutes = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 });
    const fractionDigits = fc.integer({ min: 0, max: 9 });
    fc.assert(
      fc.property(date, offsetMinutes, fractionDigits, (d, offset, digits) => {
        const local = new Date(d.getTime() + offset * 60_000).toISOString(); // wall time in the target zone
        const ms = local.slice(20, 23);
        const fraction = digits === 0 ? '' : `.${(ms + '123456').slice(0, digits)}`;
        const sign = offset < 0 ? '-' : '+';
        const abs = Math.abs(offset);
        const zone =
          offset === 0 && digits % 2 === 0
            ? 'Z'
            : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
        const text = `${local.slice(0, 19)}${fraction}${zone}`;
        const keptMs = digits === 0 ? 0 : Number(`${(ms + '123456').slice(0, Math.min(digits, 3))}`.padEnd(3, '0'));
        const expected = d.getTime() - Number(ms) + keptMs;
        expect(parseTimestamp(text)).toBe(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
