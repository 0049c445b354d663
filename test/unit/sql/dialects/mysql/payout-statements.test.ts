/**
 * src/sql/dialects/mysql/payout-statements.ts: each statement names the table and binds one value per
 * placeholder (the statements themselves run on the real database in test/integration/payouts-*.test.ts).
 */
import { describe, it } from 'vitest';
import { payoutStatements } from '../../../../../src/sql/dialects/mysql/payout-statements.js';
import { checkPayoutStatements } from '../../../../helpers/payout-statements.js';

describe('mysql payout statements', () => {
  it('name the table and bind every value once per placeholder', () => {
    checkPayoutStatements(payoutStatements);
  });
});
