import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    // examples/merchant-test is a merchant's own test file: it runs here so it cannot rot.
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The JSON report lets .ci/run print a plain 'N passed, N failed' line.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
  },
});
