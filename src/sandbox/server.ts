/**
 * `createSandbox`: the mock service (the same one `myr-gateway/testing` binds to msw) served
 * over node:http on 127.0.0.1, with hosted payment pages, a live dashboard, callbacks on the
 * real schedule (sent by `testing/callback-sender.ts`, logged by `delivery-log.ts`), optional
 * `--data` persistence and fault options. Local development only.
 *
 * @module
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GATEWAY_PAGES } from '../testing/money-endpoints.js';
import { faultAnswer } from '../testing/responses.js';
import { answerThroughDispatch } from '../testing/server.js';
import { createMockService, type MockService } from '../testing/service.js';
import type { CallbackDelivery, CallbackOptions } from '../testing/types/callbacks.js';
import { deriveSigningKeyBytesWeb } from '../webhooks/signing-scheme.js';
import { broadcast, handleApp, type AppContext } from './app.js';
import { DeliveryLog } from './delivery-log.js';
import { apiRefusal, hostAllowed, sendApiError, sendText } from './http.js';
import { createSaver, loadData, type SandboxData } from './persistence.js';
import { qrPayload } from './qr.js';
import { wait as sleep } from '../core/wait.js';
import { isMilliseconds, MAX_TIMER_MS } from '../core/milliseconds.js';

/** The sandbox's default merchant: well-known sandbox credentials, never secrets. */
export const SANDBOX_MERCHANT = Object.freeze({ merchantId: 'MERCHANT_SANDBOX', apiKey: 'sk_sandbox_local_key_0001' });

/** Prefixes of the keys the sandbox takes without `allowAnyKey`: keys that are test keys by their name. */
export const SANDBOX_KEY_PREFIXES = ['sk_sandbox_', 'sk_test_'] as const;

/**
 * Why `apiKey` may not be used, or undefined when it may. Anything else may be a live key
 * pasted by mistake: the sandbox would sign callbacks with it and keep it in `--data`.
 */
export function apiKeyProblem(apiKey: string, allowAnyKey = false): string | undefined {
  if (allowAnyKey || SANDBOX_KEY_PREFIXES.some((prefix) => apiKey.startsWith(prefix))) return undefined;
  return `the api key must start with ${SANDBOX_KEY_PREFIXES.join(' or ')} (a sandbox or test key); pass --allow-any-key to use another key`;
}

/** Options of {@link createSandbox} (the CLI's flags). */
export interface SandboxOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  merchantId?: string;
  /** Must start with `sk_sandbox_` or `sk_test_` unless `allowAnyKey`. */
  apiKey?: string;
  /** Takes an `apiKey` of any form. */
  allowAnyKey?: boolean;
  /** The merchant's default callback URL (http allowed: the sandbox is a test environment). */
  callbackUrl?: string;
  /** JSON file that keeps payments, withdrawals, tokens and deliveries across restarts. */
  dataFile?: string;
  /** Extra milliseconds before every API answer. */
  latencyMs?: number;
  /** Share (0..1) of API requests answered 502 GATEWAY_ERROR before anything is processed. */
  failRate?: number;
  /** Counts each API request against the rate limit only after this delay (the mock's `rateLimitCountDelay`). */
  rateLimitCountDelay?: { latencyMs: number; jitterMs?: number };
  /** Waits after a failed callback attempt; the spec's [1000, 5000] by default. */
  retryDelaysMs?: number[];
  /** Source of randomness for `failRate` (tests inject it). */
  random?: () => number;
}

/** A running sandbox. */
export interface Sandbox {
  /** `http://127.0.0.1:<port>`; the dashboard is at `/`. */
  readonly origin: string;
  /** The API's base URL, `http://127.0.0.1:<port>/api/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  readonly merchant: { merchantId: string; apiKey: string };
  /** Hex of the key callbacks are signed with (derived from the api key, as the spec says). */
  readonly signingKeyHex: string;
  readonly callbackUrl: string | undefined;
  /** The service itself, for in-process use. */
  readonly service: MockService;
  /** Stops listening, ends event streams, writes `--data` one last time. */
  close(): Promise<void>;
}

/** The page of each method, in a Map: the method comes from the `--data` file, never an inherited key. */
const PAGE_OF_METHOD = new Map(Object.entries(GATEWAY_PAGES));

const API_PATH = '/api/v1';

function checkOptions(options: SandboxOptions): void {
  const keyProblem = options.apiKey === undefined ? undefined : apiKeyProblem(options.apiKey, options.allowAnyKey);
  if (keyProblem) throw new RangeError(keyProblem);
  if (options.failRate !== undefined && !(options.failRate >= 0 && options.failRate <= 1)) {
    throw new RangeError('failRate must be a number from 0 to 1');
  }
  // The SDK's one millisecond rule: a timer given more than it holds fires after 1 ms.
  if (options.latencyMs !== undefined && !isMilliseconds(options.latencyMs, 0)) {
    throw new RangeError(`latencyMs must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS}`);
  }
  if (options.callbackUrl !== undefined) {
    const protocol = URL.canParse(options.callbackUrl) ? new URL(options.callbackUrl).protocol : '';
    if (protocol !== 'http:' && protocol !== 'https:')
      throw new RangeError('callbackUrl must be an absolute http:// or https:// URL');
  }
}

