/**
 * SqlPayouts through the public API on one database (run by payouts-postgres, payouts-mariadb and
 * payouts-sqlite): the mock served over real HTTP on 127.0.0.1, the merchant's credits written
 * through the hooks' `tx` into the same database. Each test has a table of its own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it as vitestIt } from 'vitest';
import { inspect } from 'node:util';
import {
  DuplicateReferenceError,
  MyrGatewayError,
  InvalidRequestError,
  MemoryRateLimiter,
  MemoryTokenStore,
  MyrGateway,
} from '../../../../src/index.js';
import {
  SqlLedger,
  SqlPayouts,
  type PayoutRefusal,
  type PayoutSettlement,
  type SqlClient,
} from '../../../../src/sql/index.js';
import { createMockGateway, type MockHttpServer } from '../../../../src/testing/index.js';
import { createWebhookHandler, signCallback } from '../../../../src/webhooks/index.js';
import { statusView } from '../../../../src/testing/money-endpoints.js';
import { withdrawalParams } from '../../../helpers/client.js';
import { MANY_CLIENTS_WARNING, warningLogger } from '../../../helpers/warnings.js';

/** One database as the scenarios use it. */
export interface PayoutDb<Tx> {
  /** A client of the database (a new one per call is fine). */
  client: () => SqlClient<Tx>;
  /** The merchant's write through the hook's `tx`: one credit row. */
  credit: (tx: Tx, referenceId: string, kind: string) => Promise<void>;
  /** Credit rows of a reference, read on another connection. */
  credits: (referenceId: string) => Promise<string[]>;
  /**
   * A statement of the merchant's own (`?` placeholders), on another connection: what a person or
   * another program does to the outbox's table. Given by the drivers that run every scenario.
   */
  raw?: (text: string, params: readonly (string | number)[]) => Promise<void>;
}

const ACCOUNT = '5140123456789';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** `pending`, or a failure once `ms` passed (a drain that stalls or spins never ends). */
const within = <T>(pending: Promise<T>, ms: number) =>
  Promise.race([pending, sleep(ms).then(() => Promise.reject(new Error(`still running after ${ms} ms`)))]);

/** The scenarios every adapter runs (an ORM over a driver that runs them all: the stage and settle paths through its `tx`). */
export const THROUGH_TX = [
  'stages in the merchant transaction and sends once: sent, with the service id; never the account number',
  'FAILED by callback, then the same callback again: settled once, one credit',
  "a payout staged inside a REFUNDED callback's run that then throws: nothing staged, nothing sent",
  "a payout staged inside a callback's run that commits is sent",
];

