/**
 * SqlPayouts across a merchant process killed with SIGKILL (sql/payouts/child.ts), on real
 * PostgreSQL, MariaDB and SQLite, against the mock served over real HTTP: a payout committed and
 * never sent, one whose claim was committed before its withdrawal left, one whose request was in
 * flight (the service holding its answer 3 s), and one killed after the service processed its
 * request but before its answer was written each end in exactly one withdrawal, sent by
 * another process that asks again with the same reference.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway, type MockHttpServer } from '../../../../src/testing/index.js';
import { child, databasesForFile, gatewayOf, killed, outboxOn, untilChildGets } from './processes.js';

const LEASE_MS = 1000;
/**
 * The lease of the test that reads it still holding: between the child's claim and the test's own
 * drain there are a poll, a kill and a query, which a loaded machine can stretch past 1 s.
 */
const HELD_LEASE_MS = 4000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const mock = createMockGateway();
let server: MockHttpServer;
beforeAll(async () => {
  server = await mock.serve();
});
afterAll(async () => {
  await server?.close();
});
const DBS = databasesForFile(['postgres', 'mysql', 'sqlite']);

describe.each(DBS)('a merchant process killed with SIGKILL, on $name', (db) => {
  async function setup(leaseMs = LEASE_MS) {
    const { payouts, env: shared } = await outboxOn(db, mock, server);
    const env = { ...shared, LEASE_MS: String(leaseMs) };
    const gateway = gatewayOf(mock, server);
    const reference = `PAYOUT${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    return { payouts, env, gateway, reference };
  }
  /** Withdrawal requests the service took (it answers any second one under the reference 409). */
  const accepted = () => mock.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 200);

  it('right after the COMMIT that staged it: another process sends it, once', async () => {
    mock.reset();
    const { payouts, env, gateway, reference } = await setup();
    await killed(await child({ ...env, MODE: 'stage', REFERENCE: reference }, 'committed'));
    expect(await payouts.get(reference)).toMatchObject({ state: 'staged' });
    expect(await payouts.worker(gateway).drain()).toMatchObject({ sent: 1 });
    expect(mock.getWithdrawal(reference)).toMatchObject({ amount: 250 });
    expect(accepted()).toHaveLength(1);
  }, 30_000);

  it('after the worker committed its claim, before its withdrawal request left: taken over after the lease, created once', async () => {
    mock.reset();
    const { payouts, env, gateway, reference } = await setup(HELD_LEASE_MS);
    await payouts.transaction(({ tx }) =>
      payouts.stage(tx, {
        amount: '250.00',
        reference_id: reference,
        bank_code: 'PBBEMYKL',
        account_number: '5140123456789',
        account_name: 'Tan Wei Ming',
      }),
    );
    // The child's token request is held: its claim is committed, its withdrawal not yet sent.
    mock.fault({ endpoint: 'auth', response: { type: 'delay', ms: 5000 } });
    const worker = await child({ ...env, MODE: 'drain' }, 'draining');
    // Its token request arrived (so the held answer is the child's, never the test's own worker's).
    await untilChildGets(
      worker,
      'its claim and its token request',
      async () => mock.count('auth') >= 1 && (await payouts.get(reference))?.state === 'sending',
    );
    await killed(worker);
    expect(mock.count('withdraw')).toBe(0);
    // Its lease still holds the payout: nothing is taken before it runs out.
    expect(await payouts.worker(gateway).drain()).toMatchObject({ sent: 0 });
    await sleep(HELD_LEASE_MS);
    expect(await payouts.worker(gateway).drain()).toMatchObject({ sent: 1 });
    expect(await payouts.get(reference)).toMatchObject({
      state: 'sent',
      attempts: 2,
      paymentId: mock.getWithdrawal(reference)?.payment_id,
    });
    expect(mock.count('withdraw')).toBe(1);
  }, 30_000);

  it('with its request in flight (the service holds the answer 3 s): one withdrawal, whichever request the service took', async () => {
    mock.reset();
    const { payouts, env, gateway, reference } = await setup();
    await payouts.transaction(({ tx }) =>
      payouts.stage(tx, {
        amount: '250.00',
        reference_id: reference,
        bank_code: 'PBBEMYKL',
        account_number: '5140123456789',
        account_name: 'Tan Wei Ming',
      }),
    );
    mock.fault({ endpoint: 'withdraw', response: { type: 'delay', ms: 3000 } });
    const worker = await child({ ...env, MODE: 'drain' }, 'draining');
    await untilChildGets(worker, 'its token request', () => mock.count('auth') >= 1);
    await sleep(300);
    await killed(worker);
    await sleep(LEASE_MS);
    expect(await payouts.worker(gateway).drain()).toMatchObject({ sent: 1 });
    await sleep(3000); // the held request is processed (or refused as a duplicate) by now
    expect(await payouts.get(reference)).toMatchObject({ state: 'sent', attempts: 2 });
    expect(mock.getWithdrawal(reference)).toMatchObject({ amount: 250 });
    expect(accepted()).toHaveLength(1);
  }, 30_000);

  it('after the service processed its request, before its answer was written (the answer held 3 s): the resend meets DUPLICATE_REFERENCE, sent, one withdrawal', async () => {
    mock.reset();
    const { payouts, env, gateway, reference } = await setup();
    await payouts.transaction(({ tx }) =>
      payouts.stage(tx, {
        amount: '250.00',
        reference_id: reference,
        bank_code: 'PBBEMYKL',
        account_number: '5140123456789',
        account_name: 'Tan Wei Ming',
      }),
    );
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'delay', ms: 3000 } });
    const worker = await child({ ...env, MODE: 'drain' }, 'draining');
    await untilChildGets(worker, 'its withdrawal', () => mock.getWithdrawal(reference) !== undefined);
    await killed(worker);
    expect(await payouts.get(reference)).toMatchObject({ state: 'sending', attempts: 1 });
    await sleep(LEASE_MS);
    expect(await payouts.worker(gateway).drain()).toMatchObject({ sent: 1 });
    expect(await payouts.get(reference)).toMatchObject({ state: 'sent', attempts: 2 });
    expect(mock.requests.filter((r) => r.endpoint === 'withdraw').map((r) => r.status)).toEqual([
      expect.any(Number),
      409,
    ]);
    expect(mock.count('withdraw')).toBe(2);
  }, 30_000);
});
