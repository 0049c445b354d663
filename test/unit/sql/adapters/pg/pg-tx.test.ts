import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { guardedTx } from '../../../../../src/sql/adapters/pg/pg-tx.js';
import { usedAfterRun } from '../../../../../src/sql/sql-client.js';

/** A node-postgres client as the work's `tx` wraps it: node-postgres keeps the password as a hidden property. */
function client() {
  const sent: string[] = [];
  const target = {
    processID: 4242,
    connection: { stream: {} },
    async query(text: string) {
      sent.push(text);
      return { rows: [], rowCount: 0, command: text.split(' ')[0] ?? '' };
    },
    release: () => void sent.push('released'),
    escapeLiteral: (value: string) => `'${value}'`,
  };
  Object.defineProperty(target, 'password', { value: 'db-secret', enumerable: false });
  return { target, sent };
}

describe("guardedTx: the work's node-postgres tx", () => {
  it('sends plain statements and needs no check after they are answered; anything else underneath needs it', async () => {
    const { target, sent } = client();
    const work = guardedTx(target, () => undefined);
    await work.tx.query('UPDATE orders SET paid = true');
    expect([work.tx.escapeLiteral('a'), work.mayHaveEnded()]).toEqual(["'a'", false]);
    expect(work.tx.connection).toBe(target.connection);
    expect(work.mayHaveEnded()).toBe(true);
    expect(sent).toEqual(['UPDATE orders SET paid = true']);
  });

  it('refuses a query after the run and never lets the work release the client', async () => {
    const { target, sent } = client();
    let ended = false;
    const work = guardedTx(target, () => (ended ? usedAfterRun() : undefined));
    work.tx.release();
    ended = true;
    await expect(work.tx.query('UPDATE orders SET paid = true')).rejects.toThrow(/after its run had ended/);
    expect(sent).toEqual([]);
  });

  it('shows which session it is in util.inspect (hidden properties too) and JSON, never the password, without counting as a reach underneath', () => {
    const work = guardedTx(client().target, () => undefined);
    expect([inspect(work.tx, { showHidden: true, depth: null }), JSON.stringify({ tx: work.tx })]).toEqual([
      'PgTx { processID: 4242 }',
      '{"tx":{"processID":4242}}',
    ]);
    expect(work.mayHaveEnded()).toBe(false);
  });
});
