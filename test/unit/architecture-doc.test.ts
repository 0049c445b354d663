/**
 * docs/architecture.md is checked like the mirror: every path it names exists, every module under
 * src/ is named in the row of its folder ("Where things live"), and the table of what each entry
 * imports from outside its folder is exactly what the code imports. A rename, a new module or a
 * new cross-entry import that the page does not follow fails here; so does a comment in src/
 * pointing at a test or doc that is not there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const src = join(root, 'src');
const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');

/** Every file under `dir` (relative to the repository), skipping what is built or installed. */
function walk(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter(
      (entry) =>
        entry.isFile() && !/(^|\/)(node_modules|dist|\.tmp|\.git)(\/|$)/.test(relative(root, entry.parentPath)),
    )
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

const tracked = ['src', 'test', 'docs', 'bench', 'examples', '.ci'].flatMap(walk);
const modules = tracked
  .filter((path) => path.startsWith('src/') && path.endsWith('.ts'))
  .map((path) => path.slice('src/'.length));
const TOP = /^(src|test|docs|bench|examples|\.ci)\//;

/**
 * Whether a path the page names exists: from the repository's root when it starts with a top
 * folder or is a root file; a shorter path (`core/errors/base.ts`, `stores/`) as the end of a
 * real one; a bare file name as some file's name.
 */
function exists(path: string): boolean {
  if (TOP.test(path) || existsSync(join(root, path))) return existsSync(join(root, path));
  if (path.endsWith('/')) return tracked.some((file) => `/${dirname(file)}/`.includes(`/${path}`));
  if (path.includes('/')) return tracked.some((file) => file.endsWith(`/${path}`));
  return tracked.some((file) => basename(file) === path);
}

/** The paths the page names: file names with an extension anywhere, folders in backticks. */
function namedPaths(text: string): string[] {
  const files =
    text.match(/(?<![\w/.<>-])(?:\.?[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|json|md|sh|prisma)(?![\w/])/g) ?? [];
  const folders = [...text.matchAll(/`((?:\.?[\w-]+\/)+)`/g)].map((match) => match[1] as string);
  return [...new Set([...files, ...folders])].sort();
}

/** The rows of the markdown table whose header row starts with `| header |`, as [first cell, rest]. */
function table(header: string): [string, string][] {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`| ${header} |`));
  if (start < 0) throw new Error(`no table headed ${header} in docs/architecture.md`);
  const rows: [string, string][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [, first = '', ...rest] = line.split('|');
    rows.push([first.trim(), rest.join('|')]);
  }
  return rows;
}

/** The modules `file` imports for their values (a type-only import or re-export aside), as paths under src. */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(src, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    let typeOnly = false;
    if (ts.isImportDeclaration(statement)) {
      specifier = statement.moduleSpecifier;
      const clause = statement.importClause;
      const named = clause?.namedBindings;
      typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            named !== undefined &&
            ts.isNamedImports(named) &&
            named.elements.length > 0 &&
            named.elements.every((e) => e.isTypeOnly)));
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined) {
      specifier = statement.moduleSpecifier;
      const named = statement.exportClause;
      typeOnly =
        statement.isTypeOnly ||
        (named !== undefined &&
          ts.isNamedExports(named) &&
          named.elements.length > 0 &&
          named.elements.every((e) => e.isTypeOnly));
    }
    if (specifier === undefined || typeOnly || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.'))
      continue;
    found.push(relative(src, resolve(dirname(join(src, file)), specifier.text.replace(/\.js$/, '.ts'))));
  }
  return found;
}

describe('docs/architecture.md', () => {
  it('finds what it checks', () => {
    expect(modules).toEqual(expect.arrayContaining(['index.ts', 'core/wait.ts', 'webhooks/verifier.ts']));
    expect(
      namedPaths('see `src/core/wait.ts`, core/errors/base.ts, `stores/`, `<job>-worker.ts` and ky.retry()'),
    ).toEqual(['core/errors/base.ts', 'src/core/wait.ts', 'stores/']);
    expect(
      exists('src/core/wait.ts') && exists('core/errors/base.ts') && exists('stores/') && exists('mirror.test.ts'),
    ).toBe(true);
    expect(
      exists('src/core/nowhere.ts') || exists('core/nowhere.ts') || exists('nowhere/') || exists('nowhere.ts'),
    ).toBe(false);
    expect(valueImports('webhooks/adapters/shared.ts')).toEqual(
      expect.arrayContaining(['core/errors/base.ts', 'webhooks/handler.ts']),
    );
    expect(valueImports('webhooks/adapters/shared.ts')).not.toContain('webhooks/handler-options.ts'); // import type
  });

  it('every path it names exists', () => {
    expect(namedPaths(doc).filter((path) => !exists(path))).toEqual([]);
  });

  it('every test, doc or bench file a comment in src/ points at exists', () => {
    const pointed = modules.flatMap((module) =>
      [
        ...readFileSync(join(src, module), 'utf8').matchAll(
          /(?<![\w/.-])(?:test|docs|bench)\/[\w/.-]+\.(?:ts|md|mjs|json)/g,
        ),
      ].map((match) => `src/${module}: ${match[0]}`),
    );
    expect(pointed.length).toBeGreaterThan(20);
    expect(pointed.filter((entry) => !existsSync(join(root, entry.split(': ')[1] as string)))).toEqual([]);
  });

  it('every module under src/ is named in the row of its folder', () => {
    const rows = new Map(table('Folder').map(([folder, contents]) => [folder.replaceAll('`', ''), contents]));
    const unnamed = modules.filter((module) => {
      const folder = `src/${dirname(module) === '.' ? '' : `${dirname(module)}/`}`;
      return !(rows.get(folder) ?? '').includes(`\`${basename(module)}\``);
    });
    expect(unnamed.map((module) => `src/${module}`)).toEqual([]);
  });

  it("each entry's imports from outside its folder are the ones its table lists, no more, no fewer", () => {
    const rows = table('Entry');
    expect(rows.map(([entry]) => entry)).toEqual(['`src/webhooks/`', '`src/redis/`', '`src/sql/`', '`src/testing/`']);
    for (const [entry, listed] of rows) {
      const folder = entry.replaceAll('`', '').slice('src/'.length);
      const imported = new Set(
        modules
          .filter((module) => module.startsWith(folder))
          .flatMap((module) => valueImports(module).filter((target) => !target.startsWith(folder))),
      );
      expect({
        entry,
        reaches: [...(listed.match(/`src\/[\w/.-]+`/g) ?? [])].map((path) => path.slice(5, -1)).sort(),
      }).toEqual({ entry, reaches: [...imported].sort() });
    }
  });
});
