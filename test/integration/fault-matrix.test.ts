/**
 * The client against a real HTTP service on 127.0.0.1 under every fault, for each call:
 * no duplicate payment or withdrawal, no unhandled rejection, every failure a typed error
 * carrying the reference id, nothing left running afterwards. The fake service refuses a
 * second transaction under a used reference_id (A7), as the client assumes.
 */
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MyrGateway,
  MyrGatewayError,
  type MyrGatewayOptions,
  OutcomeUnknownError,
  type TokenStore,
} from '../../src/index.js';
import { paymentParams, recordingSleep, withdrawalParams } from '../helpers/client.js';
import { expectNoSecret, observeCapture } from '../helpers/observe-capture.js';
import { closedPortUrl, json, listen, readBody, service } from '../helpers/real-server.js';

type Fault =
  | 'drop-before-read'
  | 'drop-after-processing'
  | 'delay-past-timeout'
  | '429-envelope'
  | '429-nest'
  | '429-retry-after-0'
  | '429-retry-after-negative'
  | '429-retry-after-garbage'
  | '502'
  | '503'
  | '504'
  | '502-html'
  | 'status-error-200'
  | 'wrong-echo';
const FAULTS: Fault[] = [
  'drop-before-read',
  'drop-after-processing',
  'delay-past-timeout',
  '429-envelope',
  '429-nest',
  '429-retry-after-0',
  '429-retry-after-negative',
  '429-retry-after-garbage',
  '502',
  '503',
  '504',
  '502-html',
  'status-error-200',
  'wrong-echo',
];
type Kind = 'payment' | 'withdrawal';

