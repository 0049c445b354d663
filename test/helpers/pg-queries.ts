/**
 * Records what each `query` call of a node-postgres pool's clients was given: the SQL text, or
 * `'pipeline'` for a submittable (the ledger's opening pipeline: BEGIN and the claim in one round
 * trip). Each call is one round trip. Used by the tests and the ledger bench to count them.
 */
import pg from 'pg';

/** What one `query` call was given, as recorded. */
function recorded(first: unknown): string {
  if (typeof first === 'string') return first;
  if (typeof first === 'object' && first !== null && 'text' in first) return String(first.text);
  return 'pipeline';
}

/**
 * A pool whose clients push onto `sent` what each `query` call was given, from their connection on.
 *
 * @example
 * ```ts
 * const { pool, sent } = recordingPgPool({ connectionString: url, max: 1 });
 * ```
 */
export function recordingPgPool(config: pg.PoolConfig): { pool: pg.Pool; sent: string[] } {
  const pool = new pg.Pool(config);
  const sent: string[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    Object.assign(client, { query: (...args: unknown[]) => (sent.push(recorded(args[0])), query(...args)) });
  });
  return { pool, sent };
}
