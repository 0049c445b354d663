// The README is the package's page on npm, where a relative link (docs/…, examples/…) leads
// nowhere: examples/ is not in the tarball, and docs/ (which is) has no page of its own there. Every link into the repository is an
// absolute https://github.com/myr-gateway/myr-gateway/… URL, and each must name a file or
// folder (and a heading) that exists here, on the branch it will be read from.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const REPOSITORY = 'https://github.com/myr-gateway/myr-gateway';
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** Link targets of `[text](target)`, outside code blocks, with their line numbers. */
function links(markdown: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (text.trimStart().startsWith('```')) fenced = !fenced;
    if (fenced) return;
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) found.push({ line: index + 1, target: match[1] as string });
  });
  return found;
}

/** GitHub's anchors for a markdown file's headings. */
function anchors(markdown: string): Set<string> {
  const slugs = new Set<string>();
  for (const match of markdown.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const slug = (match[1] as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    slugs.add(slug);
  }
  return slugs;
}

describe('README links work on the npm page', () => {
  const all = links(readme);

  it('finds the links', () => {
    expect(all.filter((l) => l.target.startsWith(REPOSITORY)).length).toBeGreaterThan(15);
  });

  it('has no relative link (npm cannot resolve it)', () => {
    const relative = all.filter((l) => !/^(?:https?:|mailto:|#)/.test(l.target));
    expect(relative.map((l) => `README.md:${l.line}: ${l.target}`)).toEqual([]);
  });

  it('links into the repository only to files, folders and headings that exist', () => {
    const broken: string[] = [];
    const ownAnchors = anchors(readme);
    for (const { line, target } of all) {
      if (target.startsWith('#')) {
        if (!ownAnchors.has(target.slice(1))) broken.push(`README.md:${line}: no heading for ${target}`);
        continue;
      }
      if (!target.startsWith(`${REPOSITORY}/`)) continue;
      const match = /^\/(blob|tree)\/main\/([^#]+)(?:#(.+))?$/.exec(target.slice(REPOSITORY.length));
      if (!match) {
        broken.push(`README.md:${line}: ${target} is not ${REPOSITORY}/blob/main/… or /tree/main/…`);
        continue;
      }
      const [, kind, path, anchor] = match as unknown as [string, 'blob' | 'tree', string, string | undefined];
      const file = join(root, path);
      if (!existsSync(file)) {
        broken.push(`README.md:${line}: ${path} does not exist`);
      } else if (statSync(file).isDirectory() !== (kind === 'tree')) {
        broken.push(`README.md:${line}: ${path} is ${kind === 'tree' ? 'a file: use /blob/' : 'a folder: use /tree/'}`);
      } else if (anchor !== undefined && !anchors(readFileSync(file, 'utf8')).has(anchor)) {
        broken.push(`README.md:${line}: ${path} has no heading for #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the README headline', () => {
  // Issue 23: merchants read "exactly once" as a promise about their whole deployment.
  it('says how far "exactly once" reaches with each store', () => {
    const headline = readme.slice(0, readme.indexOf('```'));
    expect(headline).toMatch(/in-memory\s+default, within one process until it restarts/);
    expect(headline).toMatch(/RedisWebhookStore[^.]*across a\s+fleet/);
    expect(headline).toMatch(/SQL ledger[^.]*across crashes[^.]*same transaction as your order's writes/);
  });
});

describe('the README quick start', () => {
  // Issue 23: the quick start with the sandbox's settings failed on its http:// base URL.
  it("says what to pass for the sandbox's http:// base URL", () => {
    const start = readme.slice(0, readme.indexOf('## '));
    expect(start).toMatch(/sandbox[^]*allowInsecureLoopback: true/);
    expect(start).toMatch(/loopback hosts only/);
  });
});
