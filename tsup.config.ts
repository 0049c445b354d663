import { defineConfig } from 'tsup';

const entry = {
  index: 'src/index.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'testing/index': 'src/testing/index.ts',
  'redis/index': 'src/redis/index.ts',
};

// msw, the web frameworks and the Redis clients are peers of the subpaths that use them, never
// bundled (myr-gateway/redis only uses the client object it is given and imports neither).
const external = ['msw', 'msw/node', 'express', 'fastify', 'hono', 'koa', 'ioredis', 'redis'];

export default defineConfig([
  {
    entry,
    format: ['esm'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node22',
    splitting: true,
    treeshake: true,
    external,
  },
  {
    // ky 2 ships ESM only; the CJS build carries its own copy so that
    // require('myr-gateway') works on every Node 22 without require(esm).
    // Split chunks so every subpath shares one copy of the error classes: `instanceof
    // MyrGatewayError` must hold for a WebhookVerificationError too.
    entry,
    format: ['cjs'],
    dts: true,
    sourcemap: true,
    target: 'node22',
    splitting: true,
    treeshake: true,
    external,
    noExternal: ['ky'],
  },
]);