/**
 * Starts a sandbox on 127.0.0.1.
 *
 * @example
 * ```ts
 * const sandbox = await createSandbox({ callbackUrl: 'http://127.0.0.1:3000/webhooks/myr' });
 * const gateway = new MyrGateway({ baseUrl: sandbox.baseUrl, ...sandbox.merchant, allowInsecureLoopback: true });
 * await sandbox.close();
 * ```
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  checkOptions(options);
  const merchant = {
    merchantId: options.merchantId ?? SANDBOX_MERCHANT.merchantId,
    apiKey: options.apiKey ?? SANDBOX_MERCHANT.apiKey,
  };
  const saved = options.dataFile ? loadData(options.dataFile) : undefined;
  const random = options.random ?? Math.random;
  const streams = new Set<ServerResponse>();
  // Set once the port is known; requests that arrive before get 503.
  const live: { ctx?: AppContext } = {};
  let saver: ReturnType<typeof createSaver> | undefined;
  let notifyQueued = false;
  const changed = () => {
    saver?.schedule();
    if (notifyQueued) return;
    notifyQueued = true;
    setImmediate(() => {
      notifyQueued = false;
      broadcast(streams);
    });
  };

  const server = createServer((req, res) => {
    const ctx = live.ctx;
    if (!ctx) return sendText(res, 503, 'starting');
    if (!hostAllowed(req, ctx.port)) return sendText(res, 421, 'this sandbox answers only to 127.0.0.1 and localhost');
    const url = new URL(req.url ?? '/', ctx.baseUrl);
    const isApi = url.pathname === API_PATH || url.pathname.startsWith(`${API_PATH}/`);
    const refusal = isApi ? apiRefusal(req, ctx.port) : undefined;
    if (refusal) {
      req.resume();
      return sendApiError(res, refusal);
    }
    const work = isApi
      ? answerThroughDispatch(api, new URL(ctx.baseUrl).origin, req, res).finally(changed)
      : handleApp(ctx, req, res, url);
    work.catch((error: unknown) => {
      console.error(
        `sandbox: ${req.method} ${url.pathname} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      if (!res.headersSent) sendText(res, 500, 'sandbox failure (see its terminal)');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo; // listening on a TCP port: an AddressInfo, not a pipe name
  const origin = `http://127.0.0.1:${port}`;

  const deliveries = new DeliveryLog(changed);
  const service = createMockService({
    baseUrl: `${origin}${API_PATH}`,
    pageOrigin: origin,
    environment: 'test',
    merchants: [{ ...merchant, ...(options.callbackUrl ? { defaultCallbackUrl: options.callbackUrl } : {}) }],
    qrDataString: qrPayload,
    ...(options.rateLimitCountDelay ? { rateLimitCountDelay: options.rateLimitCountDelay } : {}),
    onDelivery: (delivery, record) => deliveries.observe(delivery, record, Date.now()),
  });
  const callbackOptions: CallbackOptions = options.retryDelaysMs ? { retryDelaysMs: options.retryDelaysMs } : {};
  if (saved) {
    // Pages move with the port: point stored payments at this run's origin.
    for (const record of saved.records) {
      if (record.kind !== 'DEPOSIT') continue;
      record.payment_url = `${origin}/pay/${encodeURIComponent(record.payment_id)}`;
      record.gateway_redirect_url = `${origin}/${PAGE_OF_METHOD.get(record.payment_method) ?? 'pay'}/${encodeURIComponent(record.payment_id)}`;
    }
    service.restore(saved);
    deliveries.restore(saved.deliveries);
  }
  if (options.dataFile) {
    const collect = (): SandboxData => ({ version: 1, ...service.snapshot(), deliveries: deliveries.list().reverse() });
    saver = createSaver(options.dataFile, collect);
    saver.flush();
  }

  async function api(request: Request): Promise<Response> {
    if (options.latencyMs) await sleep(options.latencyMs);
    if (options.failRate && random() < options.failRate) {
      const context = {
        correlationId: globalThis.crypto.randomUUID(),
        path: new URL(request.url).pathname,
        now: Date.now(),
      };
      return faultAnswer(
        { type: 'status', status: 502, message: 'Sandbox --fail-rate: injected failure, nothing was processed' },
        context,
        undefined,
      );
    }
    return service.dispatch(request);
  }

  const track = (delivery: Promise<CallbackDelivery>) => {
    changed();
    delivery.then(
      (done) => deliveries.finish(done),
      (error: unknown) =>
        console.error(`sandbox: callback failed to start: ${error instanceof Error ? error.message : String(error)}`),
    );
  };
  live.ctx = {
    port,
    baseUrl: service.baseUrl,
    merchantId: merchant.merchantId,
    defaultCallbackUrl: options.callbackUrl,
    service,
    callbackOptions,
    deliveries,
    track,
    streams,
  };
  const signingKeyHex = Buffer.from(await deriveSigningKeyBytesWeb(merchant.apiKey)).toString('hex');

  return {
    origin,
    baseUrl: service.baseUrl,
    port,
    merchant,
    signingKeyHex,
    callbackUrl: options.callbackUrl,
    service,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const stream of streams) stream.end();
        streams.clear();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
        saver?.stop();
      }),
  };
}
