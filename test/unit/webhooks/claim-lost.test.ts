/**
 * In memory: a handler whose claim lapsed while it ran (and another delivery ran it meanwhile)
 * reports CLAIM_LOST once, to onError and to the logger; a handler that kept its claim reports
 * nothing.
 */
import { describe, expect, it } from 'vitest';
import { signCallback } from '../../../src/testing/index.js';
import { ClaimLostError, createWebhookHandler, MemoryWebhookStore, runOnce } from '../../../src/webhooks/index.js';

const API_KEY = 'sk_test_claim_lost_unit_01';

describe('CLAIM_LOST in memory', () => {
  it('the claim lapsed mid-handler and a second delivery ran it: the first reports CLAIM_LOST once, the second nothing', async () => {
    let now = 1_000_000;
    const store = new MemoryWebhookStore({ clock: () => now });
    const errors: unknown[] = [];
    const lines: unknown[][] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (...args: unknown[]) => void lines.push(args) };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      logger,
      onEvent: async () => {
        if (!first) return;
        first = false;
        await gate;
      },
      onError: (error) => void errors.push(error),
    });
    const { rawBody, headers } = await signCallback(API_KEY, {
      payment_id: 'PAY_UNIT_LOST',
      reference_id: 'ORDERUNIT1',
      amount: 3,
      status: 'SUCCESS',
    });
    const answer = handler.handle({ body: rawBody, headers });
    await new Promise((r) => setTimeout(r, 10));
    now += 10 * 60_000; // the claim lapsed (a stalled process: no renewal got through)
    expect((await handler.handle({ body: rawBody, headers })).body.outcome).toBe('processed');
    release();
    expect((await answer).body.outcome).toBe('processed');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ClaimLostError);
    expect(errors[0]).toMatchObject({
      code: 'CLAIM_LOST',
      operation: 'complete',
      key: 'payment:PAY_UNIT_LOST:SUCCESS',
      retryable: false,
    });
    expect(lines).toEqual([
      [
        expect.stringContaining('claim lost at complete'),
        expect.objectContaining({ code: 'CLAIM_LOST', payment_id: 'PAY_UNIT_LOST' }),
      ],
    ]);
  });

  it('runOnce: a failing fn whose claim was taken meanwhile reports CLAIM_LOST at release', async () => {
    let now = 0;
    const store = new MemoryWebhookStore({ clock: () => now });
    const errors: unknown[] = [];
    const run = runOnce(
      store,
      'job:1',
      async () => {
        now += 60_000; // past the default claim (30 s): another run takes the key
        await runOnce(store, 'job:1', () => 'other');
        throw new Error('fn failed');
      },
      { onError: (error) => void errors.push(error) },
    );
    await expect(run).rejects.toMatchObject({ stage: 'handler' });
    expect(errors).toEqual([expect.objectContaining({ code: 'CLAIM_LOST', operation: 'release' })]);
  });

  it('a handler that kept its claim reports nothing', async () => {
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      onEvent: () => {},
      onError: (e) => void errors.push(e),
    });
    const { rawBody, headers } = await signCallback(API_KEY, {
      payment_id: 'PAY_UNIT_KEPT',
      reference_id: 'ORDERUNIT2',
      amount: 3,
      status: 'SUCCESS',
    });
    expect((await handler.handle({ body: rawBody, headers })).body.outcome).toBe('processed');
    expect(errors).toEqual([]);
  });
});
