import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { secretFree, showsItself } from '../../../../../src/sql/adapters/tx/secret-free.js';

class Summary {
  constructor(readonly id: number) {}
}

class Connection {
  id = 4;
  config = { password: 'db-secret' };
  query(): string {
    return 'sent';
  }
}

describe('secretFree: a tx Proxy that reaches the connection, shown by every log without it', () => {
  const connection = new Connection();
  Object.defineProperty(connection, 'fixed', { value: 1, enumerable: true, configurable: false });
  const show = () => new Summary(connection.id);
  /** A tx Proxy as the adapters build it: its get trap reads the connection; logs read the summary. */
  const tx = secretFree(connection, show, {
    get: (_, key) => (showsItself(key) ? show : Reflect.get(connection, key)),
  });

  it('util.inspect (any depth, nested) and JSON show the summary, never the config', () => {
    expect([inspect(tx), inspect({ tx }, { depth: null }), JSON.stringify({ tx })]).toEqual([
      'Summary { id: 4 }',
      '{ tx: Summary { id: 4 } }',
      '{"tx":{"id":4}}',
    ]);
  });

  it("console.log('%o', tx), showProxy and customInspect: false show nothing of the connection either", () => {
    for (const shown of [
      format('%o', tx),
      inspect(tx, { showProxy: true, depth: Infinity }),
      inspect(tx, { customInspect: false, showHidden: true, depth: Infinity }),
    ]) {
      expect(shown).not.toContain('db-secret');
    }
  });

  it('is the connection for everything else: methods, keys, instanceof, writes, a property it cannot reconfigure', () => {
    expect([tx.query(), tx.config.password, Object.keys(tx), tx instanceof Connection, 'query' in tx]).toEqual([
      'sent',
      'db-secret',
      ['id', 'config', 'fixed'],
      true,
      true,
    ]);
    tx.id = 5;
    expect(connection.id).toBe(5);
    expect(Object.getOwnPropertyDescriptor(tx, 'fixed')?.value).toBe(1);
  });

  it.each([
    ['toJSON', true],
    [Symbol.for('nodejs.util.inspect.custom'), true],
    ['query', false],
    ['config', false],
  ])('showsItself(%s) is %s', (key, shows) => {
    expect(showsItself(key)).toBe(shows);
  });
});
