/**
 * Turns one doc snippet into a module that test/docs/run-snippets.test.ts can import: the code
 * exactly as written (lines map 1:1), then one appended line exporting its top-level names so
 * the runner can reach what the snippet built (the app, the handler, the gateway). Its
 * `declare const …` / `declare function …` lines vanish when compiled, so the names they
 * declare are read from globalThis, where the runner puts the fixture's values.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import type { Snippet } from './snippets.js';

/** One name a snippet declares but does not define: the runner must provide it. */
export interface DeclaredInput {
  name: string;
  /** The declared type as written, e.g. `PaymentCreateParams`; 'function' for `declare function`. */
  type: string;
}

/** What the runner needs to know of a snippet's code. */
export interface SnippetShape {
  declared: DeclaredInput[];
  /** Top-level names the snippet defines and does not export itself. */
  locals: string[];
  /** The snippet imports `vitest`: it is a test file, run through test/docs/vitest-shim.ts. */
  isTestFile: boolean;
}

const hasModifier = (node: ts.Node, kind: ts.SyntaxKind): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : bindingNames(element.name)));
}

/** Reads the declared inputs and top-level names of a snippet. */
export function shapeOf(code: string): SnippetShape {
  const source = ts.createSourceFile('snippet.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const declared: DeclaredInput[] = [];
  const locals: string[] = [];
  let isTestFile = false;
  for (const statement of source.statements) {
    const declares = hasModifier(statement, ts.SyntaxKind.DeclareKeyword);
    const exported = hasModifier(statement, ts.SyntaxKind.ExportKeyword);
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      if (statement.moduleSpecifier.text === 'vitest') isTestFile = true;
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (declares) declared.push({ name: declaration.name.getText(source), type: declaration.type?.getText(source) ?? 'unknown' });
        else if (!exported) locals.push(...bindingNames(declaration.name));
      }
    } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name) {
      if (declares) declared.push({ name: statement.name.text, type: 'function' });
      else if (!exported) locals.push(statement.name.text);
    }
  }
  // A test file that only type-imports from vitest (none does today) would still be a test file.
  return { declared, locals, isTestFile };
}

/**
 * Writes the snippet as a module under `dir` and returns its path. `import … from 'vitest'`
 * becomes the shim (same line, same names): vitest's own `it` cannot be called inside a
 * running test.
 */
export function writeSnippetModule(snippet: Snippet, dir: string, shimPath: string): string {
  mkdirSync(dir, { recursive: true });
  const { locals } = shapeOf(snippet.code);
  const file = join(dir, `${snippet.doc.replace(/[/.]/g, '_')}_${snippet.line}.ts`);
  let shim = relative(dir, shimPath).replaceAll('\\', '/');
  if (!shim.startsWith('.')) shim = `./${shim}`;
  const code = snippet.code.replace(/from 'vitest';/g, `from '${shim}';`);
  writeFileSync(file, `${code}\nexport { ${locals.join(', ')} };\n`);
  return file;
}
