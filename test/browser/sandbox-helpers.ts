/**
 * Helpers of the sandbox browser test: build and start the real `myr-gateway` bin, a
 * merchant's Express app that verifies callbacks, and headless Debian Chromium.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import express from 'express';
import { chromium, type BrowserContext } from 'playwright-core';
import { build } from 'tsup';
import { createExpressMiddleware, type WebhookEvent } from '../../src/webhooks/index.js';
import { sandboxCli } from '../../tsup.config.js';

export const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Builds the bin from src with the options of tsup.config.ts's `sandbox/cli` entry, into
 * .tmp (the tests run before `npm run build` in CI, and must not wipe dist/).
 */
export async function buildCli(): Promise<string> {
  const outDir = join(ROOT, '.tmp', 'sandbox-bin');
  await build({
    ...sandboxCli,
    config: false,
    entry: { 'sandbox/cli': join(ROOT, 'src/sandbox/cli.ts') },
    sourcemap: false,
    outDir,
    silent: true,
  });
  return join(outDir, 'sandbox', 'cli.js');
}

/** A started bin and what it printed. */
export interface CliSandbox {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  origin: string;
  baseUrl: string;
  merchantId: string;
  apiKey: string;
  /** Printed only for the sandbox's own api key. */
  signingKey: string | undefined;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** This process's environment without an api key of the developer's own, plus `extra`. */
function cliEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.MYR_SANDBOX_API_KEY;
  return { ...env, ...extra };
}

/** Starts `node cli.js sandbox …args` and waits for its ready banner. */
export async function startCli(cli: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliSandbox> {
  const child = spawn(process.execPath, [cli, 'sandbox', ...args], { cwd: ROOT, env: cliEnv(env) });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  await new Promise<void>((ready, fail) => {
    const check = () => {
      if (out.includes('Press Ctrl-C')) ready();
    };
    child.stdout.on('data', check);
    void exited.then((code) => fail(new Error(`sandbox exited with ${code}: ${out}`)));
  });
  const field = (label: string) => {
    const match = new RegExp(`^  ${label}\\s+(\\S+)`, 'm').exec(out);
    if (!match) throw new Error(`no ${label} in ${out}`);
    return match[1] as string;
  };
  const baseUrl = field('Base URL');
  return {
    child,
    output: () => out,
    origin: new URL(baseUrl).origin,
    baseUrl,
    merchantId: field('Merchant id'),
    apiKey: field('API key'),
    signingKey: /^ {2}Signing key/m.test(out) ? field('Signing key') : undefined,
    exited,
  };
}

/** The merchant's app: every raw POST and every verified event it handled. */
export interface MerchantApp {
  url: string;
  posts: number;
  events: WebhookEvent[];
  close(): Promise<void>;
}

/** A real Express app verifying callbacks with `apiKey` through the SDK's middleware. */
export async function startMerchant(apiKey: () => string): Promise<MerchantApp> {
  const app = express();
  const merchant: MerchantApp = { url: '', posts: 0, events: [], close: async () => {} };
  app.use((_req, _res, next) => {
    merchant.posts += 1;
    next();
  });
  let middleware: ReturnType<typeof createExpressMiddleware> | undefined;
  app.post('/webhooks', (req, res, next) => {
    middleware ??= createExpressMiddleware({
      verifier: { apiKey: apiKey() },
      onEvent: (event) => void merchant.events.push(event),
    });
    void middleware(req, res, next);
  });
  const server: Server = await new Promise((done) => {
    const s = app.listen(0, '127.0.0.1', () => done(s));
  });
  merchant.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  merchant.close = () => new Promise((done) => server.close(() => done()));
  return merchant;
}

/** Headless Debian Chromium, no browser download, a fresh profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'myr-sandbox-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // No name lookups leave the machine: only 127.0.0.1 is reachable.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until `predicate` holds, polling every 20 ms (no fixed sleeps); fails after `ms`. */
export async function until(predicate: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs `node cli.js sandbox …args` that is expected to refuse and exit; its code and output (stopped after 10 s). */
export function runCliToExit(cli: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [cli, 'sandbox', ...args], { cwd: ROOT, env: cliEnv({}) });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // A bin that did not refuse would run forever: stop it, so a failing test leaves no process behind.
  const timer = setTimeout(() => child.kill('SIGTERM'), 10_000);
  return new Promise((done) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, output });
    }),
  );
}
