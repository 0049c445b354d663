/**
 * Whether the built package (dist/) the benches load is current, and building it when it is not:
 * a bench that loads dist/ never measures a build older than the source.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time of a file under `dir`, in ms. */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The path of `file` under dist/, after building dist/ (`npm run build`) when that file is missing
 * or older than a file of src/.
 *
 * @example
 * ```ts
 * const root = builtFile('index.js'); // <repo>/dist/index.js, current
 * ```
 */
export function builtFile(file: string): string {
  const built = join(ROOT, 'dist', file);
  if (!existsSync(built) || statSync(built).mtimeMs < newestUnder(join(ROOT, 'src'))) {
    console.log('dist/ is missing or older than src/: building it first (npm run build)');
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  }
  return built;
}
