/**
 * `sideEffects: false` in package.json is a promise to bundlers: a merchant who imports one
 * adapter from `myr-gateway/webhooks` gets that adapter's code, not every framework's. Each
 * adapter is bundled alone with esbuild (as a merchant's bundler meets the package, with the
 * package.json's `sideEffects`) and the output is checked for the other adapters' modules and
 * for code only they contain.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const entry = new URL('../../../../src/webhooks/index.ts', import.meta.url).pathname;

/** Each export, the adapter modules it may reach (itself and what it imports). */
const ADAPTERS = {
  createExpressMiddleware: ['express', 'node'],
  createFastifyHandler: ['fastify'],
  createHonoHandler: ['hono', 'web'],
  createKoaMiddleware: ['koa'],
  createNodeHandler: ['node'],
  createWebHandler: ['web'],
  fastifyWebhookPlugin: ['fastify'],
} as const;
const MODULES = ['express', 'fastify', 'hono', 'koa', 'node', 'web'] as const;

/** Property names only one export's code touches; they survive minification. */
const MARKERS: Record<string, string> = {
  createKoaMiddleware: 'rawBody',
  fastifyWebhookPlugin: 'addContentTypeParser',
  createHonoHandler: 'bodyUsed',
};

async function bundle(name: string): Promise<{ modules: string[]; text: string }> {
  const result = await build({
    stdin: {
      contents: `import { ${name} } from 'myr-gateway/webhooks'; globalThis.keep = ${name};`,
      resolveDir: process.cwd(),
      loader: 'js',
    },
    alias: { 'myr-gateway/webhooks': entry },
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    external: ['node:*'],
    metafile: true,
    tsconfigRaw: {},
    logLevel: 'error',
  });
  const output = Object.values(result.metafile.outputs)[0];
  const modules = Object.entries(output?.inputs ?? {})
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path);
  return { modules, text: result.outputFiles[0]?.text ?? '' };
}

describe('one adapter imported, one adapter bundled', () => {
  it.each(Object.entries(ADAPTERS))('%s pulls in no other adapter', async (name, allowed) => {
    const { modules, text } = await bundle(name);
    const adapters = MODULES.filter((m) => modules.some((path) => path.endsWith(`src/webhooks/adapters/${m}.ts`)));
    expect(adapters.sort()).toEqual([...allowed].sort());
    for (const [owner, marker] of Object.entries(MARKERS)) {
      expect(text.includes(marker), `${marker} (code of ${owner}) in the bundle of ${name}`).toBe(owner === name);
    }
  });

  it('the verifier alone pulls in no adapter and no handler flow', async () => {
    const { modules } = await bundle('WebhookVerifier');
    expect(modules.filter((path) => path.includes('/adapters/') || path.endsWith('/handler.ts'))).toEqual([]);
    expect(modules.some((path) => path.endsWith('src/webhooks/verifier.ts'))).toBe(true);
  });
});
