/**
 * src/sql/payouts/session-of-tx.ts: a `tx` names its open session from BEGIN until COMMIT,
 * ROLLBACK or abandon, and no longer; the session driven is the one that was opened.
 */
import { describe, expect, it } from 'vitest';
import type { SqlSession } from '../../../../src/sql/sql-client.js';
import { sessionOf, tracked } from '../../../../src/sql/payouts/session-of-tx.js';

function fakeSession<Tx>(tx: Tx) {
  const calls: string[] = [];
  const session: SqlSession<Tx> = {
    tx,
    query: async (text) => (calls.push(`query ${text}`), { rows: [], affected: 1 }),
    commit: async () => void calls.push('commit'),
    rollback: async () => void calls.push('rollback'),
    abandon: () => void calls.push('abandon'),
  };
  return { session, calls };
}

describe('tracked and sessionOf', () => {
  it.each(['commit', 'rollback', 'abandon'] as const)(
    'knows the tx while the session is open, forgets it at %s',
    async (end) => {
      const tx = { name: 'tx' };
      const { session, calls } = fakeSession(tx);
      const driven = tracked(session);
      expect(driven.tx).toBe(tx);
      expect(sessionOf(tx)).toBe(driven);
      await sessionOf(tx)?.query('SELECT 1', []);
      if (end === 'commit') await driven.commit(undefined);
      else if (end === 'rollback') await driven.rollback();
      else driven.abandon(Promise.resolve());
      expect(sessionOf(tx)).toBeUndefined();
      expect(calls).toEqual(['query SELECT 1', end]);
    },
  );

  it('a tx handed out again (SQLite: the database itself) names the newest open session; the old one ending does not forget it', async () => {
    const db = { name: 'database' };
    const first = tracked(fakeSession(db).session);
    await first.commit(undefined);
    const second = tracked(fakeSession(db).session);
    await first.rollback();
    expect(sessionOf(db)).toBe(second);
  });

  it('knows nothing of a value that is not an object, nor of an object no session handed out', () => {
    const { session } = fakeSession('text');
    expect(tracked(session)).toBe(session);
    expect(sessionOf('text')).toBeUndefined();
    expect(sessionOf({})).toBeUndefined();
    expect(sessionOf(null)).toBeUndefined();
  });
});