export function payoutScenarios<Tx>(
  name: string,
  db: () => PayoutDb<Tx>,
  options: { only?: readonly string[] } = {},
): void {
  describe(`SqlPayouts on ${name}`, () => {
    // Registers only the scenarios this client runs (`only`); the others run on its driver.
    const it = (title: string, test: () => Promise<void>, timeoutMs?: number) => {
      if (options.only === undefined || options.only.includes(title)) vitestIt(title, test, timeoutMs);
    };
    // The service's clock, this far from the process's: an earlier withdrawal is made in the past.
    let serviceClockMs = 0;
    const mock = createMockGateway({ now: () => Date.now() + serviceClockMs });
    let server: MockHttpServer;
    beforeAll(async () => {
      server = await mock.serve();
    });
    afterEach(() => {
      mock.reset();
      serviceClockMs = 0;
    });
    afterAll(async () => {
      await server?.close();
    });

    // The clients' warnings, kept: the one expected is the process's 20th client (a worker each).
    const warned = warningLogger();
    afterAll(() => {
      expect(warned.lines.filter((line) => !MANY_CLIENTS_WARNING.test(line))).toEqual([]);
    });
    const gateway = () =>
      new MyrGateway({
        baseUrl: server.baseUrl,
        ...mock.merchant,
        allowInsecureLoopback: true,
        tokenStore: new MemoryTokenStore(),
        rateLimiter: new MemoryRateLimiter(),
        random: () => 0,
        logger: warned.logger,
      });

    async function outbox(
      hooks: { refused?: (refusal: PayoutRefusal) => void; settled?: (settlement: PayoutSettlement) => void } = {},
    ) {
      const { client, credit, credits, raw: rawOf } = db();
      const raw = async (text: string, params: readonly (string | number)[]) => {
        if (rawOf === undefined) throw new Error('this database gives no raw statements');
        await rawOf(text.replaceAll('TABLE', payouts.table), params);
      };
      const refusals: PayoutRefusal[] = [];
      const settlements: PayoutSettlement[] = [];
      const payouts = new SqlPayouts(client(), {
        table: `payouts_${randomUUID().replaceAll('-', '').slice(0, 12)}`,
        onRefused: async (refusal, { tx }) => {
          hooks.refused?.(refusal);
          await credit(tx, refusal.referenceId, 'refused');
          refusals.push(refusal);
        },
        onSettled: async (settlement, { tx }) => {
          hooks.settled?.(settlement);
          await credit(tx, settlement.referenceId, settlement.state);
          settlements.push(settlement);
        },
      });
      await payouts.ensureSchema();
      return { payouts, refusals, settlements, credits, client, raw };
    }

    async function staged(payouts: SqlPayouts<Tx>, referenceId = withdrawalParams().reference_id) {
      const params = { ...withdrawalParams(), reference_id: referenceId };
      await payouts.transaction(async ({ tx }) => payouts.stage(tx, { ...params, amount: '250.00' }));
      return params.reference_id;
    }

    /**
     * A reference paid out two days ago (on the service's clock), its row deleted since, staged
     * again now, and taken over before its first answer: the recovery meets DUPLICATE_REFERENCE,
     * so the worker's first drain calls it sent. Answers the earlier withdrawal and that worker.
     */
    async function reusedAfterPurge(
      payouts: SqlPayouts<Tx>,
      raw: (text: string, params: readonly (string | number)[]) => Promise<void>,
    ) {
      serviceClockMs = -2 * 86_400_000;
      const referenceId = await staged(payouts);
      await payouts.worker(gateway()).drain();
      await mock.completeWithdrawal(referenceId, 'SUCCESS', { deliver: false });
      const earlier = mock.getWithdrawal(referenceId);
      if (earlier === undefined) throw new Error('the mock holds no earlier withdrawal');
      serviceClockMs = 0;
      await raw('DELETE FROM TABLE WHERE reference_id = ?', [referenceId]);
      // A worker claimed it and died before its first request was answered (or its lease ran out):
      // the next claim cannot tell whether that request went, so it recovers.
      await staged(payouts, referenceId);
      await raw("UPDATE TABLE SET state = 'sending', attempts = 1, claim_id = 1, due_at = 0 WHERE reference_id = ?", [
        referenceId,
      ]);
      const worker = payouts.worker(gateway(), { intervalMs: 1, settleAfterMs: 1 });
      // DUPLICATE_REFERENCE on the recovery: sent, as far as the worker can tell yet.
      expect(await worker.drain()).toMatchObject({ sent: 1 });
      return { referenceId, earlier, worker };
    }

    /** A webhook handler on a ledger in the same database whose onEvent settles withdrawals. */
    async function receiver(
      payouts: SqlPayouts<Tx>,
      client: () => SqlClient<Tx>,
      onDeposit?: (tx: Tx) => Promise<void>,
    ) {
      const ledger = new SqlLedger(client(), { table: `hooks_${randomUUID().replaceAll('-', '').slice(0, 12)}` });
      await ledger.ensureSchema();
      const answers: string[] = [];
      const handler = createWebhookHandler({
        verifier: { apiKey: mock.merchant.apiKey },
        store: ledger,
        onEvent: async (event, { tx }) => {
          if (event.transaction_type === 'WITHDRAWAL') answers.push(await payouts.settle(event, { tx }));
          else await onDeposit?.(tx);
        },
      });
      const deliver = async (fields: {
        payment_id: string;
        reference_id: string;
        amount: number;
        status: string;
        completed_at?: string | null;
      }) => {
        const transaction_type = fields.payment_id.startsWith('PAY_') ? ('DEPOSIT' as const) : ('WITHDRAWAL' as const);
        const { rawBody, headers } = await signCallback(mock.merchant.apiKey, { ...fields, transaction_type });
        return handler.handle({ body: rawBody, headers });
      };
      return { deliver, answers };
    }

    it('stages in the merchant transaction and sends once: sent, with the service id; never the account number', async () => {
      const { payouts } = await outbox();
      const referenceId = await staged(payouts);
      expect(await payouts.get(referenceId)).toEqual({ referenceId, state: 'staged', attempts: 0 });
      expect(await payouts.worker(gateway(), { intervalMs: 1 }).drain()).toEqual({
        sent: 1,
        refused: 0,
        unknown: 0,
        settled: 0,
        overdue: 0,
      });
      const payout = await payouts.get(referenceId);
      expect(payout).toEqual({
        referenceId,
        state: 'sent',
        paymentId: mock.getWithdrawal(referenceId)?.payment_id,
        attempts: 1,
      });
      expect(JSON.stringify(payout)).not.toContain(ACCOUNT);
      expect(await payouts.worker(gateway()).drain()).toEqual({
        sent: 0,
        refused: 0,
        unknown: 0,
        settled: 0,
        overdue: 0,
      });
      expect(mock.count('withdraw')).toBe(1);
    });

    it('a rolled-back transaction stages nothing and sends nothing; bad params and a staged reference throw before anything is sent', async () => {
      const { payouts } = await outbox();
      const params = withdrawalParams();
      await expect(
        payouts.transaction(async ({ tx }) => {
          await payouts.stage(tx, params);
          throw new Error('the debit failed');
        }),
      ).rejects.toThrow('the debit failed');
      expect(await payouts.get(params.reference_id)).toBeUndefined();
      await expect(
        payouts.transaction(({ tx }) => payouts.stage(tx, { ...params, amount: '10.00' })),
      ).rejects.toMatchObject({ code: 'INVALID_AMOUNT', referenceId: params.reference_id });
      await expect(
        payouts.transaction(({ tx }) => payouts.stage(tx, { ...params, bank_code: 'PB B' })),
      ).rejects.toBeInstanceOf(InvalidRequestError);
      await payouts.transaction(({ tx }) => payouts.stage(tx, params));
      const again = payouts.transaction(({ tx }) => payouts.stage(tx, { ...params, amount: 999 }));
      await expect(again).rejects.toBeInstanceOf(DuplicateReferenceError);
      await expect(again).rejects.toMatchObject({ code: 'DUPLICATE_REFERENCE', referenceId: params.reference_id });
      await expect(payouts.stage({} as Tx, withdrawalParams())).rejects.toMatchObject({
        code: 'INVALID_CONFIGURATION',
        field: 'tx',
      });
      expect(await payouts.worker(gateway()).drain()).toMatchObject({ sent: 1 });
      expect(mock.getWithdrawal(params.reference_id)).toMatchObject({ amount: 250 });
      expect(mock.count('withdraw')).toBe(1);
    });

    it('params the table cannot hold whole (an amount of 45 characters, a 70,000-character name) are refused before anything is written, never cut; a name in any script is sent as staged', async () => {
      const { payouts } = await outbox();
      const long = { ...withdrawalParams(), amount: `${'0'.repeat(40)}50.00` };
      await expect(payouts.transaction(({ tx }) => payouts.stage(tx, long))).rejects.toMatchObject({
        name: 'InvalidRequestError',
        code: 'VALIDATION_ERROR',
        field: 'amount',
        referenceId: long.reference_id,
      });
      const named = { ...withdrawalParams(), amount: '250.00', account_name: 'A'.repeat(70_000) };
      const refused = payouts.transaction(({ tx }) => payouts.stage(tx, named));
      await expect(refused).rejects.toMatchObject({ name: 'InvalidRequestError', field: 'account_name' });
      await expect(refused).rejects.not.toThrow(ACCOUNT);
      expect(await payouts.get(long.reference_id)).toBeUndefined();
      expect(await payouts.get(named.reference_id)).toBeUndefined();
      const chinese = { ...withdrawalParams(), amount: '250.00', account_name: '陈伟明 Tan Wéi Míng 😀' };
      await payouts.transaction(({ tx }) => payouts.stage(tx, chinese));
      expect(await payouts.worker(gateway(), { intervalMs: 1 }).drain()).toMatchObject({ sent: 1 });
      expect(mock.getWithdrawal(chinese.reference_id)).toMatchObject({
        account_name: chinese.account_name,
        amount: 250,
      });
      expect(mock.count('withdraw')).toBe(1);
    });

    it('a 502 then success: asked again with the same reference, one withdrawal', async () => {
      const { payouts } = await outbox();
      const referenceId = await staged(payouts);
      mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' } });
      const worker = payouts.worker(gateway(), { intervalMs: 1 });
      expect(await worker.drain()).toMatchObject({ sent: 0, unknown: 1 });
      expect(await payouts.get(referenceId)).toMatchObject({
        state: 'sending',
        attempts: 1,
        lastError: expect.stringContaining('OUTCOME_UNKNOWN'),
      });
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ sent: 1, unknown: 0 });
      expect(await payouts.get(referenceId)).toMatchObject({
        state: 'sent',
        attempts: 2,
        paymentId: mock.getWithdrawal(referenceId)?.payment_id,
      });
      expect(mock.requests.filter((r) => r.endpoint === 'withdraw').map((r) => r.status)).toEqual([502, 200]);
    });

    it('the answer dropped after processing: the resend meets DUPLICATE_REFERENCE, so it is sent, never a second payout', async () => {
      const { payouts } = await outbox();
      const referenceId = await staged(payouts);
      mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
      const worker = payouts.worker(gateway(), { intervalMs: 1 });
      expect(await worker.drain()).toMatchObject({ unknown: 1 });
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ sent: 1 });
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'sent', attempts: 2 });
      expect(mock.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 409)).toHaveLength(1);
      expect(mock.getWithdrawal(referenceId)).toBeDefined();
    });

    it('a refusal with two workers: refused once, onRefused once (its credit committed with the state)', async () => {
      const { payouts, refusals, credits } = await outbox();
      const referenceId = await staged(payouts);
      mock.fault({
        endpoint: 'withdraw',
        times: Infinity,
        response: { type: 'status', status: 400, code: 'INVALID_BANK_CODE' },
      });
      const reports = await Promise.all([payouts.worker(gateway()).drain(), payouts.worker(gateway()).drain()]);
      expect(reports.reduce((sum, report) => sum + report.refused, 0)).toBe(1);
      expect(refusals).toEqual([
        { referenceId, amount: '250.00', code: 'INVALID_BANK_CODE', message: expect.any(String) },
      ]);
      expect(await credits(referenceId)).toEqual(['refused']);
      expect(await payouts.get(referenceId)).toMatchObject({
        state: 'refused',
        lastError: expect.stringContaining('INVALID_BANK_CODE'),
      });
      expect(mock.count('withdraw')).toBe(1);
    });

    it("DUPLICATE_REFERENCE on the very first request is a refusal: the reference was another transaction's", async () => {
      const { payouts, refusals } = await outbox();
      const referenceId = await staged(payouts);
      mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 409, code: 'DUPLICATE_REFERENCE' } });
      expect(await payouts.worker(gateway()).drain()).toMatchObject({ refused: 1, sent: 0 });
      expect(refusals).toMatchObject([{ referenceId, code: 'DUPLICATE_REFERENCE' }]);
    });

    it('onRefused that throws: the refusal stays, the hook runs again on a later drain, nothing is sent again', async () => {
      let fail = true;
      const { payouts, credits } = await outbox({
        refused: () => {
          if (fail) throw new Error('the wallet service is down');
        },
      });
      const referenceId = await staged(payouts);
      mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 400, code: 'INVALID_BANK_CODE' } });
      const worker = payouts.worker(gateway(), { intervalMs: 1 });
      expect(await worker.drain()).toMatchObject({ refused: 0, unknown: 1 });
      expect(await payouts.get(referenceId)).toMatchObject({
        state: 'sending',
        lastError: expect.stringContaining('onRefused threw'),
      });
      expect(await credits(referenceId)).toEqual([]);
      fail = false;
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ refused: 1 });
      expect(await credits(referenceId)).toEqual(['refused']);
      expect(mock.count('withdraw')).toBe(1);
    });

    it('FAILED by callback, then the same callback again: settled once, one credit', async () => {
      const { payouts, client, credits, settlements } = await outbox();
      const referenceId = await staged(payouts);
      await payouts.worker(gateway()).drain();
      const { deliver, answers } = await receiver(payouts, client);
      const paymentId = mock.getWithdrawal(referenceId)?.payment_id ?? '';
      const callback = { payment_id: paymentId, reference_id: referenceId, amount: 250, status: 'FAILED' };
      expect(await deliver(callback)).toMatchObject({ status: 200 });
      expect(await deliver({ ...callback })).toMatchObject({ status: 200 });
      expect(answers).toEqual(['settled']);
      expect(settlements).toEqual([
        { referenceId, amount: '250.00', state: 'failed', status: 'FAILED', paymentId, via: 'callback' },
      ]);
      expect(await credits(referenceId)).toEqual(['failed']);
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'failed', paymentId });
    });

    it("a callback naming another withdrawal than the one the payout's answer named settles nothing: 'unknown'", async () => {
      const { payouts, client, settlements } = await outbox();
      const referenceId = await staged(payouts);
      await payouts.worker(gateway()).drain();
      const { deliver, answers } = await receiver(payouts, client);
      const callback = { payment_id: 'WD_EARLIER_PAYOUT', reference_id: referenceId, amount: 250, status: 'SUCCESS' };
      expect(await deliver(callback)).toMatchObject({ status: 200 });
      expect(answers).toEqual(['unknown']);
      expect(settlements).toEqual([]);
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'sent' });
    });

    it('no callback: settled by the status lookup after settleAfterMs, then the late callback is already settled (one credit)', async () => {
      const { payouts, client, credits, settlements } = await outbox();
      const referenceId = await staged(payouts);
      const worker = payouts.worker(gateway(), { intervalMs: 1, settleAfterMs: 1 });
      expect(await worker.drain()).toMatchObject({ sent: 1 });
      await sleep(5);
      // Still PROCESSING at the service: nothing to settle, the payout is overdue and waits.
      expect(await worker.drain()).toMatchObject({ settled: 0, overdue: 1 });
      await mock.completeWithdrawal(referenceId, 'SUCCESS', { deliver: false });
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ settled: 1, overdue: 0 });
      expect(settlements).toMatchObject([{ referenceId, state: 'succeeded', status: 'SUCCESS', via: 'status' }]);
      const { deliver, answers } = await receiver(payouts, client);
      const paymentId = mock.getWithdrawal(referenceId)?.payment_id ?? '';
      expect(
        await deliver({ payment_id: paymentId, reference_id: referenceId, amount: 250, status: 'SUCCESS' }),
      ).toMatchObject({ status: 200 });
      expect(answers).toEqual(['already']);
      expect(await credits(referenceId)).toEqual(['succeeded']);
    });

    it('a status lookup answered 404 keeps waiting: overdue, never resent', async () => {
      const { payouts } = await outbox();
      const referenceId = await staged(payouts);
      const worker = payouts.worker(gateway(), { intervalMs: 1, settleAfterMs: 1 });
      await worker.drain();
      mock.fault({ endpoint: 'payment.status', response: { type: 'status', status: 404, code: 'NOT_FOUND' } });
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ overdue: 1, sent: 0 });
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'sent', attempts: 1 });
      expect(mock.count('withdraw')).toBe(1);
    });

    it('a reference an earlier withdrawal used, staged again after its row was deleted and taken over before its first answer: refused (onRefused once), never settled on the earlier withdrawal', async () => {
      const { payouts, refusals, settlements, credits, raw } = await outbox();
      const { referenceId, worker } = await reusedAfterPurge(payouts, raw);
      await sleep(5);
      // The lookup finds a withdrawal made before this payout was staged: not this payout's.
      expect(await worker.drain()).toMatchObject({ settled: 0, refused: 1 });
      expect(settlements).toEqual([]);
      expect(refusals).toMatchObject([{ referenceId, amount: '250.00', code: 'DUPLICATE_REFERENCE' }]);
      expect(await credits(referenceId)).toEqual(['refused']);
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'refused' });
    });

    it('the same earlier withdrawal, its created_at in ISO 8601 without seconds or in the basic form: refused all the same, never settled on it', async () => {
      for (const form of [
        (iso: string) => iso.slice(0, 16) + 'Z',
        (iso: string) => iso.replace(/[-:]/g, '').slice(0, 15) + 'Z',
      ]) {
        const { payouts, refusals, settlements, raw } = await outbox();
        const { referenceId, earlier, worker } = await reusedAfterPurge(payouts, raw);
        await sleep(5);
        // The status record as a service that writes its times in another ISO 8601 form answers it.
        const record = { ...statusView(earlier), created_at: form(earlier.created_at) };
        mock.fault({
          endpoint: 'payment.status',
          response: { type: 'body', body: { status: 'success', data: record } },
        });
        expect(await worker.drain()).toMatchObject({ settled: 0, refused: 1 });
        expect(settlements).toEqual([]);
        expect(refusals).toMatchObject([{ referenceId, code: 'DUPLICATE_REFERENCE' }]);
        mock.reset();
      }
    });

    it("the earlier withdrawal's SUCCESS callback, resent after the reference was staged again and its recovery met DUPLICATE_REFERENCE: not this payout's (settle answers 'unknown'), and the lookup refuses it", async () => {
      const { payouts, refusals, settlements, credits, client, raw } = await outbox();
      const { referenceId, earlier, worker } = await reusedAfterPurge(payouts, raw);
      // The dashboard resends the earlier withdrawal's callback: freshly signed, completed two days ago.
      const { deliver, answers } = await receiver(payouts, client);
      const resent = await deliver({
        payment_id: earlier.payment_id,
        reference_id: referenceId,
        amount: 250,
        status: 'SUCCESS',
        completed_at: earlier.completed_at,
      });
      expect(resent).toMatchObject({ status: 200 });
      expect(answers).toEqual(['unknown']);
      expect(settlements).toEqual([]);
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'sent' });
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ settled: 0, refused: 1 });
      expect(refusals).toMatchObject([{ referenceId, code: 'DUPLICATE_REFERENCE' }]);
      expect(await credits(referenceId)).toEqual(['refused']);
    });

    it("a recovery that meets DUPLICATE_REFERENCE because this payout's own request arrived is settled by the lookup on its withdrawal", async () => {
      const { payouts, settlements, raw } = await outbox();
      const referenceId = await staged(payouts);
      // The request arrived and was processed; the worker died before it wrote the answer.
      mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
      await payouts.worker(gateway(), { intervalMs: 1 }).drain();
      await raw('UPDATE TABLE SET due_at = 0 WHERE reference_id = ?', [referenceId]);
      const worker = payouts.worker(gateway(), { intervalMs: 1, settleAfterMs: 1 });
      expect(await worker.drain()).toMatchObject({ sent: 1 });
      await mock.completeWithdrawal(referenceId, 'SUCCESS', { deliver: false });
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ settled: 1, refused: 0 });
      expect(settlements).toMatchObject([{ referenceId, state: 'succeeded', via: 'status' }]);
      expect(mock.count('withdraw')).toBe(2);
    });

    it('settled by hand (the documented UPDATE) while a status lookup is in flight: the lookup never takes the row back, and no hook runs after', async () => {
      const { payouts, settlements, credits, raw } = await outbox();
      const referenceId = await staged(payouts);
      const worker = payouts.worker(gateway(), { intervalMs: 1, settleAfterMs: 1 });
      expect(await worker.drain()).toMatchObject({ sent: 1 });
      await sleep(5);
      mock.fault({ endpoint: 'payment.status', response: { type: 'delay', ms: 600 } });
      const lookup = worker.drain();
      // The lookup's request is at the service (held there): the UPDATE lands while it is in flight.
      for (let waited = 0; mock.count('payment.status') === 0 && waited < 5_000; waited += 10) await sleep(10);
      expect(mock.count('payment.status')).toBe(1);
      // docs/payouts.md, "Settling by status, and by hand".
      await raw("UPDATE TABLE SET state = 'failed', settled_at = ? WHERE reference_id = ? AND state = 'sent'", [
        Date.now(),
        referenceId,
      ]);
      await lookup;
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'failed' });
      await mock.completeWithdrawal(referenceId, 'FAILED', { deliver: false });
      await sleep(5);
      expect(await worker.drain()).toMatchObject({ settled: 0, overdue: 0 });
      expect(settlements).toEqual([]);
      expect(await credits(referenceId)).toEqual([]);
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'failed' });
    });

    it("rows the outbox did not write (params not JSON, another payout's request, null, attempts at its column's edge, a state it never writes) are set aside with a typed error that shows none of their text; every other payout is sent", async () => {
      const errors: unknown[] = [];
      const { payouts, raw } = await outbox();
      const good = [await staged(payouts), await staged(payouts)];
      const bad = [
        await staged(payouts),
        await staged(payouts),
        await staged(payouts),
        await staged(payouts),
        await staged(payouts),
      ];
      const other = JSON.stringify({ ...withdrawalParams(), amount: '250.00' });
      await raw('UPDATE TABLE SET params = ? WHERE reference_id = ?', [`x${ACCOUNT}`, bad[0] ?? '']);
      await raw('UPDATE TABLE SET params = ? WHERE reference_id = ?', [other, bad[1] ?? '']);
      await raw('UPDATE TABLE SET params = ? WHERE reference_id = ?', ['null', bad[2] ?? '']);
      await raw("UPDATE TABLE SET state = 'paid' WHERE reference_id = ?", [bad[3] ?? '']);
      // An INT's largest value: the claim's `attempts + 1` would overflow and fail every claim.
      await raw('UPDATE TABLE SET attempts = ? WHERE reference_id = ?', [2_147_483_647, bad[4] ?? '']);
      // Due first, and more of them than one claim takes.
      for (const referenceId of bad) await raw('UPDATE TABLE SET due_at = 0 WHERE reference_id = ?', [referenceId]);
      const worker = payouts.worker(gateway(), { batchSize: 2, onError: (error) => errors.push(error) });
      expect(await worker.drain()).toMatchObject({ sent: 2 });
      expect(mock.count('withdraw')).toBe(2);
      for (const referenceId of good) expect(await payouts.get(referenceId)).toMatchObject({ state: 'sent' });
      // A state the outbox never writes is not due; the other four were read and set aside, each said once.
      expect(errors).toHaveLength(4);
      for (const error of [...errors, await payouts.get(bad[0] ?? '').catch((thrown: unknown) => thrown)]) {
        expect(error).toBeInstanceOf(MyrGatewayError);
        expect(error).toMatchObject({ code: 'PAYOUT_ROW_INVALID', retryable: false });
        const shown = `${String(error)} ${JSON.stringify(error)} ${inspect(error)}`;
        expect(shown).not.toContain(ACCOUNT);
        expect(shown).not.toContain('6789');
      }
      await expect(payouts.get(bad[3] ?? '')).rejects.toMatchObject({ code: 'PAYOUT_ROW_INVALID' });
      // Set aside, not lost: still there for a person, not due again at once.
      expect(await worker.drain()).toMatchObject({ sent: 0 });
      expect(errors).toHaveLength(4);
    });

    it('a refusal kept on its row with a message longer than last_error holds reaches refused, its message cut for onRefused', async () => {
      const { payouts, refusals, raw } = await outbox();
      const referenceId = await staged(payouts);
      const refusal = JSON.stringify({ code: 'INSUFFICIENT_BALANCE', message: 'm'.repeat(5_000) });
      await raw("UPDATE TABLE SET state = 'sending', attempts = 1, refusal = ?, due_at = 0 WHERE reference_id = ?", [
        refusal,
        referenceId,
      ]);
      expect(await payouts.worker(gateway()).drain()).toMatchObject({ refused: 1 });
      expect(refusals).toMatchObject([{ referenceId, code: 'INSUFFICIENT_BALANCE' }]);
      expect(refusals[0]?.message.length).toBeLessThanOrEqual(400);
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'refused' });
      expect(mock.count('withdraw')).toBe(0);
    });

    it('requested_at far in the future on rows the outbox did not write neither stalls the pace nor spins: a payout goes at once', async () => {
      const { payouts, raw } = await outbox();
      const olds = [await staged(payouts), await staged(payouts), await staged(payouts)];
      for (const referenceId of olds) {
        await raw("UPDATE TABLE SET state = 'succeeded', requested_at = ? WHERE reference_id = ?", [
          Date.now() + 30 * 86_400_000,
          referenceId,
        ]);
      }
      const referenceId = await staged(payouts);
      const worker = payouts.worker(gateway(), { pace: { limit: 3, windowMs: 2_000 } });
      const drained = await within(worker.drain(), 5_000);
      expect(drained).toMatchObject({ sent: 1 });
      expect(await payouts.get(referenceId)).toMatchObject({ state: 'sent' });
    });

    it('three workers (a client each, as three processes) drain 60 payouts against 30 per 6 s, pacing through the database: each sent once, at most one 429, even when requests reach the service up to 0.8 s late', async () => {
      const limited = createMockGateway({ rateLimits: { withdraw: 30 }, rateLimitWindowMs: 6000 });
      const limitedServer = await limited.serve();
      try {
        const { payouts } = await outbox();
        const references = Array.from({ length: 60 }, () => withdrawalParams());
        await payouts.transaction(async ({ tx }) => {
          for (const params of references) await payouts.stage(tx, params);
        });
        // A loaded process or a slow route: each withdrawal leaves 0 to 0.8 s after its claim, in
        // an order of its own, so the service counts requests later, and not in the order claimed.
        let sent = 0;
        const late: typeof fetch = async (input, init) => {
          if (String(input instanceof Request ? input.url : input).includes('/withdraw'))
            await sleep(((sent++ * 7919) % 9) * 100);
          return fetch(input, init);
        };
        const client = () =>
          new MyrGateway({
            baseUrl: limitedServer.baseUrl,
            ...limited.merchant,
            fetch: late,
            allowInsecureLoopback: true,
            tokenStore: new MemoryTokenStore(),
            rateLimiter: new MemoryRateLimiter(),
            random: () => 0,
          });
        const workers = [0, 1, 2].map(() =>
          payouts.worker(client(), { intervalMs: 100, pace: { limit: 30, windowMs: 6000 } }),
        );
        const reports = await Promise.all(workers.map((worker) => worker.drain()));
        // A payout whose request met a 429 waits out the service's Retry-After (at most the 6 s
        // window), then the next drain asks again: drained again until every payout is sent or a
        // whole window and a margin have passed since the workers finished.
        const until = Date.now() + 6000 + 2000;
        while (reports.reduce((sum, report) => sum + report.sent, 0) < 60 && Date.now() < until) {
          await sleep(500);
          reports.push(await workers[0]!.drain());
        }
        expect(reports.reduce((sum, report) => sum + report.sent, 0)).toBe(60);
        const requests = limited.requests.filter((r) => r.endpoint === 'withdraw');
        expect(requests.filter((r) => r.status === 429).length).toBeLessThanOrEqual(1);
        expect(requests.filter((r) => r.status === 200)).toHaveLength(60);
        for (const params of references)
          expect(await payouts.get(params.reference_id)).toMatchObject({ state: 'sent' });
      } finally {
        await limitedServer.close();
      }
    }, 60_000);

    it("a payout staged inside a REFUNDED callback's run that then throws: nothing staged, nothing sent", async () => {
      const { payouts, client } = await outbox();
      const params = withdrawalParams();
      const { deliver } = await receiver(payouts, client, async (tx) => {
        await payouts.stage(tx, params);
        throw new Error('the refund bookkeeping failed');
      });
      const answer = await deliver({
        payment_id: `PAY_${randomUUID().replaceAll('-', '')}`,
        reference_id: 'ORDER1',
        amount: 250,
        status: 'REFUNDED',
      });
      expect(answer.status).toBe(500);
      expect(await payouts.get(params.reference_id)).toBeUndefined();
      expect(await payouts.worker(gateway()).drain()).toMatchObject({ sent: 0 });
      expect(mock.count('withdraw')).toBe(0);
    });

    it("a payout staged inside a callback's run that commits is sent", async () => {
      const { payouts, client } = await outbox();
      const params = withdrawalParams();
      const { deliver } = await receiver(payouts, client, (tx) => payouts.stage(tx, params));
      expect(
        (
          await deliver({
            payment_id: `PAY_${randomUUID().replaceAll('-', '')}`,
            reference_id: 'ORDER2',
            amount: 250,
            status: 'REFUNDED',
          })
        ).status,
      ).toBe(200);
      expect(await payouts.get(params.reference_id)).toMatchObject({ state: 'staged' });
      expect(await payouts.worker(gateway()).drain()).toMatchObject({ sent: 1 });
    });
  });
}
