/**
 * The webhooks entry must load on Workers and Edge and must not make any framework a
 * dependency: no runtime import of a framework or of a node: module anywhere under
 * src/webhooks, adapters included (types only, through `import type`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

const sources = files('webhooks');
const IMPORT = /^\s*(import|export)\s+(?!type\s)[^;]*?from\s+['"]([^'"]+)['"]/gms;

describe('runtime imports of src/webhooks (adapters included)', () => {
  it('covers the adapter and webhook sources', () => {
    expect(sources).toEqual(
      expect.arrayContaining([
        'webhooks/adapters/express.ts',
        'webhooks/adapters/fastify.ts',
        'webhooks/adapters/hono.ts',
        'webhooks/adapters/koa.ts',
        'webhooks/adapters/node.ts',
        'webhooks/adapters/web.ts',
        'webhooks/verifier.ts',
      ]),
    );
  });

  it.each(sources)('%s imports only relative modules at runtime', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const runtime = [...text.matchAll(IMPORT)].map((m) => m[2] as string).filter((spec) => !spec.startsWith('.'));
    expect(runtime).toEqual([]);
    expect(text).not.toMatch(/\brequire\(/);
    expect(text).not.toMatch(/\bimport\(\s*['"]/);
  });
});

describe('what src/webhooks reaches through relative imports', () => {
  // The verifier, the handler and the signing helpers (signCallback) share only these with the
  // rest of the SDK: no client, no schemas with zod (schemas/amount.ts is the exact-decimal rule
  // without it), and nothing of the msw mock in testing/. core/wait.ts is the SDK's one
  // abort-aware wait, which imports nothing; core/milliseconds.ts the range rule of every
  // millisecond option, which imports the error base only.
  const SHARED = new Set([
    'core/node-crypto.ts',
    'core/errors/base.ts',
    'core/milliseconds.ts',
    'core/observe/trace.ts',
    'core/wait.ts',
    'schemas/statuses.ts',
    'schemas/amount.ts',
  ]);
  it.each(sources)('%s imports only webhooks modules and the shared base', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const outside = [...text.matchAll(IMPORT)]
      .map((m) => normalize(join(dirname(file), (m[2] as string).replace(/\.js$/, '.ts'))))
      .filter((target) => !target.startsWith('webhooks/') && !SHARED.has(target));
    expect(outside).toEqual([]);
  });
});
