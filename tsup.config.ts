import { rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
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
      onSuccess: writeCjsWrappers(outDir),
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
