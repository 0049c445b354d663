/**
 * Reads every ```ts block of README.md and docs/*.md, for test/docs/snippets.test.ts (type
 * check) and test/docs/run-snippets.test.ts (run). A block whose fence line says `nocheck`
 * (```ts nocheck) is neither checked nor run; one that says `run=false` is checked but not
 * run. Either tag carries its reason: the rest of the fence line, or a first-line comment
 * `// nocheck: …`.
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
  /** Why the block is not run (fence `nocheck` or `run=false`), or undefined when it runs; '' when no reason is given. */
  notRun: string | undefined;
}

/** The reason after `nocheck` / `run=false` on the fence line, else in a `// nocheck: …` first line. */
function notRunReason(info: string, code: string): string | undefined {
  const tag = /\b(nocheck|run=false)\b[\s:—-]*(.*)$/.exec(info);
  if (!tag) return undefined;
  const onFence = (tag[2] ?? '').trim();
  if (onFence !== '') return onFence;
  const comment = new RegExp(`^\\s*//\\s*${tag[1] ?? ''}\\s*:\\s*(.+)$`).exec(code.split('\n')[0] ?? '');
  return (comment?.[1] ?? '').trim();
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
    const code = lines.slice(start, end).join('\n');
    snippets.push({
      doc,
      line: start + 1,
      code,
      optedOut: /\bnocheck\b/.test(open[3] ?? ''),
      notRun: notRunReason(open[3] ?? '', code),
    });
    i = end;
  }
  return snippets;
}

/** Every snippet of README.md and docs/*.md. */
export function allSnippets(root: string): Snippet[] {
  return markdownFiles(root).flatMap((doc) => extractSnippets(doc, readFileSync(join(root, doc), 'utf8')));
}
