/**
 * A payment's row the ledger did not write, on SQLite, through the webhook handler: SQLite keeps
 * text in an INTEGER column, and a `mark_rank` of `'abc'` compares above every rank, so the
 * payment's first SUCCESS was answered `200 duplicate` on every delivery, never run, and nothing
 * reached onError (a silent lost fulfilment). Such a row is refused: 503 (the gateway retries),
 * onError told the table and the column, none of the row's values.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlLedger, fromSqlite } from '../../../../src/sql/index.js';
import { createWebhookHandler, signCallback } from '../../../../src/webhooks/index.js';

const API_KEY = 'sk_test_ledger_foreign_row_01';
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-foreign-row-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite: a payment's row with values the ledger never writes", () => {
  it.each([
    ['mark_rank', "'abc'"],
    ['mark_rank', '2.5'],
    ['handled_statuses', "x'00'"],
    // Past 2^53: node:sqlite reads it as a bigint, which is no rank the ledger wrote.
    ['mark_rank', '9223372036854775807'],
  ])(
    '%s = %s: every SUCCESS delivery is 503 with onError naming the table and the column, never a duplicate',
    async (column, value) => {
      const file = join(dir, `${randomUUID()}.db`);
      const table = 'h4_ledger';
      const ledger = new SqlLedger(fromSqlite(file), { table });
      await ledger.ensureSchema();
      const payment = `PAY_H4${randomUUID().slice(0, 8)}`;
      const db = new DatabaseSync(file);
      const values = { mark_rank: '1', handled_statuses: '4', [column]: value };
      db.exec(
        `INSERT INTO ${table} (ledger_key, mark_rank, handled_statuses, expires_at) VALUES ('m:${payment}', ${values.mark_rank}, ${values.handled_statuses}, 9007199254740991)`,
      );
      db.close();
      const errors: string[] = [];
      let runs = 0;
      const handler = createWebhookHandler({
        verifier: { apiKey: API_KEY },
        store: ledger,
        onEvent: () => void runs++,
        onError: (error) =>
          void errors.push(
            error instanceof Error
              ? `${error.message} | ${String((error.cause as Error | undefined)?.message)}`
              : String(error),
          ),
      });
      const { rawBody, headers } = await signCallback(API_KEY, {
        payment_id: payment,
        reference_id: 'ORDER_H4',
        amount: 50,
        status: 'SUCCESS',
      });
      for (let delivery = 1; delivery <= 2; delivery++) {
        const answer = await handler.handle({ body: rawBody, headers });
        expect(answer).toMatchObject({ status: 503 });
      }
      expect(runs).toBe(0);
      expect(errors).toHaveLength(2);
      for (const error of errors) {
        expect(error).toContain(`SQL ledger table ${table}`);
        expect(error).toContain(`${column} the ledger did not write`);
        expect(error).not.toContain(payment);
        expect(error).not.toContain('abc');
      }
    },
  );
});
