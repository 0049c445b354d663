import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../../../src/index.js';
import { fromSqlite, SqlLedger } from '../../../../../src/sql/index.js';

afterEach(() => vi.restoreAllMocks());

describe('fromSqlite', () => {
  it('on a runtime without node:sqlite: a ConfigurationError that names the Node version that has it', () => {
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined);
    expect(() => fromSqlite('/tmp/never-created.db')).toThrow(ConfigurationError);
    expect(() => fromSqlite('/tmp/never-created.db')).toThrow(/Node 22\.13 or later/);
  });

  it('refuses an empty path (a temporary database forgets on restart) and what is not a database', () => {
    expect(() => fromSqlite('')).toThrow(/empty path/);
    // @ts-expect-error: not a DatabaseSync
    expect(() => fromSqlite({ run() {} })).toThrow(/file path or a node:sqlite DatabaseSync/);
  });

  it('runs on a DatabaseSync the merchant opened, its handle given as tx', async () => {
    const db = new DatabaseSync(':memory:');
    const ledger = new SqlLedger(fromSqlite(db));
    await ledger.ensureSchema();
    const run = await ledger.run('k', (tx) => tx === db, { raiseMark: false, completedTtlMs: 1000 });
    expect(run).toEqual({ outcome: 'processed', value: true });
    db.close();
  });

  it('one connection runs one transaction at a time: a second run waits lockTimeoutMs, then is in_flight without running', async () => {
    const db = new DatabaseSync(':memory:');
    const ledger = new SqlLedger(fromSqlite(db), { lockTimeoutMs: 50 });
    await ledger.ensureSchema();
    let release!: () => void;
    const first = ledger.run('a', () => new Promise<void>((resolve) => (release = resolve)), { raiseMark: false, completedTtlMs: 1000 });
    let ran = false;
    const second = await ledger.run('b', () => void (ran = true), { raiseMark: false, completedTtlMs: 1000 });
    release();
    expect(second).toEqual({ outcome: 'in_flight' });
    expect(ran).toBe(false);
    expect((await first).outcome).toBe('processed');
    expect((await ledger.run('b', () => 'now', { raiseMark: false, completedTtlMs: 1000 })).outcome).toBe('processed');
    db.close();
  });

  it('a timed-out run is rolled back when its work settles, and the connection is free again', async () => {
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE orders (id TEXT)');
    const ledger = new SqlLedger(fromSqlite(db), { lockTimeoutMs: 2000 });
    await ledger.ensureSchema();
    let finish!: () => void;
    const timedOut = await ledger.run(
      'k',
      async (tx) => {
        tx.prepare("INSERT INTO orders VALUES ('o1')").run();
        await new Promise<void>((resolve) => (finish = resolve));
      },
      { raiseMark: false, completedTtlMs: 1000, timeoutMs: 20 },
    );
    expect(timedOut).toEqual({ outcome: 'timed_out' });
    const retry = ledger.run('k', (tx) => void tx.prepare("INSERT INTO orders VALUES ('o1')").run(), { raiseMark: false, completedTtlMs: 1000 });
    finish();
    expect((await retry).outcome).toBe('processed');
    expect(db.prepare('SELECT count(*) AS n FROM orders').get()).toEqual({ n: 1 });
    db.close();
  });
});
