import { describe, expect, it } from 'vitest';
import { boundLockWaits, heldTransaction, type RawQuery } from '../../../../src/sql/adapters/orm-transaction.js';

/** A raw query that records what it was sent, and refuses the statements listed in `refuse`. */
function recorder(refuse: readonly string[] = []) {
  const sent: string[] = [];
  const query: RawQuery = async (text) => {
    sent.push(text);
    if (refuse.some((start) => text.startsWith(start))) throw new Error(`refused: ${text}`);
    return { rows: [], affected: 0 };
  };
  return { sent, query };
}

/** An ORM whose transaction is a callback (Drizzle's `transaction`, Prisma's `$transaction`): COMMIT when it resolves, ROLLBACK when it throws. */
function callbackOrm(commitError?: Error) {
  const ended: string[] = [];
  const open = async (body: (raw: string) => Promise<void>) => {
    try {
      await body('the ORM transaction');
    } catch (error) {
      ended.push('ROLLBACK');
      throw error;
    }
    ended.push('COMMIT');
    if (commitError) throw commitError;
  };
  return { ended, open };
}

describe('boundLockWaits', () => {
  it('Postgres: SET LOCAL, which ends with the transaction (nothing to restore)', async () => {
    const { sent, query } = recorder();
    expect(await boundLockWaits('postgres', query, 1500)).toBeUndefined();
    expect(sent).toEqual(['SET LOCAL lock_timeout = 1500']);
  });

  it('MySQL: the lock wait in whole seconds (rounded up) and autocommit off; a commit restores both, a rollback rolls back before restoring even when ROLLBACK fails', async () => {
    const committed = recorder();
    const end = await boundLockWaits('mysql', committed.query, 1001);
    await end?.(true);
    expect(committed.sent).toEqual([
      'SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, SESSION innodb_lock_wait_timeout = 2, SESSION autocommit = 0',
      'SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac',
    ]);
    const rolledBack = recorder(['ROLLBACK']);
    await (
      await boundLockWaits('mysql', rolledBack.query, 1000)
    )?.(false);
    expect(rolledBack.sent.slice(1)).toEqual([
      'ROLLBACK',
      'SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac',
    ]);
  });

  it('MySQL: a restore that fails at commit (turning autocommit back on commits) rejects the commit', async () => {
    const { query } = recorder(['SET SESSION']);
    const end = await boundLockWaits('mysql', query, 1000);
    await expect(end?.(true)).rejects.toThrow(/refused: SET SESSION/);
  });
});

describe('heldTransaction', () => {
  it('hands out the session inside the ORM transaction once its lock waits are bounded, and commits only when told', async () => {
    const { ended, open } = callbackOrm();
    const { sent, query } = recorder();
    let isEnded!: () => boolean;
    const session = await heldTransaction(
      'postgres',
      1000,
      open,
      (raw: string, ended) => ((isEnded = ended), { tx: `tx of ${raw}`, query }),
    );
    expect(session.tx).toBe('tx of the ORM transaction');
    expect(sent).toEqual(['SET LOCAL lock_timeout = 1000']);
    expect([ended, isEnded()]).toEqual([[], false]);
    await session.commit(undefined);
    expect([ended, isEnded()]).toEqual([['COMMIT'], true]);
  });

  it("a COMMIT the ORM refuses (a deferred constraint broken at COMMIT) rejects commit with the ORM's error", async () => {
    const refused = Object.assign(new Error('violates foreign key constraint'), { code: '23503' });
    const { open } = callbackOrm(refused);
    const session = await heldTransaction('postgres', 1000, open, () => ({ tx: undefined, query: recorder().query }));
    await expect(session.commit(undefined)).rejects.toBe(refused);
  });

  it('a rollback makes the ORM roll back and never rejects; stop is called once the transaction is over', async () => {
    const { ended, open } = callbackOrm();
    let stopped = 0;
    const session = await heldTransaction('postgres', 1000, open, () => ({
      tx: undefined,
      query: recorder().query,
      stop: () => void stopped++,
    }));
    await session.rollback();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect([ended, stopped]).toEqual([['ROLLBACK'], 1]);
  });

  it('a lock bound the database refuses, or a transaction the ORM cannot open, rejects begin (no session, nothing runs)', async () => {
    const { ended, open } = callbackOrm();
    await expect(
      heldTransaction('postgres', 1000, open, () => ({ tx: undefined, query: recorder(['SET LOCAL']).query })),
    ).rejects.toThrow(/refused: SET LOCAL/);
    expect(ended).toEqual(['ROLLBACK']);
    await expect(
      heldTransaction(
        'postgres',
        1000,
        () => Promise.reject(new Error('pool timeout')),
        () => ({ tx: undefined, query: recorder().query }),
      ),
    ).rejects.toThrow('pool timeout');
  });
});
