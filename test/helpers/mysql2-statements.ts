/**
 * Records every statement a mysql2 connection sends, plain or prepared, on its callback
 * connection (what a pool's 'connection' event hands over, and a promise connection's
 * `connection`): the ledger's own statements and those of the promise connection all go through
 * it. Used by the tests and the ledger bench to count round trips per callback.
 */

const recorded = new WeakSet<object>();

/**
 * Pushes the text of each statement `core` sends onto `sent`, from now on. A connection is
 * recorded once, into the first `sent` it was given: a pool's connections can be handed over
 * again.
 */
export function recordStatements(core: unknown, sent: string[]): void {
  if (typeof core !== 'object' || core === null || recorded.has(core)) return;
  recorded.add(core);
  for (const method of ['query', 'execute'] as const) {
    const send: unknown = Reflect.get(core, method);
    if (typeof send === 'function')
      Reflect.set(core, method, (...args: unknown[]) => (sent.push(String(args[0])), Reflect.apply(send, core, args)));
  }
}
