import { describe, expect, it } from 'vitest';
import { COLUMNS as MYSQL } from '../../../src/sql/dialects/mysql/ledger-schema.js';
import { COLUMNS as POSTGRES } from '../../../src/sql/dialects/postgres/ledger-schema.js';
import { columnDifferences, definitionOf, type DescribedColumn } from '../../../src/sql/schema-check.js';

/** The table as the database describes it when the ledger made it (Postgres's words). */
const made: DescribedColumn[] = [
  { name: 'ledger_key', type: 'character varying', not_null: true, primary_key: true, collation: null },
  { name: 'mark_rank', type: 'smallint', not_null: false, primary_key: false, collation: null },
  { name: 'handled_statuses', type: 'smallint', not_null: true, primary_key: false, collation: null },
  { name: 'expires_at', type: 'bigint', not_null: true, primary_key: false, collation: null },
  { name: 'claim_id', type: 'bigint', not_null: false, primary_key: false, collation: null },
];
const changed = (name: string, change: Partial<DescribedColumn>) =>
  made.map((column) => (column.name === name ? { ...column, ...change } : column));

describe('columnDifferences: is it the table the ledger needs', () => {
  it.each([
    ['the table the ledger made', made, []],
    [
      'a column of its own added by the merchant',
      [...made, { name: 'note', type: 'text', not_null: 0, primary_key: 0, collation: null }],
      [],
    ],
    ['a wider integer for a small one (Prisma Int)', changed('mark_rank', { type: 'integer' }), []],
    [
      'names in capitals, flags as 1 and 0 (MySQL)',
      made.map((column) => ({
        ...column,
        name: String(column.name).toUpperCase(),
        not_null: column.not_null ? 1 : 0,
        primary_key: column.primary_key ? 1 : 0,
      })),
      [],
    ],
    [
      'handled_statuses missing',
      made.filter((column) => column.name !== 'handled_statuses'),
      ['handled_statuses is missing'],
    ],
    [
      'claim_id an INT (a 53-bit id does not fit)',
      changed('claim_id', { type: 'integer' }),
      ['claim_id is integer, not bigint'],
    ],
    ['expires_at nullable', changed('expires_at', { not_null: false }), ['expires_at allows NULL']],
    [
      'the key not the primary key',
      changed('ledger_key', { primary_key: false }),
      ['ledger_key is not the primary key'],
    ],
  ] as const)('%s', (_title, described, problems) => {
    expect(columnDifferences(POSTGRES, described).map(({ column, problem }) => `${column.name} ${problem}`)).toEqual(
      problems,
    );
  });

  it.each([
    ['utf8mb4_bin', []],
    ['binary', []],
    [
      'utf8mb4_general_ci',
      [
        'ledger_key compares with the collation utf8mb4_general_ci, which makes keys that differ by case or accent one (it needs a _bin collation)',
      ],
    ],
    [
      'utf8mb4_unicode_520_ci',
      [
        'ledger_key compares with the collation utf8mb4_unicode_520_ci, which makes keys that differ by case or accent one (it needs a _bin collation)',
      ],
    ],
  ])('MySQL: a key compared with %s', (collation, problems) => {
    const described = changed('ledger_key', { type: 'varchar', collation }).map((column) =>
      column.name === 'ledger_key' ? column : { ...column, type: column.type === 'bigint' ? 'bigint' : 'smallint' },
    );
    expect(columnDifferences(MYSQL, described).map(({ column, problem }) => `${column.name} ${problem}`)).toEqual(
      problems,
    );
  });

  it('writes each definition the way CREATE TABLE does', () => {
    expect(POSTGRES.map((column) => definitionOf(column))).toEqual([
      'VARCHAR(255) PRIMARY KEY',
      'SMALLINT',
      'SMALLINT NOT NULL DEFAULT 0',
      'BIGINT NOT NULL',
      'BIGINT',
    ]);
    expect(definitionOf(MYSQL[0] ?? POSTGRES[0]!, false)).toBe(
      'VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL',
    );
  });
});
