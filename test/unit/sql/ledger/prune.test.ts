/**
 * The ledger's upkeep (src/sql/ledger/prune.ts) over a scripted client: `prune` deletes in
 * batches, and a batch that met the claims beside it is tried again. The same on real databases:
 * test/integration/sql/<driver>/scenarios.test.ts and test/integration/sql/prune-race.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import type { SqlClient } from '../../../../src/sql/sql-client.js';
import { SqlLedger } from '../../../../src/sql/index.js';

/**
 * A client whose every statement is a batch of `prune`: `deleteBatch` answers the rows it deleted,
 * or throws; `events` records the deletes, COMMITs and ROLLBACKs in order.
 */
function scripted(dialect: 'sqlite' | 'mysql', deleteBatch: () => number) {
  const events: string[] = [];
  const client: SqlClient<null> = {
    dialect,
    async begin() {
      return {
        tx: null,
        async query() {
          const affected = deleteBatch();
          events.push('delete');
          return { rows: [], affected };
        },
        async commit() {
          events.push('commit');
        },
        async rollback() {
          events.push('rollback');
        },
        abandon() {},
      };
    },
  };
  return { events, ledger: new SqlLedger(client) };
}

describe('prune', () => {
  it('prunes in batches until a batch is not full', async () => {
    const deleted = [3, 3, 1];
    const { events, ledger } = scripted('sqlite', () => deleted.shift() ?? 0);
    expect(await ledger.prune({ batchSize: 3 })).toBe(7);
    expect(events).toEqual(['delete', 'commit', 'delete', 'commit', 'delete', 'commit']);
    await expect(ledger.prune({ batchSize: 0 })).rejects.toThrow(ConfigurationError);
  });

  // A batch meets the claims running beside it (MySQL reports a deadlock, Postgres a lock
  // timeout): rolled back, it deleted nothing, so it is simply tried again.
  it('tries a batch again when it met a deadlock or a lock wait, and gives up after three tries or on any other error', async () => {
    const pruning = (failures: object[]) =>
      scripted('mysql', () => {
        const failure = failures.shift();
        if (failure !== undefined) throw Object.assign(new Error('prune failed'), failure);
        return 2;
      });
    const deadlocked = pruning([{ errno: 1213 }, { code: '55P03' }]);
    expect(await deadlocked.ledger.prune({ batchSize: 3 })).toBe(2);
    expect(deadlocked.events).toEqual(['rollback', 'rollback', 'delete', 'commit']);
    await expect(pruning([{ errno: 1213 }, { errno: 1213 }, { errno: 1213 }]).ledger.prune()).rejects.toMatchObject({
      errno: 1213,
    });
    const broken = pruning([{ code: 'ECONNRESET' }]);
    await expect(broken.ledger.prune()).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(broken.events).toEqual(['rollback']);
  });
});
