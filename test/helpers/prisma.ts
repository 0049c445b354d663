/**
 * Generates a Prisma client (Prisma 7, `prisma-client` generator, no query engine) for
 * test/fixtures/prisma/schema.prisma into .tmp/, for one provider. `prisma generate` does not run
 * the schema engine; the CLI only wants its file, which it would download from binaries.prisma.sh
 * (not reachable here), so PRISMA_SCHEMA_ENGINE_BINARY names one that is never run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '../..');

/** Where the clients of this process are generated (`variant`: one with more models): {@link removePrismaClients} removes them. */
const dirOf = (provider: string, variant = '') => join(ROOT, '.tmp', `prisma-${provider}${variant}-${process.pid}`);

/** Removes the clients this process generated (of `variant`). */
export function removePrismaClients(variant = ''): void {
  for (const provider of ['postgresql', 'mysql']) rmSync(dirOf(provider, variant), { recursive: true, force: true });
}

/**
 * The generated client module's URL (import it), for `provider`; `models`, appended to the
 * fixture's schema, are generated in a client of their own (`variant`).
 */
export function generatePrismaClient(
  provider: 'postgresql' | 'mysql',
  { models = '', variant = '' }: { models?: string; variant?: string } = {},
): string {
  const dir = dirOf(provider, variant);
  mkdirSync(dir, { recursive: true });
  const schema =
    readFileSync(join(ROOT, 'test/fixtures/prisma/schema.prisma'), 'utf8').replace(
      'provider = "postgresql"',
      `provider = "${provider}"`,
    ) + models;
  writeFileSync(join(dir, 'schema.prisma'), schema);
  execFileSync(join(ROOT, 'node_modules/.bin/prisma'), ['generate', '--schema', 'schema.prisma'], {
    cwd: dir,
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
      CHECKPOINT_DISABLE: '1',
    },
    stdio: 'pipe',
  });
  return pathToFileURL(join(dir, 'generated/client.ts')).href;
}
