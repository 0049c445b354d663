/**
 * `myr-gateway/redis` works on the client object the merchant passes in: no runtime
 * import of ioredis or redis anywhere in src/ (they are optional peers), and the main
 * and webhooks entries never reach src/redis at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../src/', import.meta.url).pathname;
const IMPORT = /^\s*(import|export)\s+(?!type\s)[^;]*?from\s+['"]([^'"]+)['"]/gms;

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}
const runtimeImports = (file: string) =>
  [...readFileSync(join(root, file), 'utf8').matchAll(IMPORT)].map((m) => m[2] as string);

describe('Redis clients stay optional', () => {
  it.each(files('.'))('%s imports neither ioredis nor redis at runtime', (file) => {
    expect(runtimeImports(file).filter((spec) => /^(ioredis|redis|@redis\/)/.test(spec))).toEqual([]);
  });

  it('src/redis imports only relative modules and node: built-ins', () => {
    const specs = files('redis').flatMap(runtimeImports);
    expect(specs.length).toBeGreaterThan(0);
    expect(specs.filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:'))).toEqual([]);
  });

  it('nothing outside src/redis imports it', () => {
    const outside = files('.').filter((f) => !f.startsWith('redis/'));
    expect(
      outside.filter((f) => runtimeImports(f).some((spec) => spec.includes('/redis/') || spec.startsWith('./redis'))),
    ).toEqual([]);
  });
});
