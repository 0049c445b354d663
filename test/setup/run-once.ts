/**
 * The test files CI runs on Node 24 only. The second run (Node 22, `MYR_TEST_SECOND_RUN=1`)
 * checks the SDK on the older Node; these files test what the first run already showed and do
 * not depend on the Node version of the test runner: Redis topologies, worker fleets, the
 * browser, a Next.js build, the Bun/Deno/workerd runtimes, and the pacing bursts and the
 * sandbox's delivery timeout, which wait out rate-limit windows and timers in plain JavaScript.
 * vitest.config.ts excludes them from every project on the second run (a CLI `--exclude` does
 * not reach a project that sets its own `exclude`), and .ci/run checks none of them ran.
 */
export const RUN_ONCE: readonly string[] = [
  'test/fleet/**',
  'test/browser/**',
  'test/runtimes/**',
  'test/integration/client-nextjs-build.test.ts',
  'test/integration/client-pacing-late-count.test.ts',
  'test/integration/client-pacing-cold.test.ts',
  'test/integration/redis-rate-limiter.test.ts',
  'test/integration/redis-rate-edge-probe.test.ts',
  'test/integration/redis-pacing-client.test.ts',
  'test/integration/webhook-sandbox-timeout.test.ts',
];

/** Whether this run is CI's second one, which leaves out {@link RUN_ONCE}. */
export const isSecondRun = (): boolean => process.env.MYR_TEST_SECOND_RUN === '1';
