/**
 * Stands in for `vitest` in the doc snippets that are test files (README's and
 * docs/testing.md's): `it` and the hooks are collected while the snippet is imported, then
 * `runCollectedSuite()` runs them in vitest's order inside the runner's own test. `expect` and
 * `vi` are vitest's own, so a failing assertion in a snippet fails the runner.
 */
export { expect, vi } from 'vitest';

type Hook = () => unknown;
interface Collected {
  beforeAll: Hook[];
  beforeEach: Hook[];
  afterEach: Hook[];
  afterAll: Hook[];
  tests: { name: string; fn: Hook }[];
}

let collected: Collected = { beforeAll: [], beforeEach: [], afterEach: [], afterAll: [], tests: [] };

/** Registers a test of the snippet. */
export function it(name: string, fn: Hook): void {
  collected.tests.push({ name, fn });
}
export const test = it;

/** Runs the body at once: suites only group tests. */
export function describe(_name: string, fn: () => void): void {
  fn();
}

export const beforeAll = (fn: Hook): void => void collected.beforeAll.push(fn);
export const beforeEach = (fn: Hook): void => void collected.beforeEach.push(fn);
export const afterEach = (fn: Hook): void => void collected.afterEach.push(fn);
export const afterAll = (fn: Hook): void => void collected.afterAll.push(fn);

/** Forgets what an earlier snippet registered. */
export function resetCollectedSuite(): void {
  collected = { beforeAll: [], beforeEach: [], afterEach: [], afterAll: [], tests: [] };
}

/** A hook may return a teardown function, as vitest allows. */
async function runHook(hook: Hook, teardowns: Hook[]): Promise<void> {
  const result = await hook();
  if (typeof result === 'function') teardowns.push(result as Hook);
}

/**
 * Runs what the snippet registered: beforeAll, each test between beforeEach and afterEach,
 * then afterAll (always). Returns the names of the tests registered and of those that passed;
 * the first failure throws.
 */
export async function runCollectedSuite(): Promise<{ registered: string[]; passed: string[] }> {
  const suite = collected;
  const teardowns: Hook[] = [];
  const ran: string[] = [];
  try {
    for (const hook of suite.beforeAll) await runHook(hook, teardowns);
    for (const { name, fn } of suite.tests) {
      for (const hook of suite.beforeEach) await runHook(hook, teardowns);
      try {
        await fn();
        ran.push(name);
      } finally {
        for (const hook of suite.afterEach) await hook();
      }
    }
  } finally {
    for (const hook of suite.afterAll) await hook();
    for (const teardown of teardowns.reverse()) await teardown();
  }
  return { registered: suite.tests.map((t) => t.name), passed: ran };
}
