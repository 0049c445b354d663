/**
 * Reads every ```ts block of README.md and docs/*.md, for test/docs/snippets.test.ts.
 * A block whose fence line says `nocheck` (```ts nocheck) is left out on purpose.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One ```ts block of a Markdown file. */
export interface Snippet {
  /** Path relative to the repository root, e.g. docs/testing.md. */
  doc: string;
  /** 1-based line of the block's first code line in `doc`. */
  line: number;
  code: string;
  /** The fence line said `nocheck`. */
  optedOut: boolean;
}

/** The Markdown files whose snippets are checked. */
export function markdownFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Every ```ts / ```typescript block of one file. */
export function extractSnippets(doc: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(\s*)```(ts|typescript)\b(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end] ?? '')) end += 1;
    if (end >= lines.length) throw new Error(`${doc}:${i + 1}: a ts block is never closed`);
    snippets.push({
      doc,
      line: start + 1,
      code: lines.slice(start, end).join('\n'),
      optedOut: /\bnocheck\b/.test(open[3] ?? ''),
    });
    i = end;
  }
  return snippets;
}

/** Every snippet of README.md and docs/*.md. */
export function allSnippets(root: string): Snippet[] {
  return markdownFiles(root).flatMap((doc) => extractSnippets(doc, readFileSync(join(root, doc), 'utf8')));
}
