/**
 * Issue 23: a body parser that reshapes the callback (numbers turned into strings, keys
 * camel-cased) cannot be verified: the signature covers the fields as the gateway sent them.
 * The adapter still refuses (the gateway must see a non-2xx), and its log line says a parser
 * reshaped the body and names the fix.
 */
import express from 'express';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createExpressMiddleware, createFastifyHandler } from '../../src/webhooks/index.js';
import { API_KEY, NOW, callback } from '../fixtures/webhook-vectors-helpers.js';
import { PATH, listen, type Running } from './webhook-apps.js';
import { createServer } from 'node:http';

const running: Running[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
});

function recordingLogger() {
  const lines: { level: string; args: unknown[] }[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      void lines.push({ level, args });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const camel = (key: string) => key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
function camelKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), camelKeys(v)]));
}

async function deliver(url: string) {
  const cb = await callback();
  const response = await fetch(url, { method: 'POST', headers: cb.headers, body: cb.raw });
  return { status: response.status, json: (await response.json()) as unknown };
}

function expectHint(lines: { level: string; args: unknown[] }[], fix: string) {
  expect(lines).toHaveLength(1);
  const [text, fields] = lines[0]?.args ?? [];
  expect(lines[0]?.level).toBe('warn');
  expect(text).toMatch(/a body parser reshaped the callback body/);
  expect(text).toContain(fix);
  expect(fields).toMatchObject({ code: 'WEBHOOK_VERIFICATION_FAILED', reason: 'malformed' });
}

describe('a callback body reshaped by a parser', () => {
  it('Fastify with a parser that camel-cases keys: 400, and the line names fastifyWebhookPlugin', async () => {
    const { logger, lines } = recordingLogger();
    const app = Fastify();
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, camelKeys(JSON.parse(String(body)))),
    );
    app.post(
      PATH,
      { bodyLimit: 65_536 },
      createFastifyHandler({ verifier: { apiKey: API_KEY, clock: () => NOW }, onEvent: () => {}, logger }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    running.push({ url: '', close: () => app.close() });
    const { port } = app.server.address() as { port: number };
    const answer = await deliver(`http://127.0.0.1:${port}${PATH}`);
    expect(answer).toEqual({ status: 400, json: { ok: false, outcome: 'rejected', reason: 'malformed' } });
    expectHint(lines, 'fastifyWebhookPlugin');
  });

  it('Express with a JSON parser whose reviver turns numbers into strings: 400, and the line names a raw parser', async () => {
    const { logger, lines } = recordingLogger();
    const app = express();
    app.use(
      express.json({ reviver: (_key: string, value: unknown) => (typeof value === 'number' ? String(value) : value) }),
    );
    app.post(
      PATH,
      createExpressMiddleware({ verifier: { apiKey: API_KEY, clock: () => NOW }, onEvent: () => {}, logger }),
    );
    const server = await listen(createServer(app));
    running.push(server);
    const answer = await deliver(server.url);
    expect(answer).toEqual({ status: 400, json: { ok: false, outcome: 'rejected', reason: 'malformed' } });
    expectHint(lines, 'raw');
  });
});
