/**
 * One check of a dialect's payout statements (src/sql/dialects/<dialect>/payout-statements.ts):
 * each statement names the table, and binds exactly as many values as it has placeholders, in
 * the order its text reads them. Run against the real databases by test/integration/payouts-*.test.ts.
 */
import { expect } from 'vitest';
import type { PayoutStatements } from '../../src/sql/payouts/statement-shape.js';
import { definitionOf } from '../../src/sql/schema-check.js';

const TABLE = 'shop.myr_payouts';

/** Every statement with sample values whose params are told apart (each value once). */
const samples = (sql: PayoutStatements) =>
  ({
    stage: [sql.stage, { referenceId: 'R1', params: '{"p":1}', amount: '250.00', now: 11 }],
    due: [sql.due, { now: 12, limit: 13 }],
    claim: [sql.claim, { referenceId: 'R2', state: 'sending', claimId: 14, until: 15, attempt: 1, requestedAt: 20 }],
    paceLock: [sql.paceLock, {}],
    recent: [sql.recent, { since: 21 }],
    release: [
      sql.release,
      {
        referenceId: 'R3',
        claimId: 16,
        state: 'sent',
        dueAt: 17,
        paymentId: 'WD_1',
        lastError: 'E',
        refusal: '{"r":1}',
        now: 18,
        answeredAt: 22,
      },
    ],
    settle: [sql.settle, { referenceId: 'R4', state: 'failed', paymentId: 'WD_2', now: 19 }],
    lock: [sql.lock, { referenceId: 'R5' }],
    read: [sql.read, { referenceId: 'R6' }],
  }) as const;

/** The placeholders of `text` in the dialect's spelling: `$n` (Postgres), `?n` or `?` (SQLite, MySQL). */
function placeholders(text: string): number {
  const numbered = [...text.matchAll(/[$?](\d+)/g)].map((match) => Number(match[1]));
  if (numbered.length > 0) return Math.max(...numbered);
  return (text.match(/\?/g) ?? []).length;
}

/** Checks every statement of `sql`: the table is named, and the parameters fit the placeholders. */
export function checkPayoutStatements(sql: PayoutStatements): void {
  for (const [name, [statement, values]] of Object.entries(samples(sql))) {
    const text = statement.text(TABLE);
    const params = (statement.params as (values: unknown) => readonly unknown[])(values);
    expect(text, name).toContain(TABLE);
    expect(params.length, name).toBe(placeholders(text));
    // Every value the statement is given is bound (the params name no value twice by mistake, nor leave one out).
    for (const value of Object.values(values)) expect(params, `${name}: ${String(value)}`).toContain(value);
  }
  const ddl = sql.schema(TABLE, 'myr_payouts').join(';');
  expect(ddl).toContain(TABLE);
  // ensureSchema checks the tables the DDL makes, each with every column the DDL gives it.
  const tables = sql.tables(TABLE, 'myr_payouts');
  expect(tables.map((table) => table.name)).toEqual([TABLE, `${TABLE}_pace`]);
  for (const table of tables) {
    const created = ddl
      .split(';')
      .find((statement) => statement.startsWith(`CREATE TABLE IF NOT EXISTS ${table.name} (`));
    for (const column of table.columns) expect(created, table.name).toContain(`${column.name} ${definitionOf(column)}`);
  }
}
