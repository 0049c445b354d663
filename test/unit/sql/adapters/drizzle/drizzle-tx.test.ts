import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { guardedDrizzleTx } from '../../../../../src/sql/adapters/drizzle/drizzle-tx.js';

/** A Drizzle transaction as the guard reads it: its session's client is the checked-out connection. */
function fakeTx() {
  const sent: string[] = [];
  const client = {
    config: { password: 'db-secret' },
    query: async (text: string) => void sent.push(`query ${text}`),
    execute: async (text: string) => void sent.push(`execute ${text}`),
    release: () => void sent.push('release'),
  };
  const session = {
    client,
    async run(text: string) {
      await this.client.query(text);
    },
  };
  return { tx: { session, insert: () => 'builder' }, sent };
}

describe('guardedDrizzleTx', () => {
  it("passes statements to the connection while the run is open, through whatever of Drizzle's reads session.client", async () => {
    const { tx, sent } = fakeTx();
    const guarded = guardedDrizzleTx(tx, () => false);
    await guarded.session.run('INSERT 1');
    await guarded.session.client.execute('INSERT 2');
    expect(guarded.insert()).toBe('builder');
    expect(sent).toEqual(['query INSERT 1', 'execute INSERT 2']);
  });

  it('refuses query and execute once the run has ended (nothing is sent), and leaves the rest alone', async () => {
    const { tx, sent } = fakeTx();
    let ended = false;
    const guarded = guardedDrizzleTx(tx, () => ended);
    ended = true;
    await expect(guarded.session.run('INSERT 1')).rejects.toThrow(/after its run had ended/);
    await expect(guarded.session.client.execute('INSERT 2')).rejects.toThrow(/after its run had ended/);
    guarded.session.client.release();
    expect(sent).toEqual(['release']);
  });

  it('shows nothing of the session underneath in util.inspect or JSON (its client holds the password in its config)', () => {
    const guarded = guardedDrizzleTx(fakeTx().tx, () => false);
    expect([inspect(guarded, { depth: null }), JSON.stringify({ tx: guarded })]).toEqual(['DrizzleTx {}', '{"tx":{}}']);
    expect(guarded.session.client.config.password).toBe('db-secret');
  });
});
