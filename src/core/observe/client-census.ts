/**
 * Counts clients created per merchant in this process, to warn once when a serverless handler
 * or a request path builds a new client each time instead of reusing one.
 *
 * @module
 */
import { consoleWarn, type WarnSink } from './log.js';

/** Clients created for one merchant before the process warns that they should be reused. */
export const MANY_CLIENTS = 20;
const clientCounts = new Map<string, number>();
let warnedManyClients = false;

/** Counts a new client of `merchantId` at `baseUrl`; warns once per process past {@link MANY_CLIENTS}. */
export function noteClient(baseUrl: string, merchantId: string, log: WarnSink = consoleWarn): void {
  if (warnedManyClients) return;
  const label = `${baseUrl} ${merchantId}`;
  const count = (clientCounts.get(label) ?? 0) + 1;
  clientCounts.set(label, count);
  if (count < MANY_CLIENTS) return;
  warnedManyClients = true;
  clientCounts.clear();
  log(
    `${count} MyrGateway clients were created in this process for merchant ${merchantId} at ${baseUrl}: create one (at module scope) and reuse it.`,
  );
}
