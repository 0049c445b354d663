import { rmSync, writeFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const entry = {
  index: 'src/index.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'testing/index': 'src/testing/index.ts',
};

// msw and the web frameworks are peers of the subpaths that use them, never bundled.
const external = ['msw', 'msw/node', 'express', 'fastify', 'hono', 'koa'];

// One copy of every class: the code ships as ESM only. `require('myr-gateway')` loads a
// one-line CommonJS wrapper that requires the same ESM file (require(esm), Node >= 22.12),
// so `instanceof MyrGatewayError` holds whether a module imports or requires the SDK.
rmSync('dist', { recursive: true, force: true });

async function writeCjsWrappers(): Promise<void> {
  for (const name of Object.keys(entry)) {
    writeFileSync(`dist/${name}.cjs`, `'use strict';\nmodule.exports = require('./${name.split('/').pop()}.js');\n`);
  }
}

export default defineConfig([
  {
    // The `myr-gateway` bin (`npx myr-gateway sandbox`): one ESM file, no declarations, no
    // wrapper. Its import graph has no msw, so it runs where msw is not installed.
    entry: { 'sandbox/cli': 'src/sandbox/cli.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node22',
    banner: { js: '#!/usr/bin/env node' },
    external,
  },
  {
    entry,
    format: ['esm'],
    dts: true,
    sourcemap: true,
    target: 'node22',
    splitting: true,
    treeshake: true,
    external,
    onSuccess: writeCjsWrappers,
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
]);
