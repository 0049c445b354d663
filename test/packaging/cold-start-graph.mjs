// What each entry loads at a cold start: the files of the package's own static import graph, and
// the packages it imports. Every file is one more to resolve, read and link before a serverless
// receiver answers its first callback, so the build groups shared code (tsup.config.ts,
// groupSharedChunks) and this check holds the line it draws.
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Per entry: the most files of the package it may load (itself included), and the packages it may
 * import. The webhooks entry runs on edge runtimes with nothing installed but the SDK: no package
 * at all. The Redis entry loads neither ky nor zod (it validates with plain code). Node builtins are
 * named as imported.
 */
export const COLD_START_GRAPHS = {
  'webhooks/index.js': { maxFiles: 2, packages: [] },
  'redis/index.js': { maxFiles: 3, packages: ['crypto'] },
  // The SQL ledger imports no database client (the merchant's is passed in) and loads
  // node:sqlite only when fromSqlite is called. SqlPayouts validates a staged payout with
  // withdrawals.create's zod schemas, so the SQL entry loads zod/mini and the code it shares with
  // the client (a group of its own, tsup.config.ts, which keeps zod out of the Redis entry): one
  // more file for the client and the mock too.
  'sql/index.js': { maxFiles: 4, packages: ['crypto', 'zod/mini'] },
  'index.js': { maxFiles: 5, packages: ['ky', 'zod/mini'] },
  'testing/index.js': { maxFiles: 5, packages: ['http', 'https', 'msw', 'msw/node', 'zod/mini'] },
};

const IMPORT = /(?:^|[;\n])\s*(?:import|export)\s*(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/g;

/** The package files and the packages `entry` (a file in `dist`) loads, following static imports. */
export function coldStartGraph(dist, entry) {
  const files = new Set();
  const packages = new Set();
  const visit = (file) => {
    if (files.has(file)) return;
    files.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else packages.add(specifier.replace(/^node:/, ''));
    }
  };
  visit(join(dist, entry));
  return { files: [...files].map((file) => relative(dist, file)).sort(), packages: [...packages].sort() };
}

/** One row per entry, and a violation for each entry that loads more than its line allows. */
export function checkColdStartGraphs(dist) {
  const rows = [];
  const violations = [];
  for (const [entry, allowed] of Object.entries(COLD_START_GRAPHS)) {
    const { files, packages } = coldStartGraph(dist, entry);
    rows.push(`${entry}: ${files.length} files (${files.join(', ')}); packages: ${packages.join(', ') || 'none'}`);
    if (files.length > allowed.maxFiles)
      violations.push(`${entry} loads ${files.length} files, at most ${allowed.maxFiles}: ${files.join(', ')}`);
    const extra = packages.filter((name) => !allowed.packages.includes(name));
    if (extra.length > 0)
      violations.push(`${entry} imports ${extra.join(', ')}, allowed: ${allowed.packages.join(', ') || 'none'}`);
  }
  return { rows, violations };
}
