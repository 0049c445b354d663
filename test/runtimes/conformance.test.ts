// Runtime conformance: the packed package, installed into an empty project, on Bun, Deno
// and workerd (Cloudflare Workers). Each runtime verifies genuine, tampered, stale and
// replayed callbacks, serves the Web handler on its own server, and drives the client
// over fetch against the mock, which runs here in Node on 127.0.0.1.
//
// A runtime is skipped only when its binary is missing (npm install did not bring it), and
// then loudly; under CI=true a missing binary fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/mock-gateway.js';
import {
  binaries,
  hasBinary,
  installPackedPackage,
  makeWorkDir,
  readVersion,
  runCli,
  runWorkerd,
  signConformanceCallbacks,
  type ConformanceCallbacks,
  type RuntimeName,
} from './harness.js';

const inCi = process.env.CI === 'true' || process.env.CI === '1';
interface Runtime {
  label: string;
  name: RuntimeName;
  /** The crypto path the verifier's 'auto' must pick there. */
  autoCryptoPath: 'node' | 'web';
  compatibilityDate?: string;
}
const runtimes: Runtime[] = [
  { label: 'bun', name: 'bun', autoCryptoPath: 'node' },
  { label: 'deno', name: 'deno', autoCryptoPath: 'node' },
  // From a 2026 compatibility date on, workerd gives Workers `process` and node:crypto.
  {
    label: 'workerd (compatibility date 2026-11-01)',
    name: 'workerd',
    autoCryptoPath: 'node',
    compatibilityDate: '2026-11-01',
  },
  // Before it, as on Vercel Edge: no `process`, no Buffer, no node:crypto; Web Crypto only.
  {
    label: 'workerd without Node APIs (compatibility date 2026-06-01)',
    name: 'workerd',
    autoCryptoPath: 'web',
    compatibilityDate: '2026-06-01',
  },
];

const missing = [...new Set(runtimes.map((r) => r.name))].filter((name) => !hasBinary(name));
if (missing.length > 0 && !inCi) {
  console.warn(
    `\n!!! runtime conformance: SKIPPING ${missing.join(', ')}: no binary at ` +
      `${missing.map((name) => binaries[name]).join(', ')}. Run npm install (the devDependencies bring them).\n`,
  );
}

let app = '';
let cleanup = () => {};
beforeAll(async () => {
  if (missing.length === Object.keys(binaries).length) return;
  const dir = makeWorkDir();
  cleanup = dir.cleanup;
  app = await installPackedPackage(dir.work);
}, 180_000);
afterAll(() => cleanup());

function expectRefusal(observed: unknown, reason: string): void {
  expect(observed).toEqual({
    error: {
      name: 'WebhookVerificationError',
      code: 'WEBHOOK_VERIFICATION_FAILED',
      reason,
      isMyrGatewayError: true,
    },
  });
}

function expectEvent(observed: unknown, cb: ConformanceCallbacks['genuine']): void {
  expect(observed).toEqual({
    event: {
      transaction_type: 'DEPOSIT',
      webhook_id: cb.body.webhook_id,
      payment_id: cb.body.payment_id,
      reference_id: cb.body.reference_id,
      amount: 120.5,
      status: 'SUCCESS',
    },
  });
}

const processed = { status: 200, body: { ok: true, outcome: 'processed' } };
const duplicate = { status: 200, body: { ok: true, outcome: 'duplicate' } };
const rejected = (status: number, reason: string) => ({ status, body: { ok: false, outcome: 'rejected', reason } });
const json = 'application/json; charset=utf-8';

describe('runtime conformance of the packed package', () => {
  for (const { label, name, autoCryptoPath, compatibilityDate } of runtimes) {
    it(`${label}: verifies callbacks, serves the Web handler, drives the client over fetch`, async (ctx) => {
      if (!hasBinary(name)) {
        if (inCi)
          throw new Error(`CI must prove ${name}, but ${binaries[name]} is missing: npm install did not bring it`);
        ctx.skip();
      }
      const mock = createMockGateway();
      const server = await mock.serve();
      try {
        const referenceId = `RT${name.toUpperCase()}${compatibilityDate?.replaceAll('-', '') ?? ''}`;
        const callbacks = await signConformanceCallbacks(
          mock.merchant.apiKey,
          `PAY_${name.toUpperCase()}`,
          referenceId,
        );
        const input = {
          apiKey: mock.merchant.apiKey,
          merchantId: mock.merchant.merchantId,
          mockBaseUrl: server.baseUrl,
          referenceId,
          callbacks,
        };
        const report =
          name === 'workerd' ? await runWorkerd(app, input, compatibilityDate ?? '') : await runCli(name, app, input);

        expect(report.runtime.name).toBe(name);
        expect(report.version).toBe(readVersion());
        expect(report.errorTreeShared).toBe(true);

        // (a) verifier and exactly-once handler, on the runtime's own crypto path and on Web Crypto.
        for (const mode of ['auto', 'web'] as const) {
          const v = report.verifier[mode];
          expect(v.cryptoPath).toBe(mode === 'web' ? 'web' : autoCryptoPath);
          expectEvent(v.genuine, callbacks.genuine);
          expectRefusal(v.tampered, 'invalid_signature');
          expectRefusal(v.stale, 'stale');
          expect(v.handlerFirst).toEqual(processed);
          expect(v.handlerReplay).toEqual(duplicate);
          expect(v.handlerRedelivery).toEqual(duplicate);
          expect(v.handlerRuns).toEqual([callbacks.genuine.body.webhook_id]);
        }

        // (b) the Web handler behind the runtime's own server.
        const w = report.webHandler;
        expect(w.genuine).toEqual({ ...processed, contentType: json });
        expect(w.replay).toEqual({ ...duplicate, contentType: json });
        expect(w.redelivery).toEqual({ ...duplicate, contentType: json });
        expect(w.tampered).toEqual({ ...rejected(401, 'invalid_signature'), contentType: json });
        expect(w.stale).toEqual({ ...rejected(400, 'stale'), contentType: json });
        expect(w.missingSignature).toEqual({ ...rejected(401, 'missing_signature'), contentType: json });
        expect(w.malformed).toEqual({ ...rejected(400, 'malformed'), contentType: json });
        expect(w.get).toEqual({ status: 405, contentType: json, body: { ok: false, outcome: 'rejected' } });
        expect(w.runs).toEqual([callbacks.genuine.body.webhook_id]);

        // (c) the client over the runtime's fetch, against the mock on 127.0.0.1.
        const stored = mock.getPayment(referenceId);
        expect(stored?.status).toBe('PROCESSING');
        const c = report.client;
        expect(c.created).toMatchObject({ payment_id: stored?.payment_id, status: 'PROCESSING' });
        expect(c.retrieved).toMatchObject({
          payment_id: stored?.payment_id,
          reference_id: referenceId,
          status: 'PROCESSING',
        });
        expect(c.invalidAmount).toEqual({
          error: { name: 'InvalidRequestError', code: expect.any(String), field: 'amount', isMyrGatewayError: true },
        });
        expect(c.duplicateReference.error).toMatchObject({
          name: 'DuplicateReferenceError',
          code: 'DUPLICATE_REFERENCE',
          isMyrGatewayError: true,
        });
        // The invalid amount never reached the mock: two creates (first and duplicate), one status.
        expect(mock.count('payment.create')).toBe(2);
        expect(mock.count('auth')).toBe(1);
      } finally {
        await server.close();
      }
    }, 90_000); // above the harness's own limits, so a hung runtime fails with its output
  }
});
