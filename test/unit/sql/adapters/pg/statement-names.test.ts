import { describe, expect, it } from 'vitest';
import { openingName, statementName } from '../../../../../src/sql/adapters/pg/statement-names.js';

/** Postgres truncates identifiers past NAMEDATALEN - 1 = 63 bytes: two names that differ after it would be one. */
const NAMEDATALEN = 64;

describe('the names of the statements the ledger prepares on node-postgres', () => {
  it('gives one text one name, another text another, each within Postgres identifier length', () => {
    const claim = 'INSERT INTO ledger (k) VALUES ($1)';
    const other = 'INSERT INTO ledger_2 (k) VALUES ($1)';
    expect(statementName(claim)).toBe(statementName(claim));
    expect(statementName(claim)).toMatch(/^myr_gateway_[0-9a-f]{24}$/);
    expect(statementName(other)).not.toBe(statementName(claim));
    expect(openingName(claim).length).toBeLessThan(NAMEDATALEN);
  });

  it("names a text the opening pipeline prepares apart from node-postgres's own name for it, the same each time", () => {
    const claim = 'INSERT INTO ledger (k) VALUES ($1)';
    expect(openingName(claim)).toBe(openingName(claim));
    expect(openingName(claim)).not.toBe(statementName(claim));
    expect(openingName(claim).startsWith(statementName(claim))).toBe(true);
  });
});
