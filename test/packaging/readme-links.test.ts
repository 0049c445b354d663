// The README is the package's page on npm, where a relative link (docs/…, examples/…) leads
// nowhere: docs/ has no page of its own there. Every link of the README into the repository is an
// absolute https://github.com/myr-gateway/myr-gateway/… URL, and each must name a file or folder
// (and a heading) that exists here, on the branch it will be read from.
//
// docs/*.md ship in the tarball and are read there too (node_modules/myr-gateway/docs): a relative
// link of theirs must name a file the tarball holds (`npm pack` says which), so the examples they
// link to ship with them, and a link to what never ships (test/, src/) is an absolute URL.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
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
      const problem = repositoryLinkProblem(target);
      if (problem !== undefined) broken.push(`README.md:${line}: ${problem}`);
    }
    expect(broken).toEqual([]);
  });
});

/** Why an absolute link into the repository leads nowhere; undefined when it works (or is not one). */
function repositoryLinkProblem(target: string): string | undefined {
  if (!target.startsWith(`${REPOSITORY}/`)) return undefined;
  const match = /^\/(blob|tree)\/main\/([^#]+)(?:#(.+))?$/.exec(target.slice(REPOSITORY.length));
  if (!match) return `${target} is not ${REPOSITORY}/blob/main/… or /tree/main/…`;
  const [, kind, path, anchor] = match as unknown as [string, 'blob' | 'tree', string, string | undefined];
  const file = join(root, path);
  if (!existsSync(file)) return `${path} does not exist`;
  if (statSync(file).isDirectory() !== (kind === 'tree'))
    return `${path} is ${kind === 'tree' ? 'a file: use /blob/' : 'a folder: use /tree/'}`;
  if (anchor !== undefined && !anchors(readFileSync(file, 'utf8')).has(anchor))
    return `${path} has no heading for #${anchor}`;
  return undefined;
}

/** The files `npm pack` puts in the tarball, as paths from the package's root. */
function packed(): string[] {
  const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return (JSON.parse(json) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
}

describe('docs links work in the npm tarball, as in the repository', () => {
  const shipped = packed();
  const ships = (path: string) => shipped.includes(path) || shipped.some((file) => file.startsWith(`${path}/`));
  const docs = shipped.filter((file) => /^docs\/[^/]+\.md$/.test(file));

  it('finds the docs in the tarball, and the links between them', () => {
    expect(docs).toContain('docs/payouts.md');
    expect(docs.flatMap((doc) => links(readFileSync(join(root, doc), 'utf8'))).length).toBeGreaterThan(100);
  });

  it('links relatively only to files and folders the tarball holds, and to headings that exist', () => {
    const broken: string[] = [];
    for (const doc of docs) {
      const markdown = readFileSync(join(root, doc), 'utf8');
      for (const { line, target } of links(markdown)) {
        const where = `${doc}:${line}`;
        if (/^(?:https?:|mailto:)/.test(target)) {
          const problem = repositoryLinkProblem(target);
          if (problem !== undefined) broken.push(`${where}: ${problem}`);
          continue;
        }
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? doc : posix.normalize(posix.join(posix.dirname(doc), path)).replace(/\/$/, '');
        if (file.startsWith('../') || !ships(file)) {
          broken.push(`${where}: ${target} is not in the tarball (ship it, or link ${REPOSITORY}/blob/main/…)`);
        } else if (
          anchor !== undefined &&
          file.endsWith('.md') &&
          !anchors(readFileSync(join(root, file), 'utf8')).has(anchor)
        ) {
          broken.push(`${where}: ${file} has no heading for #${anchor}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('ships each linked example with what it imports (the examples import only each other and packages)', () => {
    const missing: string[] = [];
    for (const example of shipped.filter((file) => /^examples\/.*\.ts$/.test(file))) {
      const source = readFileSync(join(root, example), 'utf8');
      for (const [, specifier] of source.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const file = posix.normalize(posix.join(posix.dirname(example), specifier!.replace(/\.js$/, '.ts')));
        if (!shipped.includes(file)) missing.push(`${example}: ${specifier} (${file}) is not in the tarball`);
      }
    }
    expect(missing).toEqual([]);
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

describe('docs that build the client from the environment', () => {
  // Trial payouts: docs/payouts.md's `new MyrGateway()` refused the sandbox's http:// base URL,
  // and no environment variable allows it.
  it.each(['docs/payouts.md', 'docs/sandbox.md'])("%s says what to pass for the sandbox's http:// base URL", (doc) => {
    const text = readFileSync(join(root, doc), 'utf8');
    expect(text).toMatch(/[Nn]o (?:environment )?variable allows plain http/);
    expect(text).toMatch(/new MyrGateway\(\{ allowInsecureLoopback: /);
  });
});
