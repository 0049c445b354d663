import { describe, expect, it } from 'vitest';
import { keepsTransaction } from '../../../../../src/sql/adapters/tx/plain-statement.js';

describe('keepsTransaction: the statements after which COMMIT need not check the claim', () => {
  it.each([
    ['UPDATE orders SET paid = 1 WHERE id = ?', true],
    ['  insert into fulfilments (payment_id) values (?)', true],
    ['INSERT INTO outbox (body) SELECT ? FROM DUAL', true],
    ['SELECT paid FROM orders WHERE id = ? FOR UPDATE;', true],
    ['DELETE FROM holds WHERE id = ?', true],
    ['REPLACE INTO cache VALUES (?, ?)', true],
    ['WITH o AS (SELECT 1) SELECT * FROM o', true],
    [{ sql: 'UPDATE orders SET paid = 1', timeout: 1000 }, true],
    [{ text: 'UPDATE orders SET paid = $1', values: [1] }, true],
    [{ name: 'paid', text: 'ROLLBACK' }, false],
    // What may end the transaction, or run what does:
    ['COMMIT', false],
    ['ROLLBACK', false],
    ['START TRANSACTION', false],
    ['BEGIN', false],
    ['SAVEPOINT a', false],
    ['SET autocommit = 1', false],
    ['CALL settle_order(?)', false],
    ['CREATE TABLE t (a INT)', false],
    ['TRUNCATE orders', false],
    ['LOCK TABLES orders WRITE', false],
    ['DO RELEASE_ALL_LOCKS()', false],
    ['UPDATE orders SET paid = 1; COMMIT', false],
    ["UPDATE orders SET note = 'a;b'", false],
    ['/* tagged */ UPDATE orders SET paid = 1', false],
    ['UPDATEorders', false],
    [{ values: [1] }, false],
    [undefined, false],
    [42, false],
  ])('%j → %s', (statement, keeps) => {
    expect(keepsTransaction(statement)).toBe(keeps);
  });
});
