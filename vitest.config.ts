import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { isSecondRun, RUN_ONCE } from './test/setup/run-once.js';

/**
 * Files whose assertions are wall-clock ratios or budgets (a burst against the ideal pacing, a
 * store wait against `tokenStoreTimeout`, a payout drain against
 * the ideal): they run one at a time after everything else, on a
 * machine no other test file is loading, so that a figure they assert is the SDK's, not the
 * neighbour's. The fleet's one token: 16 processes whose Redis reads must answer within
 * `tokenStoreTimeout` (a worker whose read is late fetches a token of its own, by design).
 */
const TIMED = [
  'test/fleet/pacing*.test.ts',
  'test/fleet/tokens.test.ts',
  'test/integration/client-pacing*.test.ts',
  'test/integration/redis-rate-*.test.ts',
  'test/integration/redis-pacing-client.test.ts',
  'test/integration/tokens/client-on-redis.test.ts',
  'test/integration/sql/payouts/fleet-pacing.test.ts',
];

/**
 * Everything else waits far more than it computes (servers starting, delivery schedules, handler
 * timeouts), so three files share the two cores.
 */
const SHARED_WORKERS = 3;

/** Left out of every project on CI's second run (test/setup/run-once.ts says why). */
const ONCE = isSecondRun() ? [...RUN_ONCE] : [];

export default defineConfig({
  // The examples import the package by name, as a merchant would; here those names are src
  // (tsconfig's paths say the same for the type checker).
  resolve: {
    alias: [
      { find: /^myr-gateway$/, replacement: fileURLToPath(new URL('src/index.ts', import.meta.url)) },
      {
        find: /^myr-gateway\/(webhooks|testing|redis|sql|drizzle)$/,
        replacement: fileURLToPath(new URL('src/$1/index.ts', import.meta.url)),
      },
    ],
  },
  test: {
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The JSON report lets .ci/run print a plain 'N passed, N failed' line.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          // examples/merchant-test is a merchant's own test file: it runs here so it cannot rot.
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...TIMED, ...ONCE],
          maxWorkers: SHARED_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'timed', include: TIMED, exclude: ONCE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
