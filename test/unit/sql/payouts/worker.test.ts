/**
 * src/sql/payouts/worker.ts on real SQLite in memory, with a scripted gateway: which request a
 * claimed payout gets (create the first time, recover after any doubt or a takeover), that a
 * late answer of a worker whose lease ran out writes nothing, that a 429 on the first request
 * leaves it unsent, that a status record that is not this payout's settles nothing, and the
 * schedule of start/stop.
 */
import { sqliteFile } from '../../../helpers/sqlite-file.js';
import { describe, expect, it } from 'vitest';
import { DuplicateReferenceError, NotFoundError, OutcomeUnknownError, RateLimitError } from '../../../../src/index.js';
import { SqlPayouts, fromSqlite, type PayoutGateway } from '../../../../src/sql/index.js';

const params = {
  amount: '250.00',
  reference_id: 'PAYOUT1',
  bank_code: 'PBBEMYKL',
  account_number: '5140123456789',
  account_name: 'Tan Wei Ming',
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const accepted = (paymentId = 'WD_1') => ({
  payment_id: paymentId,
  reference_id: 'PAYOUT1',
  amount: 250,
  currency: 'MYR',
  bank_code: 'PBBEMYKL',
  account_number: '****6789',
});

/** A gateway whose every call is recorded and answered by `answer`. */
function scripted(answer: (call: string) => Promise<unknown>) {
  const calls: string[] = [];
  const gateway = {
    withdrawals: {
      create: async () => (calls.push('create'), answer('create')),
      recover: async () => (calls.push('recover'), answer('recover')),
    },
    payments: { retrieve: async () => (calls.push('retrieve'), answer('retrieve')) },
  } as unknown as PayoutGateway;
  return { gateway, calls };
}

async function staged() {
  const payouts = new SqlPayouts(fromSqlite(sqliteFile()), { onRefused: () => undefined, onSettled: () => undefined });
  await payouts.ensureSchema();
  await payouts.transaction(({ tx }) => payouts.stage(tx, params));
  return payouts;
}

describe('the payout worker', () => {
  it("rows whose key is NULL or a blob (written by hand on SQLite) are set aside with PAYOUT_ROW_INVALID; the payouts beside them are sent, one named 'null' untouched by it, and the drain ends", async () => {
    const db = sqliteFile();
    const payouts = new SqlPayouts(fromSqlite(db), { onRefused: () => undefined, onSettled: () => undefined });
    // A table made without NOT NULL on its key (as the DDL was before): it still passes.
    db.exec(
      payouts.schemaSql('sqlite').replace('reference_id TEXT NOT NULL PRIMARY KEY', 'reference_id TEXT PRIMARY KEY'),
    );
    await payouts.ensureSchema();
    await payouts.transaction(({ tx }) => payouts.stage(tx, { ...params, reference_id: 'null' }));
    await payouts.transaction(({ tx }) => payouts.stage(tx, params));
    // SQLite lets a TEXT primary key hold NULL more than once.
    for (let i = 0; i < 2; i++)
      db.prepare(
        "INSERT INTO myr_payouts (reference_id, state, params, amount, attempts, due_at, staged_at) VALUES (NULL, 'staged', 'x', '1.00', 0, 0, 0)",
      ).run();
    db.prepare(
      "INSERT INTO myr_payouts (reference_id, state, params, amount, attempts, due_at, staged_at) VALUES (x'00ff', 'staged', 'x', '1.00', 0, 0, 0)",
    ).run();
    const errors: unknown[] = [];
    const { gateway, calls } = scripted(async () => accepted());
    const report = await payouts.worker(gateway, { onError: (error) => errors.push(error) }).drain();
    expect(report).toMatchObject({ sent: 2 });
    expect(calls).toEqual(['create', 'create']);
    // Each key said once: the two NULL rows are one key, set aside together.
    expect(errors).toEqual([
      expect.objectContaining({ code: 'PAYOUT_ROW_INVALID' }),
      expect.objectContaining({ code: 'PAYOUT_ROW_INVALID' }),
    ]);
    expect(await payouts.get('null')).toMatchObject({ state: 'sent', attempts: 1 });
    const kept = db.prepare("SELECT last_error, due_at FROM myr_payouts WHERE reference_id = 'null'").get();
    expect(kept).toMatchObject({ last_error: null });
    const parked = db
      .prepare('SELECT due_at FROM myr_payouts WHERE reference_id IS NULL OR typeof(reference_id) = ?')
      .all('blob');
    expect(parked).toHaveLength(3);
    for (const row of parked) expect(Number(row.due_at)).toBeGreaterThan(Date.now() + 3_000_000);
    db.close();
  });

  it("a NULL key whose params name the payout 'null', already paid: never sent, never taken back to sending, no onRefused (a NULL is no reference)", async () => {
    const db = sqliteFile();
    const refused: unknown[] = [];
    const payouts = new SqlPayouts(fromSqlite(db), {
      onRefused: (r) => void refused.push(r),
      onSettled: () => undefined,
    });
    db.exec(
      payouts.schemaSql('sqlite').replace('reference_id TEXT NOT NULL PRIMARY KEY', 'reference_id TEXT PRIMARY KEY'),
    );
    await payouts.ensureSchema();
    const paid = { ...params, reference_id: 'null' };
    await payouts.transaction(({ tx }) => payouts.stage(tx, paid));
    db.exec("UPDATE myr_payouts SET state = 'succeeded', payment_id = 'WD_9'");
    // What an importer that read "null" as NULL writes: the paid payout's own request under a NULL key.
    db.prepare(
      "INSERT INTO myr_payouts (reference_id, state, params, amount, attempts, due_at, staged_at) VALUES (NULL, 'staged', ?, '250.00', 0, 0, 0)",
    ).run(JSON.stringify({ ...paid, currency: 'MYR', method: 'BANK' }));
    const errors: unknown[] = [];
    // A drain that spins never yields: past a few calls the gateway never answers, so the test times out instead of hanging.
    const { gateway, calls } = scripted(async () => {
      if (calls.length > 3) await new Promise(() => undefined);
      throw new DuplicateReferenceError('DUPLICATE_REFERENCE: used', { code: 'DUPLICATE_REFERENCE', status: 409 });
    });
    expect(await payouts.worker(gateway, { onError: (error) => errors.push(error) }).drain()).toMatchObject({
      sent: 0,
      refused: 0,
    });
    expect(calls).toEqual([]);
    expect(refused).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ code: 'PAYOUT_ROW_INVALID' })]);
    expect(await payouts.get('null')).toMatchObject({ state: 'succeeded', paymentId: 'WD_9' });
    db.close();
  });

  it('a row holding an integer past 2^53 (attempts or staged_at, by hand) is set aside; node:sqlite cannot read it as a number, and the payouts beside it are sent', async () => {
    const db = sqliteFile();
    const payouts = new SqlPayouts(fromSqlite(db), { onRefused: () => undefined, onSettled: () => undefined });
    await payouts.ensureSchema();
    await payouts.transaction(({ tx }) => payouts.stage(tx, params));
    for (const reference of ['PAYOUTBIG1', 'PAYOUTBIG2'])
      await payouts.transaction(({ tx }) => payouts.stage(tx, { ...params, reference_id: reference }));
    db.exec("UPDATE myr_payouts SET attempts = 1152921504606846976, due_at = 0 WHERE reference_id = 'PAYOUTBIG1'");
    db.exec("UPDATE myr_payouts SET staged_at = -1152921504606846976, due_at = 0 WHERE reference_id = 'PAYOUTBIG2'");
    const errors: unknown[] = [];
    const { gateway, calls } = scripted(async () => accepted());
    expect(await payouts.worker(gateway, { onError: (error) => errors.push(error) }).drain()).toMatchObject({
      sent: 1,
    });
    expect(calls).toEqual(['create']);
    expect(errors).toEqual([
      expect.objectContaining({ code: 'PAYOUT_ROW_INVALID', referenceId: 'PAYOUTBIG1' }),
      expect.objectContaining({ code: 'PAYOUT_ROW_INVALID', referenceId: 'PAYOUTBIG2' }),
    ]);
    await expect(payouts.get('PAYOUTBIG1')).rejects.toMatchObject({ code: 'PAYOUT_ROW_INVALID' });
    db.close();
  });

  it("bounds each request and status lookup, retries included, well inside the claim's lease: a live worker's request never outlasts it", async () => {
    for (const [leaseMs, bound] of [
      [15_000, 10_000],
      [3_000, 2_000],
      [60_000, 55_000],
    ] as const) {
      const payouts = await staged();
      const seen: unknown[] = [];
      const gateway = {
        withdrawals: {
          create: async (_: unknown, options: unknown) => (
            seen.push(options),
            Promise.reject(new OutcomeUnknownError('lost', { referenceId: 'PAYOUT1' }))
          ),
          recover: async (_: unknown, options: unknown) => (
            seen.push(options),
            { created: false, referenceId: 'PAYOUT1' }
          ),
        },
        payments: {
          retrieve: async (_: unknown, options: unknown) => (
            seen.push(options),
            Promise.reject(new NotFoundError('none', { code: 'NOT_FOUND' }))
          ),
        },
      } as unknown as PayoutGateway;
      const worker = payouts.worker(gateway, { leaseMs, intervalMs: 1, settleAfterMs: 1 });
      await worker.drain();
      await sleep(5);
      await worker.drain();
      await sleep(5);
      // The status lookup too: one that outlived the lease would overlap another worker's.
      expect(await worker.drain()).toMatchObject({ overdue: 1 });
      expect(seen).toEqual([{ totalTimeout: bound }, { totalTimeout: bound }, { totalTimeout: bound }]);
    }
  });

  it('a worker whose lease ran out mid-send is taken over with recover (never create), and its late answer writes nothing', async () => {
    const payouts = await staged();
    let answerFirst!: (value: unknown) => void;
    const first = scripted(() => new Promise((resolve) => (answerFirst = resolve)));
    const stuck = payouts.worker(first.gateway, { leaseMs: 20 }).drain();
    await sleep(40);
    const second = scripted(async (call) =>
      call === 'recover' ? { created: false, referenceId: 'PAYOUT1' } : accepted(),
    );
    expect(await payouts.worker(second.gateway, { leaseMs: 20 }).drain()).toMatchObject({ sent: 1 });
    expect(second.calls).toEqual(['recover']);
    answerFirst(accepted('WD_LATE'));
    expect(await stuck).toMatchObject({ sent: 1 });
    expect(await payouts.get('PAYOUT1')).toEqual({ referenceId: 'PAYOUT1', state: 'sent', attempts: 2 });
    expect(first.calls).toEqual(['create']);
  });

  it('a 429 on the first request leaves the payout unsent: created later, not recovered', async () => {
    const payouts = await staged();
    let limited = true;
    const { gateway, calls } = scripted(async () => {
      if (limited) throw new RateLimitError('RATE_LIMITED: slow down', { code: 'RATE_LIMITED', status: 429 });
      return accepted();
    });
    const worker = payouts.worker(gateway, { intervalMs: 1 });
    expect(await worker.drain()).toMatchObject({ unknown: 1 });
    expect(await payouts.get('PAYOUT1')).toMatchObject({
      state: 'staged',
      lastError: expect.stringContaining('RATE_LIMITED'),
    });
    limited = false;
    await sleep(5);
    expect(await worker.drain()).toMatchObject({ sent: 1 });
    expect(calls).toEqual(['create', 'create']);
  });

  it("a 429 whose Retry-After is past an hour (or not a number) asks again within the hour, never 'never'", async () => {
    for (const retryAfter of [1e300, Infinity, Number.NaN]) {
      const db = sqliteFile();
      const payouts = new SqlPayouts(fromSqlite(db), { onRefused: () => undefined, onSettled: () => undefined });
      await payouts.ensureSchema();
      await payouts.transaction(({ tx }) => payouts.stage(tx, params));
      const { gateway } = scripted(async () => {
        throw new RateLimitError('RATE_LIMITED: slow down', { code: 'RATE_LIMITED', status: 429, retryAfter });
      });
      const before = Date.now();
      expect(await payouts.worker(gateway, { intervalMs: 1 }).drain()).toMatchObject({ unknown: 1 });
      const row = db.prepare("SELECT due_at FROM myr_payouts WHERE reference_id = 'PAYOUT1'").get();
      const dueAt = Number(row?.due_at);
      expect(dueAt).toBeGreaterThanOrEqual(before);
      expect(dueAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
      db.close();
    }
  });

  it('an outcome unknown, then any error the SDK did not make: asked again with recover each time', async () => {
    const payouts = await staged();
    const answers: (() => Promise<unknown>)[] = [
      () => Promise.reject(new OutcomeUnknownError('OUTCOME_UNKNOWN: timed out', { referenceId: 'PAYOUT1' })),
      () => Promise.reject(new TypeError('fetch failed')),
      () => Promise.resolve({ created: true, withdrawal: accepted('WD_9') }),
    ];
    const { gateway, calls } = scripted(() => (answers.shift() ?? (() => Promise.reject(new Error('no more'))))());
    const worker = payouts.worker(gateway, { intervalMs: 1 });
    for (const expected of [{ unknown: 1 }, { unknown: 1 }, { sent: 1 }]) {
      expect(await worker.drain()).toMatchObject(expected);
      await sleep(10);
    }
    expect(calls).toEqual(['create', 'recover', 'recover']);
    expect(await payouts.get('PAYOUT1')).toMatchObject({ state: 'sent', paymentId: 'WD_9', attempts: 3 });
  });

  it("a status record that is not this payout's (a deposit, another amount) or a 404 settles nothing: overdue", async () => {
    const payouts = await staged();
    const records: (() => Promise<unknown>)[] = [
      async () => ({ payment_id: 'PAY_1', reference_id: 'PAYOUT1', amount: 250, status: 'SUCCESS' }),
      async () => ({ payment_id: 'WD_1', reference_id: 'PAYOUT1', amount: 2500, status: 'SUCCESS' }),
      () => Promise.reject(new NotFoundError('NOT_FOUND', { code: 'NOT_FOUND', status: 404 })),
    ];
    const { gateway, calls } = scripted(async (call) => (call === 'create' ? accepted() : records.shift()?.()));
    const worker = payouts.worker(gateway, { intervalMs: 1, settleAfterMs: 1 });
    expect(await worker.drain()).toMatchObject({ sent: 1 });
    for (let i = 0; i < 3; i++) {
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ settled: 0, overdue: 1 });
    }
    expect(calls).toEqual(['create', 'retrieve', 'retrieve', 'retrieve']);
    expect(await payouts.get('PAYOUT1')).toMatchObject({ state: 'sent' });
  });

  it('start drains on schedule until stop, which waits for the drain under way; bad options are refused', async () => {
    const payouts = await staged();
    const { gateway, calls } = scripted(async () => accepted());
    const worker = payouts.worker(gateway, { intervalMs: 5 });
    worker.start();
    worker.start(); // once
    await sleep(30);
    await worker.stop();
    expect(calls).toEqual(['create']);
    expect(await payouts.get('PAYOUT1')).toMatchObject({ state: 'sent' });
    expect(() => payouts.worker(gateway, { intervalMs: 0 })).toThrow(expect.objectContaining({ field: 'intervalMs' }));
    expect(() => payouts.worker(gateway, { batchSize: 5000 })).toThrow(
      expect.objectContaining({ field: 'batchSize', message: 'batchSize must be a whole number from 1 to 1000' }),
    );
    expect(() => payouts.worker(gateway, { pace: { limit: 0.5, windowMs: 1000 } })).toThrow(
      expect.objectContaining({ field: 'pace.limit' }),
    );
    expect(() => payouts.worker(gateway, { pace: { limit: 50, windowMs: -1 } })).toThrow(
      expect.objectContaining({ field: 'pace.windowMs' }),
    );
  });

  it('stop does not wait out the shared limit: a drain waiting for room in the window ends at once', async () => {
    const payouts = await staged();
    await payouts.transaction(({ tx }) => payouts.stage(tx, { ...params, reference_id: 'PAYOUT2' }));
    const { gateway, calls } = scripted(async () => accepted());
    const worker = payouts.worker(gateway, { intervalMs: 5, pace: { limit: 1, windowMs: 60_000 } });
    worker.start();
    while (calls.length === 0) await sleep(5);
    await sleep(20);
    await worker.stop(); // within the test's 5 s, not the window's minute
    expect(calls).toEqual(['create']);
    expect(await payouts.get('PAYOUT2')).toMatchObject({ state: 'staged' });
  });

  it('onSettled that throws after a status lookup: rolled back, the payout stays sent, looked up again and settled once (never resent)', async () => {
    let failing = true;
    const settled: string[] = [];
    const payouts = new SqlPayouts(fromSqlite(sqliteFile()), {
      onRefused: () => undefined,
      onSettled: (settlement) => {
        if (failing) throw new Error('the ledger of wallets is down');
        settled.push(`${settlement.state} via ${settlement.via}`);
      },
    });
    await payouts.ensureSchema();
    await payouts.transaction(({ tx }) => payouts.stage(tx, params));
    const { gateway, calls } = scripted(async (call) =>
      call === 'create' ? accepted() : { payment_id: 'WD_1', reference_id: 'PAYOUT1', amount: 250, status: 'FAILED' },
    );
    const worker = payouts.worker(gateway, { intervalMs: 1, settleAfterMs: 1 });
    await worker.drain();
    await sleep(5);
    expect(await worker.drain()).toMatchObject({ settled: 0 });
    expect(await payouts.get('PAYOUT1')).toMatchObject({
      state: 'sent',
      lastError: expect.stringContaining('onSettled threw'),
    });
    failing = false;
    await sleep(10);
    expect(await worker.drain()).toMatchObject({ settled: 1 });
    expect(settled).toEqual(['failed via status']);
    expect(calls).toEqual(['create', 'retrieve', 'retrieve']);
    expect(await payouts.get('PAYOUT1')).toMatchObject({ state: 'failed', paymentId: 'WD_1' });
  });
});
