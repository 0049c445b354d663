import { describe, expect, it } from 'vitest';
import type { LedgerStatements, SqlDialect, Statement } from '../../../../src/sql/dialects/dialect.js';
import { ledgerStatementsOf } from '../../../../src/sql/dialects/ledger-statements-of.js';
import { claimOf } from '../../../../src/sql/ledger/claims.js';

const DIALECTS: readonly SqlDialect[] = ['postgres', 'mysql', 'sqlite'];
const table = (qualified: string) => ({ qualified, bare: qualified.split('.').at(-1) ?? qualified });

/** Every statement a dialect sends on a callback's path and in upkeep, with arguments of its shape. */
function everyStatement(sql: LedgerStatements): [string, Statement<never>, unknown][] {
  const claim = claimOf('k', 1, 1);
  const ordered = { claim, now: 1, mark: 'm', rank: 1, markRank: 0, handled: 4, keptUntil: 9 };
  const found: [string, Statement<never>, unknown][] = [
    ['claim', sql.claim, { claim, now: 1 }],
    ['claimOrdered', sql.claimOrdered, ordered],
    ['readMark', sql.readMark, { mark: 'm' }],
    ['done', sql.done, claim],
    ['prune', sql.prune, { before: 1, batch: 10 }],
  ];
  const path = sql.claimPath;
  if (path.name === 'mark-in-claim') found.push(['claimPayment', path.claimPayment, ordered]);
  if (path.name === 'claim-then-mark') found.push(['markClaimed', path.markClaimed, ordered]);
  if (path.name === 'rows-beside') {
    found.push(
      ['lockMark', path.lockMark, ordered],
      ['markHandled', path.markHandled, ordered],
      ['claimBeside', path.claimBeside, ordered],
      ['takeOver', path.takeOver, { claim, now: 1 }],
    );
  }
  return found;
}

describe('ledgerStatementsOf: each dialect names its claim path', () => {
  it.each([
    ['postgres', 'mark-in-claim'],
    ['mysql', 'rows-beside'],
    ['sqlite', 'claim-then-mark'],
  ] as const)('%s: %s', (dialect, path) => {
    expect(ledgerStatementsOf(dialect, table('t')).claimPath.name).toBe(path);
  });
});

describe('the statements of every dialect', () => {
  it.each(DIALECTS)('%s: every value is a parameter: the statements hold no value, only the table name', (dialect) => {
    const sql = ledgerStatementsOf(dialect, table('shop.ledger'));
    expect(
      everyStatement(sql)
        .map(([, statement]) => statement.text)
        .join('\n'),
    ).not.toMatch(/'/);
    expect(sql.schema.join('\n')).toContain('shop.ledger');
  });

  it.each(DIALECTS)('%s: gives each statement as many parameters as it has placeholders', (dialect) => {
    const count = (text: string) =>
      dialect === 'postgres' ? new Set(text.match(/\$\d+/g)).size : (text.match(/\?/g) ?? []).length;
    for (const [name, statement, args] of everyStatement(ledgerStatementsOf(dialect, table('t')))) {
      expect({ name, params: statement.params(args as never).length }).toEqual({ name, params: count(statement.text) });
    }
  });

  it.each(DIALECTS)(
    "%s: every claim and takeover writes the run's id; the check before COMMIT compares it, not the expiry",
    (dialect) => {
      const sql = ledgerStatementsOf(dialect, table('t'));
      for (const [name, statement] of everyStatement(sql))
        if (['claim', 'claimOrdered', 'claimBeside', 'takeOver'].includes(name))
          expect(statement.text).toContain('claim_id');
      expect(sql.done.text).toContain('claim_id = ');
      expect(sql.done.text).not.toContain('expires_at');
      expect(sql.schema[0]).toContain('claim_id');
    },
  );

  it.each(DIALECTS)(
    "%s: the payment's row is kept for good and records each handled status; the ordered claim refuses a status whose bit is set",
    (dialect) => {
      const sql = ledgerStatementsOf(dialect, table('t'));
      expect(sql.schema[0]).toMatch(/handled_statuses (SMALLINT|INTEGER) NOT NULL DEFAULT 0/);
      expect(sql.claimOrdered.text).toMatch(/handled_statuses & /);
      expect(sql.readMark.text).toContain('handled_statuses');
      const writes = everyStatement(sql).filter(([name]) =>
        ['claimOrdered', 'markClaimed', 'markHandled', 'claimBeside'].includes(name),
      );
      expect(
        writes.some(
          ([, statement]) =>
            / handled_statuses (=|\|) /.test(statement.text) || /handled_statuses, expires_at/.test(statement.text),
        ),
      ).toBe(true);
    },
  );

  it("postgres, guarded (the claim sent before BEGIN's answer): both claims read the ledger's transaction mark, with the same parameters; the other statements are unchanged", () => {
    const plain = ledgerStatementsOf('postgres', table('t'));
    const guarded = ledgerStatementsOf('postgres', table('t'), true);
    for (const claim of ['claim', 'claimOrdered'] as const) {
      expect(plain[claim].text).not.toContain('current_setting');
      expect(guarded[claim].text).toContain("current_setting('myr_gateway.ledger_tx', true)");
      expect(new Set(guarded[claim].text.match(/\$\d+/g))).toEqual(new Set(plain[claim].text.match(/\$\d+/g)));
    }
    const texts = (sql: LedgerStatements) =>
      everyStatement(sql)
        .filter(([name]) => !name.startsWith('claim'))
        .map(([, statement]) => statement.text);
    expect(texts(guarded)).toEqual(texts(plain));
  });
});
