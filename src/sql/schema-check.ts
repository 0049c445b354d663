/**
 * Whether a table, as the database describes it, is the table the ledger (or the payout outbox)
 * needs: every column there, of a type that holds what is written into it, NOT NULL where it must
 * be and nullable where NULL is written, the key a primary key (and on MySQL compared byte for byte). A pure comparison:
 * `ensureSchema` reads the description and refuses a table that differs, naming what differs and
 * the statement that fixes it.
 *
 * @module
 */

/** One column a table needs, as a dialect writes and accepts it. */
export interface TableColumn {
  readonly name: string;
  /** Its type in the dialect's DDL. */
  readonly type: string;
  /** The type names (lower case, as the database describes them) that hold what is written into it. */
  readonly types: readonly string[];
  /** Its default, in the dialect's DDL. */
  readonly default?: string | undefined;
  /** Whether it must be NOT NULL (the DDL writes it so). */
  readonly notNull: boolean;
  /** Written NOT NULL, but a column that allows NULL passes the check: nothing writes NULL there. */
  readonly nullTolerated?: boolean | undefined;
  /** Whether it is the primary key. */
  readonly primaryKey?: boolean | undefined;
  /** Its character set and collation, when they must compare bytes (MySQL: `…_bin`), so keys that differ by case or accent stay apart. */
  readonly binary?: string | undefined;
  /**
   * The collation it needs, named in a refusal, when the description's `exact` must be true: a
   * collation that tells every two different strings apart (Postgres: deterministic; SQLite:
   * BINARY), so keys that differ by case or accent stay apart.
   */
  readonly exact?: string | undefined;
  /**
   * The most characters written into it (`Infinity`: text of any length): a column declared
   * shorter would refuse or cut what is written. Unset: its types alone say it holds what is written.
   */
  readonly chars?: number | undefined;
}

/** A column's definition in DDL: type, collation, NOT NULL, default, primary key (`withKey`). */
export function definitionOf(column: TableColumn, withKey = true): string {
  const parts = [
    column.type,
    column.binary,
    column.notNull && 'NOT NULL',
    column.default !== undefined && `DEFAULT ${column.default}`,
    withKey && column.primaryKey && 'PRIMARY KEY',
  ];
  return parts.filter((part): part is string => typeof part === 'string' && part !== '').join(' ');
}

/**
 * One column as the database describes it: each dialect's `describe` answers `name`, `type`,
 * `not_null`, `primary_key` (whether it is in the primary key), `collation` (flags as booleans,
 * 1/0 or 't'/'f') and `length`, the characters its type holds (null: any number, or not text);
 * Postgres and SQLite also `exact`, whether the collation tells every two different strings
 * apart; Postgres also `key_name`, its primary key constraint's name.
 */
export type DescribedColumn = Readonly<Record<string, unknown>>;

/** What may differ in a column, each fixed by its own clause. */
export type DifferenceKind = 'type' | 'null' | 'key' | 'collation';

/** What differs in one column, and what the fix needs to know. */
export interface ColumnDifference {
  readonly column: TableColumn;
  readonly problem: string;
  /** Whether the column is there (the fix changes it) or not (the fix adds it). */
  readonly exists: boolean;
  /** What differs: the fix changes only that. */
  readonly kinds: readonly DifferenceKind[];
  /** The table's primary key as found (its columns, none when it has none, and its name where the database names it), for a fix that replaces it. */
  readonly primaryKey: { readonly columns: readonly string[]; readonly name: string | undefined };
}

const truthy = (value: unknown): boolean =>
  value === true || value === 1 || value === '1' || value === 't' || value === 1n;

/** Why a column of `length` characters (null: any number) cannot hold the `chars` written into it; undefined when it can. */
function tooShort(chars: number | undefined, length: unknown): string | undefined {
  if (chars === undefined || length === null || length === undefined) return undefined;
  const holds = Number(length);
  if (holds >= chars) return undefined;
  return chars === Infinity
    ? `holds ${holds} characters, and what is written into it has no such bound`
    : `holds ${holds} characters, fewer than the ${chars} written into it`;
}

/**
 * The columns of `described` that are not what `columns` need; empty when the table is right.
 * Columns not in `columns` are left alone (a merchant may add their own).
 *
 * @example
 * ```ts
 * columnDifferences(columns, []); // every column: missing
 * columnDifferences([{ name: 'last_error', type: 'VARCHAR(500)', types: ['character varying'], chars: 500, notNull: false }], [{ name: 'last_error', type: 'character varying', length: 200 }]);
 * // [{ problem: 'holds 200 characters, fewer than the 500 written into it', exists: true, … }]
 * ```
 */
export function columnDifferences(
  columns: readonly TableColumn[],
  described: readonly DescribedColumn[],
): ColumnDifference[] {
  const byName = new Map(described.map((column) => [String(column['name']).toLowerCase(), column]));
  const inKey = described.filter((column) => truthy(column['primary_key']));
  const keyName = inKey.map((column) => column['key_name']).find((name) => typeof name === 'string');
  const primaryKey = {
    columns: inKey.map((column) => String(column['name']).toLowerCase()),
    name: typeof keyName === 'string' ? keyName : undefined,
  };
  const differences: ColumnDifference[] = [];
  for (const column of columns) {
    const found = byName.get(column.name);
    if (found === undefined) {
      differences.push({ column, problem: 'is missing', exists: false, kinds: [], primaryKey });
      continue;
    }
    const type = String(found['type']).toLowerCase();
    const collation = String(found['collation']);
    const problems: [DifferenceKind, string | false | undefined][] = [
      ['type', !column.types.includes(type) && `is ${type}, not ${column.types.join(' or ')}`],
      ['type', tooShort(column.chars, found['length'])],
      ['null', column.notNull && !column.nullTolerated && !truthy(found['not_null']) && 'allows NULL'],
      // Every column the DDL leaves nullable is written NULL somewhere (a payout not yet sent has no payment_id).
      [
        'null',
        !column.notNull &&
          !column.primaryKey &&
          truthy(found['not_null']) &&
          'is NOT NULL, but NULL is written into it',
      ],
      ['key', column.primaryKey && keyProblem(column.name, primaryKey.columns)],
      [
        'collation',
        column.binary &&
          !/^utf8mb4_(?:\w+_)?bin$/i.test(collation) &&
          `compares with the collation ${collation}: it needs utf8mb4 compared byte for byte (utf8mb4_bin), or keys that differ by case or accent become one, and characters outside its set are stored as ?`,
      ],
      [
        'collation',
        column.exact &&
          !truthy(found['exact']) &&
          `compares with the collation ${collation}, which makes keys that differ by case or accent one (it needs ${column.exact})`,
      ],
    ];
    const differing = problems.filter((problem): problem is [DifferenceKind, string] => typeof problem[1] === 'string');
    if (differing.length > 0)
      differences.push({
        column,
        problem: differing.map(([, problem]) => problem).join(', '),
        exists: true,
        kinds: differing.map(([kind]) => kind),
        primaryKey,
      });
  }
  return differences;
}

/** Why `key` is not the table's primary key, all of it (`inKey`: the columns of the one it has). */
function keyProblem(key: string, inKey: readonly string[]): string | undefined {
  if (inKey.length === 1 && inKey[0] === key) return undefined;
  if (inKey.length === 0) return 'is not the primary key';
  const which = `it is (${inKey.join(', ')}), not (${key})`;
  return inKey.includes(key) ? `is not the whole primary key: ${which}` : `is not the primary key: ${which}`;
}
