/**
 * SqlLedger's decisions, over a scripted client: what each database answer becomes, and that
 * nothing is acknowledged before COMMIT returned. The same scenarios on real databases are in
 * test/integration/ledger-*.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import type { SqlClient, SqlResult, SqlSession } from '../../../../src/sql/sql-client.js';
import { SqlLedger } from '../../../../src/sql/index.js';
import { laterRanks, supersedesNothing } from '../../../../src/webhooks/lifecycle.js';

type Step = 'begin' | 'lockMark' | 'claimBeside' | 'claim' | 'readMark' | 'takeOver' | 'done' | 'whoWaits' | 'commit';
interface Script {
  /** The dialect's statements the ledger sends (default postgres). */
  dialect?: 'postgres' | 'mysql';
  fail?: Partial<Record<Step, object>>;
  claimed?: number;
  /** Rows MySQL's one-statement claim inserts (the mark's and the key's; default 2). */
  beside?: number;
  /** Rows MySQL's takeover of an expired key updates (default 0). */
  takenOver?: number;
  /** The payment's mark_rank as the driver answers it (a BIGINT may come as a string). */
  mark?: unknown;
  doneRows?: number;
}

const TX = { the: 'merchant transaction' };

function scripted(script: Script = {}) {
  const events: string[] = [];
  const claims: unknown[][] = [];
  const checks: unknown[][] = [];
  const abandoned: Promise<unknown>[] = [];
  const step = (name: Step) => {
    events.push(name);
    const failure = script.fail?.[name];
    if (failure instanceof Error) throw failure;
    if (failure !== undefined) throw Object.assign(new Error(`${name} failed`), failure);
  };
  const kind = (text: string): Step =>
    text.startsWith('INSERT IGNORE INTO t (ledger_key, mark_rank')
      ? 'claimBeside'
      : /^(WITH mark AS|INSERT INTO t AS l \(ledger_key, handled_statuses, expires_at, claim_id\)|INSERT IGNORE)/.test(
            text,
          )
        ? 'claim'
        : text.startsWith('INSERT INTO t (ledger_key, mark_rank')
          ? 'lockMark'
          : text.startsWith('SELECT mark_rank')
            ? 'readMark'
            : text.startsWith('SELECT 1 AS held')
              ? 'done'
              : text.startsWith('SELECT pid FROM pg_stat_activity')
                ? 'whoWaits'
                : 'takeOver';
  const client: SqlClient<typeof TX> = {
    dialect: script.dialect ?? 'postgres',
    async begin() {
      step('begin');
      const session: SqlSession<typeof TX> = {
        tx: TX,
        async query(text, params): Promise<SqlResult> {
          const name = kind(text);
          step(name);
          if (name === 'claim') claims.push([...params]);
          if (name === 'done') checks.push([...params]);
          if (name === 'claim') return { rows: [], affected: script.claimed ?? 1 };
          if (name === 'takeOver') return { rows: [], affected: script.takenOver ?? 0 };
          if (name === 'claimBeside') return { rows: [], affected: script.beside ?? 2 };
          if (name === 'readMark')
            return {
              rows: script.mark === undefined ? [] : [{ mark_rank: script.mark, handled_statuses: 0 }],
              affected: 0,
            };
          if (name === 'done')
            return { rows: Array.from({ length: script.doneRows ?? 1 }, () => ({ held: 1 })), affected: 0 };
          return { rows: [], affected: 1 };
        },
        async commit() {
          step('commit');
        },
        async rollback() {
          events.push('rollback');
        },
        abandon(settled) {
          events.push('abandon');
          abandoned.push(settled);
        },
      };
      return session;
    },
  };
  return { client, events, claims, checks, abandoned, ledger: new SqlLedger(client, { table: 't' }) };
}

const RUN = { raiseMark: false, completedTtlMs: 60_000 };
const ORDER = { paymentId: 'PAY_1', rank: 1 };

