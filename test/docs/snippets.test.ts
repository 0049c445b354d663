// Every ```ts block in README.md and docs/*.md type-checks as written, against src through the
// tsconfig paths, so a merchant who pastes one gets code that compiles. Fragments declare what
// they use with visible `declare const …` lines; a block opts out only with ```ts nocheck.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { allSnippets, extractSnippets } from './snippets.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Inside the repository so that tsconfig's paths map 'myr-gateway' etc. to src.
const dir = join(root, '.tmp', 'snippets');

/** Type-checks the snippets in one program; returns `doc:line: message` for each error. */
function typecheck(snippets: ReturnType<typeof allSnippets>): string[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const byFile = new Map<string, (typeof snippets)[number]>();
  snippets.forEach((snippet, index) => {
    const file = join(dir, `${snippet.doc.replace(/[/.]/g, '_')}_${snippet.line}_${index}.ts`);
    // `export {}` makes each file a module (top-level await, no shared names); appended so lines map 1:1.
    writeFileSync(file, `${snippet.code}\nexport {};\n`);
    byFile.set(file, snippet);
  });
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram({ rootNames: [...byFile.keys()], options: parsed.options });
  const problems: string[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName;
    const snippet = file === undefined ? undefined : byFile.get(join(file));
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!snippet || diagnostic.file === undefined || diagnostic.start === undefined) {
      problems.push(`${file ?? '(no file)'}: ${message}`);
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    problems.push(`${snippet.doc}:${snippet.line + line}: ${message}`);
  }
  return problems;
}

describe('snippets in README.md and docs/', () => {
  const snippets = allSnippets(root);

  it('are found, and opt-outs stay rare', () => {
    expect(snippets.length).toBeGreaterThan(30);
    const optedOut = snippets.filter((s) => s.optedOut);
    expect(optedOut.map((s) => `${s.doc}:${s.line}`).length).toBeLessThanOrEqual(3);
  });

  it('every ts snippet type-checks (strict, as the package is)', () => {
    const problems = typecheck(snippets.filter((s) => !s.optedOut));
    expect(problems).toEqual([]);
  }, 120_000);

  it('reports a broken snippet with its file and line', () => {
    const broken = extractSnippets('docs/broken.md', '# x\n\n```ts\nconst ok = 1;\nconst n: number = "text";\n```\n');
    expect(typecheck(broken)).toEqual([expect.stringMatching(/^docs\/broken\.md:5: Type 'string' is not assignable to type 'number'/)]);
  }, 120_000);
});
