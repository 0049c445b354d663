import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { secretFree, showsItself } from '../../../src/sql/secret-free.js';

class Summary {
  constructor(readonly id: number) {}
}

describe('secretFree: the target of a tx Proxy, shown by util.inspect without the connection', () => {
  const connection = { id: 4, config: { password: 'db-secret' }, query: () => 'sent' };
  const show = () => new Summary(connection.id);
  /** A tx Proxy as the adapters build it: its traps read the connection; logs read the summary. */
  const tx = new Proxy(secretFree(connection, show), { get: (_, key) => (showsItself(key) ? show : Reflect.get(connection, key)) });

  it('util.inspect (any depth, nested) and JSON show the summary, never the config', () => {
    expect([inspect(tx), inspect({ tx }, { depth: null }), JSON.stringify({ tx })]).toEqual(['Summary { id: 4 }', '{ tx: Summary { id: 4 } }', '{"tx":{"id":4}}']);
  });

  it('is the connection for everything else', () => {
    expect([tx.query(), tx.config.password, Object.keys(tx)]).toEqual(['sent', 'db-secret', ['id', 'config', 'query']]);
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
