import { rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import { rollup } from 'rollup';
import { defineConfig, type Options } from 'tsup';

const entry = {
  index: 'src/index.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'testing/index': 'src/testing/index.ts',
  'redis/index': 'src/redis/index.ts',
  'sql/index': 'src/sql/index.ts',
  'drizzle/index': 'src/drizzle/index.ts',
};

// msw, the web frameworks, the Redis and SQL clients are peers of the subpaths that use them, never
// bundled (myr-gateway/redis and myr-gateway/sql only use the client object they are given and
// import none of them; myr-gateway/drizzle imports drizzle-orm's table builders, an optional peer).
const external = [
  'msw',
  'msw/node',
  'express',
  'fastify',
  'hono',
  'koa',
  'ioredis',
  'redis',
  'pg',
  'postgres',
  'mysql2',
  'mysql2/promise',
  'kysely',
  'drizzle-orm',
  'drizzle-orm/pg-core',
  'drizzle-orm/mysql-core',
  'drizzle-orm/sqlite-core',
];

/**
 * The `myr-gateway` bin (`npx myr-gateway sandbox`): one ESM file, no declarations, no wrapper.
 * Its import graph has no msw, so it runs where msw is not installed. The sandbox's browser test
 * builds the bin with these same options.
 *
 * qrcode (the payment page's QR code) is bundled in, so it is a devDependency and a merchant's
 * install brings only ky and zod; no other entry imports it (check-package.mjs checks both).
 * Its `browser` entry is the one bundled: the same SVG renderer as its Node entry, without the
 * PNG and terminal renderers, whose CommonJS require('fs') and require('zlib') cannot run from
 * an ESM bundle (nor their pngjs).
 */
export const sandboxCli = {
  entry: { 'sandbox/cli': 'src/sandbox/cli.ts' },
  format: ['esm'],
  sourcemap: true,
  target: 'node22',
  banner: { js: '#!/usr/bin/env node' },
  external,
  noExternal: ['qrcode'],
  esbuildOptions(options) {
    options.alias = { qrcode: 'qrcode/lib/browser.js' };
  },
} satisfies Options;

// One copy of every class: the code ships as ESM only. `require('myr-gateway')` loads a
// one-line CommonJS wrapper that requires the same ESM file (require(esm), Node >= 22.12),
// so `instanceof MyrGatewayError` holds whether a module imports or requires the SDK.
function writeCjsWrappers(outDir: string): () => Promise<void> {
  return async () => {
    for (const name of Object.keys(entry)) {
      await writeFile(
        `${outDir}/${name}.cjs`,
        `'use strict';\nmodule.exports = require('./${name.split('/').pop()}.js');\n`,
      );
    }
  };
}

/**
 * The group each entry's shared chunks join, written in the order the entries' cold starts
 * matter: a webhook receiver is often a serverless function started per burst of callbacks; a
 * fleet's Redis stores come next; then the client; the mock runs in tests only. Named for what
 * loads a group, not what it holds. Typed by `entry`, so a new entry cannot be left out.
 */
const SHARED_GROUP: Record<keyof typeof entry, string> = {
  'webhooks/index': 'shared',
  'redis/index': 'shared-client',
  // Before the SQL entry: the table-name check it shares with the SQL entry joins a group without
  // zod (in the SQL group, the Drizzle tables would load zod).
  'drizzle/index': 'shared-client',
  // Its payout outbox validates with the client's zod schemas: a group of its own keeps zod out of
  // the Redis entry (the code only the SQL entry and the client share joins it, the root's one more file).
  'sql/index': 'sql',
  index: 'client',
  'testing/index': 'testing',
};

/** Everything `from` reaches by static import, itself included (ids as the bundler names them). */
function reachable(from: string, importsOf: (id: string) => readonly string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (id: string) => {
    if (seen.has(id)) return;
    seen.add(id);
    for (const imported of importsOf(id)) visit(imported);
  };
  visit(from);
  return seen;
}

/**
 * Regroups esbuild's shared chunks so each entry loads as few files as it can: every shared
 * chunk joins the group of the first entry in {@link SHARED_GROUP} that loads it. The webhooks
 * entry then loads one shared file, the Redis entry two (neither loads zod), the client three.
 *
 * esbuild makes one chunk per distinct set of entries sharing code, so every feature shared by
 * a new pair of entries is one more file for each of them to resolve and link at a cold start,
 * and esbuild has no manual chunks: Rollup regroups its output. Every module still exists once,
 * so `instanceof` holds across entries. A regrouping that would make an entry import a package
 * it did not import before (zod in the webhooks entry, say) fails the build; check-package.mjs
 * checks the resulting graphs.
 */
async function groupSharedChunks(outDir: string): Promise<void> {
  const names = Object.keys(SHARED_GROUP) as (keyof typeof entry)[];
  const inputs = Object.fromEntries(names.map((name) => [name, resolve(outDir, `${name}.js`)]));
  // What each entry reaches in esbuild's graph, found once the graph is built: it decides the
  // groups, and which packages each entry imported before the regrouping.
  const reach = new Map<string, Set<string>>();
  const packagesBefore = new Map<string, Set<string>>();
  const bundle = await rollup({
    input: inputs,
    // Packages (zod, msw, node builtins) stay imports; only the build's own files are regrouped.
    external: (id, importer) => importer !== undefined && !id.startsWith('.') && !isAbsolute(id),
    treeshake: false,
    plugins: [
      {
        name: 'esbuild-output-with-its-source-maps',
        async load(id) {
          const map = await readFile(`${id}.map`, 'utf8').catch(() => undefined);
          return { code: await readFile(id, 'utf8'), map };
        },
        buildEnd() {
          const importsOf = (id: string) => this.getModuleInfo(id)?.importedIds ?? [];
          for (const name of names) {
            const ids = reachable(inputs[name] as string, importsOf);
            reach.set(name, ids);
            packagesBefore.set(name, new Set([...ids].filter((id) => this.getModuleInfo(id)?.isExternal)));
          }
        },
      },
    ],
  });
  const isChunk = (id: string) => basename(id).startsWith('chunk-');
  const { output } = await bundle.write({
    dir: outDir,
    format: 'es',
    sourcemap: true,
    entryFileNames: '[name].js',
    chunkFileNames: 'chunk-[name]-[hash].js',
    hashCharacters: 'base36',
    manualChunks(id) {
      if (!isChunk(id)) return undefined;
      const first = names.find((name) => reach.get(name)?.has(id));
      return first && SHARED_GROUP[first];
    },
  });
  await bundle.close();
  const files = new Map(
    output.flatMap((file) => (file.type === 'chunk' ? [[file.fileName, file.imports] as const] : [])),
  );
  for (const name of names) {
    const after = reachable(`${name}.js`, (id) => files.get(id) ?? []);
    const added = [...after].filter((id) => !files.has(id) && !packagesBefore.get(name)?.has(id));
    if (added.length > 0)
      throw new Error(
        `grouping the shared chunks made ${name} import ${added.join(', ')}: give it a group of its own in SHARED_GROUP`,
      );
  }
  await importPackagesFirst(outDir, names, files);
  const kept = new Set(output.map((file) => resolve(outDir, file.fileName)));
  const replaced = [...new Set([...reach.values()].flatMap((ids) => [...ids]))].filter(
    (id) => isChunk(id) && !kept.has(id),
  );
  await Promise.all(replaced.flatMap((id) => [rm(id), rm(`${id}.map`, { force: true })]));
}

/** Whether an import names a package (or a Node builtin) rather than a file of the build. */
const isPackage = (specifier: string) => !specifier.startsWith('.') && !specifier.startsWith('/');

/**
 * Moves each entry's imports of packages (ky, zod, node builtins) above its imports of the
 * build's own chunks, in the order the entry evaluated them. A merchant's bundler lays modules
 * out in evaluation order; with the packages first, the SDK's own code is one run instead of
 * being cut in three by zod and ky, and that compresses better (root bundle 35,380 -> 35,092 B
 * min+gzip). The packages depend on nothing of the SDK's, so running them first changes no
 * result. Rollup writes each import on its own line, without a source mapping (the map
 * is checked), so swapping the lines leaves the source map true.
 */
async function importPackagesFirst(
  outDir: string,
  names: readonly string[],
  importsOf: ReadonlyMap<string, readonly string[]>,
): Promise<void> {
  for (const name of names) {
    const file = `${name}.js`;
    // Evaluation order: a module's imports, depth first, before the module itself.
    const order: string[] = [];
    const visit = (id: string) => {
      if (order.includes(id)) return;
      for (const imported of importsOf.get(id) ?? []) visit(imported);
      order.push(id);
    };
    visit(file);
    const lines = (await readFile(resolve(outDir, file), 'utf8')).split('\n');
    // The file's first lines: one `import … from '…';` or `export … from '…';` each.
    const head = lines.findIndex((line) => !/^(?:import|export) .*'[^']+';$/.test(line));
    const imports = lines.slice(0, head);
    const specifier = (line: string) => /'([^']+)';$/.exec(line)?.[1] ?? '';
    // Packages in evaluation order, then the chunks as Rollup wrote them (the sort is stable).
    const rank = (line: string) => (isPackage(specifier(line)) ? order.indexOf(specifier(line)) : order.length);
    const sorted = imports.toSorted((a, b) => rank(a) - rank(b));
    if (sorted.every((line, at) => line === imports[at])) continue;
    const map = JSON.parse(await readFile(resolve(outDir, `${file}.map`), 'utf8')) as { mappings: string };
    if (
      map.mappings
        .split(';')
        .slice(0, head)
        .some((segments) => segments !== '')
    )
      throw new Error(`${file}: an import line has a source mapping; cannot reorder the imports`);
    await writeFile(resolve(outDir, file), [...sorted, ...lines.slice(head)].join('\n'));
  }
}

// `--out-dir` on the command line (the runtime conformance test builds into a temp folder).
export default defineConfig((flags) => {
  const outDir = flags.outDir ?? 'dist';
  rmSync(outDir, { recursive: true, force: true });
  return [
    sandboxCli,
    {
      entry,
      format: ['esm'],
      dts: true,
      sourcemap: true,
      target: 'node22',
      splitting: true,
      treeshake: true,
      external,
      onSuccess: async () => {
        await groupSharedChunks(outDir);
        await writeCjsWrappers(outDir)();
      },
    },
    {
      // Declarations for CommonJS consumers (TypeScript `module: node16` in a CJS project); the
      // code behind them is the ESM build above, reached through the wrappers.
      entry,
      format: ['cjs'],
      dts: { only: true },
      target: 'node22',
      external,
    },
  ];
});
