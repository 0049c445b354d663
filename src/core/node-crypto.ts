/**
 * node:crypto where the runtime has it (Node, Bun, Deno), reached through
 * `process.getBuiltinModule` so no module has a static Node import and the same code runs on
 * Workers and Edge (where this answers null and Web Crypto is used).
 *
 * @module
 */
import type * as NodeCryptoModule from 'node:crypto';

/** The node:crypto module. */
export type NodeCrypto = typeof NodeCryptoModule;

/**
 * node:crypto when the runtime has it (Node, Bun, Deno), else null (Workers, Edge). Asked of
 * the runtime on every call (a lookup, and only done when keys are derived), so nothing here
 * holds state a test would have to reset.
 */
export function nodeCrypto(): NodeCrypto | null {
  // `process` is absent outside Node, Bun and Deno; getBuiltinModule is checked before use,
  // and what it returns for node:crypto is node:crypto.
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return (proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined) ?? null; // see above
  } catch {
    return null;
  }
}
