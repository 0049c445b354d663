/**
 * Which name a statement the ledger prepares on a node-postgres connection has: one per statement
 * text (the table's name is in the text, so two ledgers never share one), and another for the
 * same text prepared by a run's opening pipeline, which node-postgres does not know of.
 *
 * @module
 */
import { createHash } from 'node:crypto';

const statementNames = new Map<string, string>();

/**
 * The name node-postgres prepares `text` under (its `{ name, text, values }` form).
 *
 * @example
 * ```ts
 * client.query({ name: statementName(text), text, values });
 * ```
 */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined)
    statementNames.set(text, (name = `myr_gateway_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`));
  return name;
}

/**
 * The name a run's opening pipeline prepares `text` under: its own, since node-postgres, which
 * does not know of it, would otherwise prepare the same name again on that connection and fail
 * (42P05, the statement exists).
 *
 * @example
 * ```ts
 * new BeginInOneRoundTrip(5000, claim, openingName, parserOf);
 * ```
 */
export const openingName = (text: string): string => `${statementName(text)}_1rt`;
