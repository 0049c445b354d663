import { describe, expect, it } from 'vitest';
import {
  claimGone,
  commitAndRestore,
  ISOLATION,
  restore,
  saveAndBound,
  unknownVariable,
} from '../../../../../src/sql/dialects/mysql/session.js';

describe("a MySQL run's session", () => {
  it('bounds lock waits in whole seconds, rounded up, with autocommit off; READ COMMITTED set only through the variable it is given', () => {
    expect(ISOLATION).toBe('read committed');
    expect(saveAndBound(1001)).toContain('SESSION innodb_lock_wait_timeout = 2, SESSION autocommit = 0');
    expect(saveAndBound(1000)).not.toContain('isolation');
    const withIsolation = saveAndBound(1000, 'tx_isolation');
    expect(withIsolation).toContain('@myr_gateway_iso = @@SESSION.tx_isolation');
    expect(withIsolation).toContain("SESSION tx_isolation = 'READ-COMMITTED'");
  });

  it('puts back exactly what it saved', () => {
    for (const variable of [undefined, 'transaction_isolation'] as const) {
      const saved = [...saveAndBound(1000, variable).matchAll(/@(myr_gateway_\w+)/g)].map((match) => match[1]).sort();
      const put = [...restore(variable).matchAll(/@(myr_gateway_\w+)/g)].map((match) => match[1]).sort();
      expect(put).toEqual(saved);
      expect(commitAndRestore(variable)).toContain(restore(variable).slice('SET '.length));
    }
  });

  it('commits with the check of the claim only when given one, and refuses the whole SET when the claim is gone', () => {
    expect(commitAndRestore(undefined)).toMatch(/^SET SESSION autocommit = 'ON', /);
    const checked = commitAndRestore(undefined, { text: 'SELECT 1', rollbackOnTimeoutOff: true });
    expect(checked).toContain(
      "IF(EXISTS(SELECT 1) AND @@GLOBAL.innodb_rollback_on_timeout = 0, 'ON', 'myr_gateway_claim_gone')",
    );
    expect(
      claimGone({
        errno: 1231,
        message: "Variable 'autocommit' can't be set to the value of 'myr_gateway_claim_gone'",
      }),
    ).toBe(true);
    expect(claimGone({ errno: 1231, message: "Variable 'autocommit' can't be set to the value of 'x'" })).toBe(false);
    expect(unknownVariable({ errno: 1193 })).toBe(true);
    expect(unknownVariable({ code: 1193 })).toBe(false);
  });
});