describe('SqlLedger.run', () => {
  it('processed: claim, the work with the transaction, done mark, COMMIT, and only then the answer', async () => {
    const { ledger, events } = scripted();
    const run = await ledger.run('k', (tx) => (events.push('work'), tx), RUN);
    expect(run).toEqual({ outcome: 'processed', value: TX });
    expect(events).toEqual(['begin', 'claim', 'work', 'done', 'commit']);
  });

  it("checks before COMMIT for the run's own claim by its id, not its expiry: two runs of one key in one ms have different ids", async () => {
    const { ledger, claims, checks } = scripted();
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
    try {
      for (let run = 0; run < 2; run++) expect((await ledger.run('k', () => undefined, RUN)).outcome).toBe('processed');
    } finally {
      clock.mockRestore();
    }
    // Postgres's claim: [row, expiresAt, now, id]; the check: [row, id].
    const ids = claims.map((claim) => claim[3]);
    expect(claims.map((claim) => claim[1])).toEqual([now + RUN.completedTtlMs, now + RUN.completedTtlMs]);
    expect(checks).toEqual(ids.map((id) => ['k:k', id]));
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(Number.isSafeInteger(id) && Number(id) >= 0).toBe(true);
  });

  it('duplicate: the key is recorded; rolled back, the work not run', async () => {
    const { ledger, events } = scripted({ claimed: 0 });
    expect(await ledger.run('k', () => events.push('work'), RUN)).toEqual({ outcome: 'duplicate' });
    expect(events).toEqual(['begin', 'claim', 'rollback']);
  });

  it("superseded: the claim was refused and the payment's mark is above the callback's rank", async () => {
    const above = scripted({ claimed: 0, mark: 2 });
    expect(await above.ledger.run('k', () => above.events.push('work'), { ...RUN, order: ORDER })).toEqual({
      outcome: 'superseded',
    });
    expect(above.events).toEqual(['begin', 'claim', 'readMark', 'rollback']);
    const equal = scripted({ claimed: 0, mark: 1 });
    expect(await equal.ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).toEqual({ outcome: 'duplicate' });
    const none = scripted({ claimed: 0, mark: null });
    expect(await none.ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).toEqual({ outcome: 'duplicate' });
  });

  it("a payment's row the ledger did not write is unavailable, naming the column, never a duplicate; a BIGINT read as a string is read as its number", async () => {
    const text = scripted({ claimed: 0, mark: 'abc' });
    const run = await text.ledger.run('k', () => 'ran', { ...RUN, order: ORDER });
    expect(run).toMatchObject({
      outcome: 'unavailable',
      message: expect.stringMatching(/table t: a payment's row holds a mark_rank the ledger did not write \(text\)/),
    });
    expect(JSON.stringify(run)).not.toContain('abc');
    expect(text.events).toEqual(['begin', 'claim', 'readMark', 'rollback']);
    const asString = scripted({ claimed: 0, mark: '2' });
    expect(await asString.ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).toEqual({ outcome: 'superseded' });
  });

  it('a claim with an order checks the mark in the same statement: no extra round trip when it is taken', async () => {
    const { ledger, events } = scripted({ mark: 2 });
    expect((await ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).outcome).toBe('processed');
    expect(events).toEqual(['begin', 'claim', 'done', 'commit']);
  });

  it("writes the payment's mark in the claim (its row's lock orders the payment's callbacks): at the callback's rank only when asked", async () => {
    const raised = scripted();
    await raised.ledger.run('k', () => undefined, { ...RUN, raiseMark: true, order: { paymentId: 'PAY_1', rank: 2 } });
    expect(raised.events).toEqual(['begin', 'claim', 'done', 'commit']);
    expect(raised.claims[0]?.[5]).toBe(2);
    const notAsked = scripted();
    await notAsked.ledger.run('k', () => undefined, { ...RUN, order: { paymentId: 'PAY_1', rank: 2 } });
    expect(notAsked.claims[0]?.[5]).toBe(supersedesNothing());
    expect(laterRanks(2)).not.toContain(supersedesNothing());
  });

  it("MySQL: the mark's row and the key's in one INSERT IGNORE; a status that raises the mark writes it first, by a statement of its own", async () => {
    const { ledger, events } = scripted({ dialect: 'mysql' });
    expect((await ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).outcome).toBe('processed');
    expect(events).toEqual(['begin', 'claimBeside', 'done', 'commit']);
    const raising = scripted({ dialect: 'mysql' });
    await raising.ledger.run('k', () => 'ran', { ...RUN, raiseMark: true, order: { paymentId: 'PAY_1', rank: 2 } });
    expect(raising.events).toEqual(['begin', 'lockMark', 'claim', 'done', 'commit']);
    const unordered = scripted({ dialect: 'mysql' });
    await unordered.ledger.run('k', () => 'ran', RUN);
    expect(unordered.events).toEqual(['begin', 'claim', 'done', 'commit']);
  });

  it("MySQL: when one of the two rows was there, whose the key's row is cannot be told: the claim starts again in two statements", async () => {
    const { ledger, events } = scripted({ dialect: 'mysql', beside: 1 });
    expect((await ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).outcome).toBe('processed');
    expect(events).toEqual([
      'begin',
      'claimBeside',
      'readMark',
      'rollback',
      'begin',
      'lockMark',
      'claim',
      'done',
      'commit',
    ]);
    const superseded = scripted({ dialect: 'mysql', beside: 1, mark: 2 });
    expect(await superseded.ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).toEqual({ outcome: 'superseded' });
    expect(superseded.events).toEqual(['begin', 'claimBeside', 'readMark', 'rollback']);
    const both = scripted({ dialect: 'mysql', beside: 0 });
    expect(await both.ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).toEqual({ outcome: 'duplicate' });
    expect(both.events).toEqual(['begin', 'claimBeside', 'readMark', 'takeOver', 'rollback']);
    // An expired key taken over beside a mark only share-locked: again, holding the mark for writing.
    const expired = scripted({ dialect: 'mysql', beside: 0, takenOver: 1 });
    expect((await expired.ledger.run('k', () => 'ran', { ...RUN, order: ORDER })).outcome).toBe('processed');
    expect(expired.events).toEqual([
      'begin',
      'claimBeside',
      'readMark',
      'takeOver',
      'rollback',
      'begin',
      'lockMark',
      'claim',
      'done',
      'commit',
    ]);
  });

  it('failed: the work threw; rolled back, never committed, the error kept', async () => {
    const { ledger, events } = scripted();
    const error = new Error('handler bug');
    expect(await ledger.run('k', () => Promise.reject(error), RUN)).toEqual({ outcome: 'failed', error });
    expect(events).toEqual(['begin', 'claim', 'rollback']);
    const sync = scripted();
    expect(
      await sync.ledger.run(
        'k',
        () => {
          throw error;
        },
        RUN,
      ),
    ).toEqual({ outcome: 'failed', error });
  });

  it('in_flight, not failed, when the work met a deadlock or a serialization failure', async () => {
    const { ledger, events } = scripted();
    expect(
      await ledger.run('k', () => Promise.reject(Object.assign(new Error('deadlock'), { code: '40P01' })), RUN),
    ).toEqual({ outcome: 'in_flight' });
    expect(events.at(-1)).toBe('rollback');
  });

  it('timed_out: the transaction is abandoned (never committed), and handed the work to wait for', async () => {
    const { ledger, events, abandoned } = scripted();
    let finish!: () => void;
    const work = new Promise<void>((resolve) => (finish = resolve));
    expect(await ledger.run('k', () => work, { ...RUN, timeoutMs: 20 })).toEqual({ outcome: 'timed_out' });
    // Postgres is asked first which sessions wait on the run's locks (none here: no message).
    expect(events).toEqual(['begin', 'claim', 'whoWaits', 'abandon']);
    finish();
    await expect(abandoned[0]).resolves.toBeUndefined();
    expect(events).not.toContain('commit');
  });

  it('failed when the transaction was no longer open after the work (the done mark found no claim)', async () => {
    const { ledger, events } = scripted({ doneRows: 0 });
    const run = await ledger.run('k', () => undefined, RUN);
    expect(run).toMatchObject({ outcome: 'failed', error: expect.any(ConfigurationError) });
    expect(events).toEqual(['begin', 'claim', 'done', 'rollback']);
  });

  it('a client whose COMMIT reports a rollback needs no check of the claim: claim, work, COMMIT', async () => {
    const { client, events } = scripted();
    const ledger = new SqlLedger({ ...client, commitChecked: true }, { table: 't' });
    expect((await ledger.run('k', () => 'v', RUN)).outcome).toBe('processed');
    expect(events).toEqual(['begin', 'claim', 'commit']);
    const rolledBack = scripted({ fail: { commit: { code: '25P02' } } });
    const checked = new SqlLedger({ ...rolledBack.client, commitChecked: true }, { table: 't' });
    expect(await checked.run('k', () => 'v', RUN)).toMatchObject({ outcome: 'failed' });
  });

  it('failed when Postgres says the work left the transaction aborted (25P02)', async () => {
    const aborted = Object.assign(new Error('current transaction is aborted'), { code: '25P02' });
    const { ledger } = scripted({ fail: { done: aborted } });
    expect(await ledger.run('k', () => undefined, RUN)).toEqual({ outcome: 'failed', error: aborted });
  });

  it.each([
    ['begin', { code: 'ECONNREFUSED' }, 'unavailable'],
    ['begin', { code: 'SQLITE_BUSY' }, 'in_flight'],
    ['claim', { code: '55P03' }, 'in_flight'],
    ['claim', { code: 'ECONNRESET' }, 'unavailable'],
    ['readMark', { errno: 1205 }, 'in_flight', { claimed: 0 }],
    ['done', { code: 'ECONNRESET' }, 'unavailable'],
    ['lockMark', { errno: 1213 }, 'in_flight', { dialect: 'mysql' }],
    ['commit', { code: 'ECONNRESET' }, 'unavailable'],
    ['commit', { code: '40001' }, 'in_flight'],
  ] as const)('%s failing with %o: %s, never processed', async (at, error, outcome, script: Script = {}) => {
    const { ledger, events } = scripted({ ...script, fail: { [at]: error } });
    const run = await ledger.run('k', () => 'value', { ...RUN, raiseMark: true, order: ORDER });
    expect(run.outcome).toBe(outcome);
    if (at !== 'commit' && at !== 'begin') expect(events.at(-1)).toBe('rollback');
    expect(events.filter((event) => event === 'commit').length).toBeLessThanOrEqual(at === 'commit' ? 1 : 0);
  });

  it.each([
    ['completedTtlMs', { completedTtlMs: 0 }],
    ['completedTtlMs', { completedTtlMs: 2 ** 31 }],
    ['timeoutMs', { timeoutMs: 3e9 }],
    ['timeoutMs', { timeoutMs: 1.5 }],
  ])('refuses %s out of range before any SQL (%o)', async (field, options) => {
    const { ledger, events } = scripted();
    await expect(ledger.run('k', () => undefined, { ...RUN, ...options })).rejects.toMatchObject({
      name: 'ConfigurationError',
      field,
    });
    expect(events).toEqual([]);
  });
});

describe('new SqlLedger', () => {
  it.each([0, -1, 1.5, 2 ** 31, Number.NaN])('refuses lockTimeoutMs %s', (lockTimeoutMs) => {
    expect(() => new SqlLedger(scripted().client, { lockTimeoutMs })).toThrow(
      /lockTimeoutMs must be a whole number of milliseconds from 1 to 2147483647/,
    );
  });

  it('refuses what is not an adapter, naming the adapters', () => {
    // @ts-expect-error: a raw pool instead of fromPg(pool)
    expect(() => new SqlLedger({ connect() {} })).toThrow(
      /fromPg, fromPostgresJs, fromMysql2, fromKysely, fromDrizzle, fromPrisma or fromSqlite/,
    );
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => new SqlLedger(scripted().client, { table: 'ledger; DROP TABLE orders' })).toThrow(ConfigurationError);
  });
});

describe('schemaSql and prune', () => {
  it("gives the DDL of any dialect for a migration tool, on the ledger's table", () => {
    const { ledger } = scripted();
    expect(ledger.schemaSql()).toMatch(/^CREATE TABLE IF NOT EXISTS t \(/);
    expect(ledger.schemaSql('mysql')).toContain('utf8mb4_bin');
    expect(ledger.schemaSql('sqlite')).toContain('CREATE INDEX IF NOT EXISTS t_expires ON t');
    // @ts-expect-error: not a dialect
    expect(() => ledger.schemaSql('oracle')).toThrow(ConfigurationError);
  });
});
