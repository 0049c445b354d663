import { describe, expect, it } from 'vitest';
import { COLUMNS as MYSQL } from '../../../src/sql/dialects/mysql/ledger-schema.js';
import { COLUMNS as POSTGRES } from '../../../src/sql/dialects/postgres/ledger-schema.js';
import { PAYOUT_COLUMNS as PG_PAYOUTS } from '../../../src/sql/dialects/postgres/payout-statements.js';
import { PAYOUT_COLUMNS as MYSQL_PAYOUTS } from '../../../src/sql/dialects/mysql/payout-statements.js';
import { columnDifferences, definitionOf, type DescribedColumn } from '../../../src/sql/schema-check.js';

/** The table as the database describes it when the ledger made it (Postgres's words). */
const made: DescribedColumn[] = [
  { name: 'ledger_key', type: 'character varying', not_null: true, primary_key: true, collation: null, exact: true },
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
    [
      'a primary key of the key and its expiry (ON CONFLICT (ledger_key) then has no constraint)',
      changed('expires_at', { primary_key: true }),
      ['ledger_key is not the whole primary key: it is (ledger_key, expires_at), not (ledger_key)'],
    ],
    [
      'a primary key of a column of its own',
      [...changed('ledger_key', { primary_key: false }), { name: 'id', type: 'bigint', not_null: 1, primary_key: 1 }],
      ['ledger_key is not the primary key: it is (id), not (ledger_key)'],
    ],
    ['a key of text (no length)', changed('ledger_key', { type: 'text', length: null }), []],
    [
      'a key of VARCHAR(32): too short for the longest key the ledger writes',
      changed('ledger_key', { length: 32 }),
      ['ledger_key holds 32 characters, fewer than the 255 written into it'],
    ],
    [
      'a key whose collation ignores case (a non-deterministic ICU collation)',
      changed('ledger_key', { collation: 'case_blind', exact: false }),
      [
        'ledger_key compares with the collation case_blind, which makes keys that differ by case or accent one (it needs a deterministic collation, such as the database default)',
      ],
    ],
  ] as const)('%s', (_title, described, problems) => {
    expect(columnDifferences(POSTGRES, described).map(({ column, problem }) => `${column.name} ${problem}`)).toEqual(
      problems,
    );
  });

  it.each([
    ['utf8mb4_bin', []],
    ['utf8mb4_0900_bin', []],
    [
      'binary',
      [
        'ledger_key compares with the collation binary: it needs utf8mb4 compared byte for byte (utf8mb4_bin), or keys that differ by case or accent become one, and characters outside its set are stored as ?',
      ],
    ],
    [
      'latin1_bin',
      [
        'ledger_key compares with the collation latin1_bin: it needs utf8mb4 compared byte for byte (utf8mb4_bin), or keys that differ by case or accent become one, and characters outside its set are stored as ?',
      ],
    ],
    [
      'utf8mb4_general_ci',
      [
        'ledger_key compares with the collation utf8mb4_general_ci: it needs utf8mb4 compared byte for byte (utf8mb4_bin), or keys that differ by case or accent become one, and characters outside its set are stored as ?',
      ],
    ],
    [
      'utf8mb4_unicode_520_ci',
      [
        'ledger_key compares with the collation utf8mb4_unicode_520_ci: it needs utf8mb4 compared byte for byte (utf8mb4_bin), or keys that differ by case or accent become one, and characters outside its set are stored as ?',
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

/** The payouts table as Postgres describes it when `schemaSql` made it. */
const payoutsMade: DescribedColumn[] = [
  { name: 'reference_id', type: 'character varying', length: 100, not_null: true, primary_key: true, exact: true },
  { name: 'state', type: 'character varying', length: 16, not_null: true, primary_key: false },
  { name: 'params', type: 'text', length: null, not_null: true, primary_key: false },
  { name: 'amount', type: 'character varying', length: 32, not_null: true, primary_key: false },
  { name: 'attempts', type: 'integer', length: null, not_null: true, primary_key: false },
  { name: 'payment_id', type: 'character varying', length: 128, not_null: false, primary_key: false },
  { name: 'last_error', type: 'character varying', length: 500, not_null: false, primary_key: false },
  { name: 'refusal', type: 'text', length: null, not_null: false, primary_key: false },
  ...['claim_id', 'due_at', 'staged_at', 'sent_at', 'settled_at', 'requested_at'].map((name) => ({
    name,
    type: 'bigint',
    length: null,
    not_null: name === 'due_at' || name === 'staged_at',
    primary_key: false,
  })),
];
const payoutsChanged = (name: string, change: Partial<DescribedColumn>) =>
  payoutsMade.map((column) => (column.name === name ? { ...column, ...change } : column));

describe('columnDifferences: a text column holds what is written into it (the payout outbox)', () => {
  it.each([
    ['the table schemaSql made', payoutsMade, []],
    ['a state wide enough for the longest state (succeeded)', payoutsChanged('state', { length: 9 }), []],
    ['params as an unbounded varchar', payoutsChanged('params', { type: 'character varying', length: null }), []],
    [
      'a reference_id shorter than the service accepts',
      payoutsChanged('reference_id', { length: 64 }),
      ['reference_id holds 64 characters, fewer than the 100 written into it'],
    ],
    [
      'a state too short for succeeded',
      payoutsChanged('state', { length: 8 }),
      ['state holds 8 characters, fewer than the 9 written into it'],
    ],
    [
      'a last_error shorter than 500',
      payoutsChanged('last_error', { length: 255 }),
      ['last_error holds 255 characters, fewer than the 500 written into it'],
    ],
    [
      'params in a bounded varchar',
      payoutsChanged('params', { type: 'character varying', length: 4000 }),
      ['params holds 4000 characters, and what is written into it has no such bound'],
    ],
    [
      'a claim_id that cannot hold a 53-bit id, a due_at that cannot hold ms since the epoch',
      payoutsChanged('claim_id', { type: 'integer' }).map((column) =>
        column.name === 'due_at' ? { ...column, type: 'integer' } : column,
      ),
      ['claim_id is integer, not bigint', 'due_at is integer, not bigint'],
    ],
    ['refusal missing', payoutsMade.filter((column) => column.name !== 'refusal'), ['refusal is missing']],
  ] as const)('%s', (_title, described, problems) => {
    expect(columnDifferences(PG_PAYOUTS, described).map(({ column, problem }) => `${column.name} ${problem}`)).toEqual(
      problems,
    );
  });

  it('MySQL: params in TEXT (64 KiB) passes with no length of its own; in a VARCHAR it is refused by type', () => {
    const described = (params: DescribedColumn) =>
      MYSQL_PAYOUTS.map((column) =>
        column.name === 'params'
          ? params
          : {
              name: column.name,
              type: column.types[0],
              length: column.chars ?? null,
              not_null: column.notNull || column.primaryKey ? 1 : 0,
              primary_key: column.primaryKey ? 1 : 0,
              collation: column.binary ? 'utf8mb4_bin' : null,
            },
      );
    const text = { name: 'params', type: 'text', length: 65535, not_null: 1, primary_key: 0 };
    expect(columnDifferences(MYSQL_PAYOUTS, described(text))).toEqual([]);
    expect(
      columnDifferences(MYSQL_PAYOUTS, described({ ...text, type: 'varchar', length: 65535 })).map(
        ({ problem }) => problem,
      ),
    ).toEqual(['is varchar, not text or mediumtext or longtext']);
  });
});
