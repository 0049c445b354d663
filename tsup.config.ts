import { rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import { rollup, type GetModuleInfo } from 'rollup';
import { defineConfig, type Options } from 'tsup';

const entry = {
  index: 'src/index.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'testing/index': 'src/testing/index.ts',
  'redis/index': 'src/redis/index.ts',
};

// msw, the web frameworks and the Redis clients are peers of the subpaths that use them, never
// bundled (myr-gateway/redis only uses the client object it is given and imports neither).
const external = ['msw', 'msw/node', 'express', 'fastify', 'hono', 'koa', 'ioredis', 'redis'];

/**
 * The `myr-gateway` bin (`npx myr-gateway sandbox`): one ESM file, no declarations, no wrapper.
 * Its import graph has no msw, so it runs where msw is not installed. The sandbox's browser test
 * builds the bin with these same options.
 *
 * qrcode (the payment page's QR code) is bundled in, so it is a devDependency and a merchant's
 * install brings only zod; no other entry imports it (check-package.mjs checks both).
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
      await writeFile(`${outDir}/${name}.cjs`, `'use strict';\nmodule.exports = require('./${name.split('/').pop()}.js');\n`);
    }
  };
}

/**
 * Entries in the order their cold starts matter: a webhook receiver is often a serverless
 * function started per burst of callbacks; a fleet's Redis stores come next; then the client;
 * the mock runs in tests only.
 */
const COLD_START_ORDER = ['webhooks/index', 'redis/index', 'index', 'testing/index'] as const;

/** The name of each entry's group of shared chunks: what loads it, not what it holds. */
const SHARED_GROUP_NAME: Record<(typeof COLD_START_ORDER)[number], string> = {
  'webhooks/index': 'shared',
  'redis/index': 'shared-client',
  index: 'client',
  'testing/index': 'testing',
};

/**
 * Regroups esbuild's shared chunks so each entry loads as few files as it can: every shared
 * chunk joins the group of the first entry in {@link COLD_START_ORDER} that loads it. The
 * webhooks entry then loads one shared file, the Redis entry two (neither loads zod), the
 * client three.
 *
 * esbuild makes one chunk per distinct set of entries sharing code, so every feature shared by
 * a new pair of entries was one more file for each of them to resolve and link at a cold start
 * (the webhooks entry had reached 4). esbuild has no manual chunks, so Rollup regroups its
 * output. Every module still exists once, so `instanceof` holds across entries.
 * check-package.mjs checks the resulting graphs.
 */
async function groupSharedChunks(outDir: string): Promise<void> {
  const inputs = Object.fromEntries(COLD_START_ORDER.map((name) => [name, resolve(outDir, `${name}.js`)]));
  const bundle = await rollup({
    input: inputs,
    // Packages (zod, msw, node builtins) stay imports; only the build's own files are regrouped.
    external: (id, importer) => importer !== undefined && !id.startsWith('.') && !isAbsolute(id),
    treeshake: false,
    plugins: [
      {
        name: 'esbuild-output-with-its-source-maps',
        async load(id) {
          const [code, map] = await Promise.all([readFile(id, 'utf8'), readFile(`${id}.map`, 'utf8')]);
          return { code, map };
        },
      },
    ],
  });
  const reach = new Map<string, Set<string>>();
  const reachOf = (entryName: string, getModuleInfo: GetModuleInfo): Set<string> => {
    let found = reach.get(entryName);
    if (found) return found;
    const visited = new Set<string>();
    const visit = (id: string) => {
      if (visited.has(id)) return;
      visited.add(id);
      for (const imported of getModuleInfo(id)?.importedIds ?? []) visit(imported);
    };
    visit(inputs[entryName] as string);
    reach.set(entryName, (found = visited));
    return found;
  };
  const chunkFiles = new Set<string>();
  const written = await bundle.write({
    dir: outDir,
    format: 'es',
    sourcemap: true,
    entryFileNames: '[name].js',
    chunkFileNames: 'chunk-[name]-[hash].js',
    hashCharacters: 'base36',
    manualChunks(id, { getModuleInfo }) {
      if (!basename(id).startsWith('chunk-')) return undefined;
      chunkFiles.add(id);
      const first = COLD_START_ORDER.find((name) => reachOf(name, getModuleInfo).has(id));
      return first && SHARED_GROUP_NAME[first];
    },
  });
  await bundle.close();
  const kept = new Set(written.output.map((file) => resolve(outDir, file.fileName)));
  const replaced = [...chunkFiles].filter((id) => !kept.has(id));
  await Promise.all(replaced.flatMap((id) => [rm(id), rm(`${id}.map`, { force: true })]));
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