const processed = new Map<string, { kind: Kind; id: string; amount: number; count: number }>();
const resentAfterProcessing = new Map<string, number>(); // money requests that came after one was processed
const faults = new Map<string, Fault>(); // by reference_id (or status identifier): applies once
const tokenFaults = new Set<string>(); // merchant ids whose next token request gets a 429
const held: ServerResponse[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
let server: Awaited<ReturnType<typeof listen>>;
let timersBefore = 0;
// Every client logs at debug level, with all hooks and a tracer: the last test scans it all for secrets.
const captured = observeCapture();
const API_KEY = 'sk_fault_matrix';
const ACCOUNT_NUMBER = withdrawalParams().account_number;

function rateLimited(res: ServerResponse, fault: Fault) {
  const retryAfter =
    { '429-retry-after-0': '0', '429-retry-after-negative': '-5', '429-retry-after-garbage': 'soon' }[
      fault as string
    ] ?? '1';
  const body =
    fault === '429-nest'
      ? { statusCode: 429, message: 'Too Many Requests', error: 'Too Many Requests', correlationId: 'c-429' }
      : { status: 'error', error: 'RATE_LIMITED', message: 'Too many requests' };
  json(res, 429, body, { 'retry-after': retryAfter });
}

/** Acts on a request as the service would; returns the success body, or undefined if refused. */
function process(kind: Kind, body: { reference_id: string; amount: number }, res: ServerResponse): unknown {
  const existing = processed.get(body.reference_id);
  if (existing) {
    json(res, 409, { status: 'error', error: 'DUPLICATE_REFERENCE', message: 'reference_id already used' });
    return undefined;
  }
  const id = `${kind === 'payment' ? 'PAY' : 'WD'}_${body.reference_id}`;
  processed.set(body.reference_id, { kind, id, amount: body.amount, count: 1 });
  return kind === 'payment'
    ? service.payment(id, body.reference_id, body.amount)
    : service.withdrawal(id, body.reference_id, body.amount);
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const path = req.url ?? '';
  const statusOf = path.match(/\/payment\/status\/(\w+)$/)?.[1];
  const key0 = statusOf ?? '';
  if (faults.get(key0) === 'drop-before-read') {
    faults.delete(key0);
    return req.socket.destroy();
  }
  const text = await readBody(req);
  if (path.endsWith('/auth/token')) {
    const merchant = (JSON.parse(text) as { merchant_id: string }).merchant_id;
    if (tokenFaults.delete(merchant))
      return json(
        res,
        429,
        { status: 'error', error: 'RATE_LIMITED', message: 'Too many requests' },
        { 'retry-after': '1' },
      );
    return json(res, 200, service.token());
  }
  const body = (statusOf ? {} : JSON.parse(text)) as { reference_id: string; amount: number };
  const key = statusOf ?? body.reference_id;
  const fault = faults.get(key);
  faults.delete(key);
  if (!statusOf && processed.has(key)) resentAfterProcessing.set(key, (resentAfterProcessing.get(key) ?? 0) + 1);
  if (fault === 'drop-before-read') return req.socket.destroy();
  if (fault?.startsWith('429')) return rateLimited(res, fault);
  if (fault === '503') return json(res, 503, { status: 'error', error: 'NO_GATEWAY_AVAILABLE', message: 'none' });
  if (fault === '502-html') {
    res.writeHead(502, { 'content-type': 'text/html' });
    return res.end('<html><body>Bad Gateway</body></html>');
  }
  if (statusOf) {
    const record = [...processed.entries()].find(([ref, r]) => ref === statusOf || r.id === statusOf);
    if (fault === 'drop-after-processing') return req.socket.destroy();
    if (fault === 'delay-past-timeout') return void held.push(res);
    if (fault === '502' || fault === '504')
      return json(res, Number(fault), { status: 'error', error: 'GATEWAY_ERROR', message: 'x' });
    if (fault === 'status-error-200') return json(res, 200, { status: 'error', error: 'GATEWAY_ERROR' });
    if (!record) return json(res, 404, { status: 'error', error: 'NOT_FOUND', message: 'no such payment' });
    const [ref, r] = record;
    return json(res, 200, service.status(r.id, fault === 'wrong-echo' ? `${ref}X` : ref, r.amount));
  }
  const kind: Kind = path.endsWith('/payment/withdraw') ? 'withdrawal' : 'payment';
  const answer = process(kind, body, res) as { data: Record<string, unknown> } | undefined;
  if (!answer) return;
  if (fault === 'drop-after-processing') return req.socket.destroy();
  if (fault === 'delay-past-timeout') return void held.push(res);
  if (fault === '502' || fault === '504')
    return json(res, Number(fault), {
      status: 'error',
      error: fault === '502' ? 'GATEWAY_ERROR' : 'GATEWAY_TIMEOUT',
      message: 'upstream',
    });
  if (fault === 'status-error-200')
    return json(res, 200, { status: 'error', error: 'GATEWAY_ERROR', message: 'upstream' });
  if (fault === 'wrong-echo')
    return json(res, 200, {
      ...answer,
      data: { ...answer.data, reference_id: `${body.reference_id}X`, amount: body.amount + 1 },
    });
  return json(res, 200, answer);
}

function client(url = `${server.url}/api/v1`, extra: Partial<MyrGatewayOptions> = {}) {
  const recorder = recordingSleep();
  const gateway = new MyrGateway({
    baseUrl: url,
    merchantId: 'M1',
    apiKey: API_KEY,
    allowInsecureLoopback: true,
    sleep: recorder.sleep,
    random: () => 0.5,
    timeout: 200,
    ...captured.options,
    ...extra,
  });
  return { gateway, delays: recorder.delays };
}

/** A token store whose every operation never settles (a Redis that stopped answering). */
const hangingStore: TokenStore = {
  get: () => new Promise(() => {}),
  set: () => new Promise(() => {}),
  delete: () => new Promise(() => {}),
};
let merchantSerial = 0;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

beforeAll(async () => {
  timersBefore = globalThis.process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  globalThis.process.on('unhandledRejection', onUnhandled);
  server = await listen((req, res) => void handle(req, res));
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await server.close();
  globalThis.process.off('unhandledRejection', onUnhandled);
  captured.restore();
});

type Result = { ok: true; value: unknown } | { ok: false; error: unknown };
const settle = (p: Promise<unknown>): Promise<Result> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe.each(FAULTS)('fault %s', (fault) => {
  it('payment create: at most one payment, a typed error with the reference id or a valid payment', async () => {
    const { gateway } = client();
    const params = paymentParams('MOBILE_WALLET');
    faults.set(params.reference_id, fault);
    const result = await settle(gateway.payments.create(params));
    expect(processed.get(params.reference_id)?.count ?? 0).toBeLessThanOrEqual(1);
    if (result.ok) {
      expect((result.value as { reference_id: string }).reference_id).toBe(params.reference_id);
      expect((result.value as { customer_redirect_url: string }).customer_redirect_url).toMatch(/^https:\/\//);
    } else {
      expect(result.error).toBeInstanceOf(MyrGatewayError);
      expect((result.error as MyrGatewayError).referenceId).toBe(params.reference_id);
    }
  });

  it('withdrawal: never sent again once it may have been processed', async () => {
    const { gateway } = client();
    const params = withdrawalParams();
    faults.set(params.reference_id, fault);
    const result = await settle(gateway.withdrawals.create(params));
    expect(processed.get(params.reference_id)?.count ?? 0).toBeLessThanOrEqual(1);
    expect(resentAfterProcessing.get(params.reference_id) ?? 0).toBe(0);
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(MyrGatewayError);
      expect((result.error as MyrGatewayError).referenceId).toBe(params.reference_id);
      if (['drop-after-processing', 'delay-past-timeout', '502', '504', '502-html'].includes(fault)) {
        expect(result.error).toBeInstanceOf(OutcomeUnknownError);
        expect((result.error as Error).message).not.toContain('retrieve');
      }
    }
  });

  it('status: a typed error or the record asked for', async () => {
    const { gateway } = client();
    const params = paymentParams('MOBILE_WALLET');
    await gateway.payments.create(params);
    faults.set(params.reference_id, fault);
    const result = await settle(gateway.payments.retrieve(params.reference_id));
    if (result.ok) expect((result.value as { reference_id: string }).reference_id).toBe(params.reference_id);
    else expect(result.error).toBeInstanceOf(MyrGatewayError);
  });
});

type TokenFault = 'token-429' | 'token-store-hangs';
describe.each<TokenFault>(['token-429', 'token-store-hangs'])('fault %s', (fault) => {
  // A merchant of its own per call, so each one needs a new token.
  function tokenClient() {
    const merchantId = `M_TOKEN_${++merchantSerial}`;
    if (fault === 'token-429') tokenFaults.add(merchantId);
    return client(
      undefined,
      fault === 'token-store-hangs' ? { merchantId, tokenStore: hangingStore, tokenStoreTimeout: 50 } : { merchantId },
    );
  }
  // Neither fault reaches the money endpoint before a token exists: every call must go through.
  it.each(['payment create', 'withdrawal', 'status'] as const)(
    '%s: succeeds once, after waiting out the token answer',
    async (call) => {
      const { gateway, delays } = tokenClient();
      const payment = paymentParams('MOBILE_WALLET');
      const payout = withdrawalParams();
      const outcome = await settle(
        call === 'payment create'
          ? gateway.payments.create(payment)
          : call === 'withdrawal'
            ? gateway.withdrawals.create(payout)
            : gateway.payments.retrieve('ANY1'),
      );
      if (call === 'status') {
        expect(outcome.ok ? undefined : (outcome.error as MyrGatewayError).code).toBe('NOT_FOUND');
      } else {
        expect(outcome.ok ? 'created' : (outcome.error as MyrGatewayError).code).toBe('created');
        const reference = call === 'payment create' ? payment.reference_id : payout.reference_id;
        expect(processed.get(reference)?.count).toBe(1);
      }
      if (fault === 'token-429') expect(delays[0]).toBeGreaterThanOrEqual(1000); // the server's Retry-After, not less
    },
  );
});

describe('drop before send (connection refused)', () => {
  it('every call retries (nothing was sent) and ends typed, with the reference id for money calls', async () => {
    const { gateway, delays } = client(`${await closedPortUrl()}/api/v1`);
    const params = paymentParams();
    const payout = withdrawalParams();
    const results = await Promise.all([
      settle(gateway.payments.create(params)),
      settle(gateway.withdrawals.create(payout)),
      settle(gateway.payments.retrieve('ANY1')),
    ]);
    for (const result of results)
      expect(result.ok ? undefined : (result.error as MyrGatewayError).code).toBe('NETWORK_ERROR');
    expect(results.map((r) => (r.ok ? undefined : (r.error as MyrGatewayError).referenceId))).toEqual([
      params.reference_id,
      payout.reference_id,
      undefined,
    ]);
    expect(delays.length).toBeGreaterThan(0);
  });
});

describe('afterwards', () => {
  it('no api key, token or full account number in anything logged, hooked or spanned', async () => {
    await captured.flush(); // the in-memory exporter settles each export on a timer of its own
    const text = captured.dump();
    expectNoSecret(text, {
      API_KEY,
      token: service.token().data.access_token,
      'full account number': ACCOUNT_NUMBER,
      bearer: 'Bearer ',
    });
    // The capture saw the matrix: every call, its retries and its outcome.
    const spans = captured.spans();
    expect(spans.filter((s) => s.name === 'myr-gateway POST /payment/withdraw').length).toBeGreaterThanOrEqual(
      FAULTS.length,
    );
    expect(spans.some((s) => s.events.some((e) => e.name === 'myr.retry'))).toBe(true);
    expect(captured.hooks.filter((h) => h.hook === 'onRetry').length).toBeGreaterThan(FAULTS.length);
    expect(
      captured.lines.some(
        ([level, message]) => level === 'info' && String(message).includes('failed with OUTCOME_UNKNOWN'),
      ),
    ).toBe(true);
    for (const reference of processed.keys()) expect(text).toContain(reference);
  });

  it('a process that met the faults exits on its own: nothing the SDK started keeps it alive', async () => {
    const reference = `EXIT${Date.now()}`;
    // The answer never comes: the attempt times out. Its 3 s leave the steps meant to succeed (the
    // token, the lookup by reference) room on a loaded machine.
    faults.set(reference, 'delay-past-timeout');
    const script = `
import { MyrGateway } from ${JSON.stringify(`${ROOT}src/index.ts`)};
const hanging = { get: () => new Promise(() => {}), set: () => new Promise(() => {}), delete: () => new Promise(() => {}) };
const gateway = new MyrGateway({ baseUrl: process.env.BASE_URL, merchantId: 'M_EXIT_MATRIX', apiKey: 'sk_exit', allowInsecureLoopback: true,
  tokenStore: hanging, tokenStoreTimeout: 50, timeout: 3000, maxRetries: 0 });
const params = { amount: 100, reference_id: process.env.REFERENCE, customer_name: 'A', customer_phone: '60123', payment_method: 'QR_PAYMENT' };
for (const call of [() => gateway.payments.create(params), () => gateway.payments.retrieve('NOPE1')]) {
  try { await call(); console.log('ok'); } catch (error) { console.log(error.code); }
}
`;
    const proc = spawn(globalThis.process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { ...globalThis.process.env, BASE_URL: `${server.url}/api/v1`, REFERENCE: reference },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exit = await new Promise<number | null | 'still running'>((resolve) => {
      const guard = setTimeout(() => {
        proc.kill('SIGKILL');
        resolve('still running');
      }, 20_000); // generous for a loaded machine; the SDK's own limits in the script are far shorter
      proc.on('exit', (code) => {
        clearTimeout(guard);
        resolve(code);
      });
    });
    expect(exit).toBe(0);
    // The create timed out after the service stored it; the lookup found it, without a customer URL.
    expect(stdout.trim().split('\n')).toEqual(['PAYMENT_URL_UNAVAILABLE', 'NOT_FOUND']);
  }, 30_000);

  it('no duplicate payment or withdrawal, no unhandled rejection, no timer left running', async () => {
    for (const record of processed.values()) expect(record.count).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    const timers = globalThis.process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(timers).toBeLessThanOrEqual(timersBefore);
  });
});
