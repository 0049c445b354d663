/**
 * What a merchant sees of the client's calls: log lines in console, pino and winston, request
 * hooks, OpenTelemetry spans (explicit tracer and the globally registered provider) and the
 * response metadata on results.
 */
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import winston from 'winston';
import { ConfigurationError, type Logger, MemoryTokenStore, type TokenStore } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams, withdrawalParams } from '../helpers/client.js';
import { expectNoSecret, observeCapture } from '../helpers/observe-capture.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

const API_KEY = mock.merchant.apiKey;

describe('request hooks', () => {
  it('tell each attempt, its answer and the retry, with correlation id and rate-limit headers, and no secret', async () => {
    const cap = observeCapture();
    try {
      const { gateway } = clientFor(mock, { ...cap.options, tracer: false });
      const params = paymentParams();
      mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' } });
      await gateway.payments.create(params);
      const create = cap.hooks.filter((h) => (h.event as { path: string }).path === '/payment/request');
      expect(create.map((h) => [h.hook, (h.event as { attempt: number }).attempt])).toEqual([
        ['onRequest', 1],
        ['onResponse', 1],
        ['onRetry', 1],
        ['onRequest', 2],
        ['onResponse', 2],
      ]);
      const [, failed, retry, , ok] = create.map((h) => h.event as Record<string, unknown>);
      expect(failed).toMatchObject({
        method: 'POST',
        status: 502,
        errorCode: 'GATEWAY_ERROR',
        referenceId: params.reference_id,
      });
      expect(retry).toMatchObject({ status: 502, errorCode: 'GATEWAY_ERROR', delayMs: 1000 });
      expect(ok).toMatchObject({ status: 200, errorCode: undefined, referenceId: params.reference_id });
      expect(ok?.correlationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(ok?.rateLimit).toMatchObject({
        limit: expect.any(Number),
        remaining: expect.any(Number),
        reset: expect.any(Number),
      });
      expect(typeof ok?.durationMs).toBe('number');
      // The token request is hooked too, but its body (the api key) and the token are not.
      expect(cap.hooks.some((h) => (h.event as { path: string }).path === '/auth/token')).toBe(true);
      expectNoSecret(cap.dump(), { API_KEY, authorization: 'Bearer ' });
    } finally {
      cap.restore();
    }
  });

  it('a hook that throws or rejects changes nothing about the call', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const lines: unknown[][] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (...a: unknown[]) => void lines.push(a),
      error: () => undefined,
    };
    const { gateway } = clientFor(mock, {
      logger,
      onRequest: () => {
        throw new Error('hook bug');
      },
      onResponse: () => Promise.reject(new Error('async hook bug')),
    });
    const payment = await gateway.payments.create(paymentParams());
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    expect(payment.status).toBe('PROCESSING');
    expect(unhandled).toEqual([]);
    expect(lines.map((l) => l[0])).toContain('myr-gateway: the onRequest hook threw; ignoring it');
  });
});

describe('lastResponse', () => {
  it('gives correlation id, rate limit and attempts without changing the result', async () => {
    const { gateway } = clientFor(mock);
    mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter: 1 } });
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.lastResponse).toMatchObject({
      status: 200,
      attempts: 2,
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(payment.lastResponse.rateLimit?.limit).toEqual(expect.any(Number));
    expect(Object.keys(payment)).not.toContain('lastResponse');
    expect(JSON.stringify(payment)).not.toContain('lastResponse');
    expect({ ...payment }).not.toHaveProperty('lastResponse');
    expect(inspect(payment)).not.toContain('lastResponse');

    const status = await gateway.payments.retrieve(payment.reference_id);
    expect(status.lastResponse).toMatchObject({ status: 200, attempts: 1 });
    const payout = await gateway.withdrawals.create(withdrawalParams());
    expect(payout.lastResponse.attempts).toBe(1);
    expect(JSON.stringify(payout.lastResponse)).not.toContain(withdrawalParams().account_number);
  });

  it('on a payment recovered after a lost answer, is the lookup that found it', async () => {
    const { gateway } = clientFor(mock, { maxRetries: 0 });
    const params = paymentParams();
    mock.fault({
      endpoint: 'payment.create',
      when: 'after',
      response: { type: 'status', status: 504, code: 'GATEWAY_TIMEOUT' },
    });
    const record = {
      payment_id: 'PAY_X1',
      payment_url: 'https://pay.example/PAY_X1',
      status: 'PROCESSING',
      amount: params.amount,
      currency: 'MYR',
      reference_id: params.reference_id,
      created_at: new Date().toISOString(),
    };
    mock.fault({
      endpoint: 'payment.status',
      response: {
        type: 'body',
        body: { status: 'success', data: record },
        headers: { 'X-Correlation-ID': 'c-lookup' },
      },
    });
    const payment = await gateway.payments.create(params);
    expect(payment.payment_id).toBe('PAY_X1');
    expect(payment.lastResponse).toMatchObject({ status: 200, attempts: 1, correlationId: 'c-lookup' });
    expect(Object.keys(payment)).not.toContain('lastResponse');
  });
});

describe('logger', () => {
  async function run(logger: Logger, logLevel: 'debug' | 'info' = 'debug') {
    const { gateway } = clientFor(mock, { logger, logLevel });
    mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter: 1 } });
    await gateway.payments.create(paymentParams());
    await caught(gateway.payments.retrieve('NOSUCHORDER'));
  }

  it('pino: fields as the object, message as msg, levels kept', async () => {
    const out: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'debug' },
      { write: (line: string) => void out.push(JSON.parse(line) as Record<string, unknown>) },
    );
    await run(logger);
    const retry = out.find((l) => String(l.msg).includes('retrying'));
    expect(retry).toMatchObject({
      level: 30,
      method: 'POST',
      path: '/payment/request',
      attempt: 1,
      status: 429,
      errorCode: 'RATE_LIMITED',
    });
    expect(out.find((l) => l.level === 20 && l.attempt === 2)).toBeDefined();
    expect(out.find((l) => String(l.msg).includes('/payment/status/NOSUCHORDER failed with NOT_FOUND'))).toMatchObject({
      level: 30,
      status: 404,
    });
    expectNoSecret(JSON.stringify(out), { API_KEY, authorization: 'Bearer ' });
  });

  it('winston: message first, fields as metadata', async () => {
    const out: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = winston.createLogger({
      level: 'debug',
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream })],
    });
    await run(logger, 'info');
    await new Promise((resolve) => setImmediate(resolve));
    const retry = out.find((l) => String(l.message).includes('retrying'));
    expect(retry).toMatchObject({ level: 'info', path: '/payment/request', status: 429, delayMs: expect.any(Number) });
    expect(out.some((l) => l.level === 'debug')).toBe(false); // logLevel 'info' holds back every attempt line
    expectNoSecret(JSON.stringify(out), { API_KEY, authorization: 'Bearer ' });
  });

  it('console-shaped: (message, fields); nothing below the level; default level warn', async () => {
    const calls: unknown[][] = [];
    const line =
      (level: string) =>
      (...args: unknown[]) =>
        void calls.push([level, ...args]);
    const logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
    await run(logger, 'info');
    expect(calls.find((c) => String(c[1]).includes('retrying'))).toEqual([
      'info',
      expect.stringMatching(
        /^myr-gateway: POST \/payment\/request attempt 1 failed with RATE_LIMITED; retrying in \d+ ms$/,
      ),
      expect.objectContaining({ attempt: 1, status: 429 }),
    ]);
    expect(calls.some((c) => c[0] === 'debug')).toBe(false);
    calls.length = 0;
    const { gateway } = clientFor(mock, { logger });
    await gateway.payments.create(paymentParams());
    expect(calls).toEqual([]);
  });

  it('without a logger, nothing but warnings reaches the console, as before', async () => {
    const spies = (['debug', 'info', 'log', 'warn', 'error'] as const).map((name) =>
      vi.spyOn(console, name).mockImplementation(() => undefined),
    );
    try {
      const { gateway } = clientFor(mock);
      mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter: 1 } });
      await gateway.payments.create(paymentParams());
      expect(spies.map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0, 0, 0]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it("the SDK's own warnings (a failing token store) go to the logger instead of console.warn", async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const lines: unknown[][] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (...a: unknown[]) => void lines.push(a),
      error: () => undefined,
    };
    const inner = new MemoryTokenStore();
    const store: TokenStore = {
      get: () => Promise.reject(new Error(`boom ${API_KEY}`)),
      set: (k, t) => inner.set(k, t),
      delete: (k) => inner.delete(k),
    };
    try {
      const { gateway } = clientFor(mock, { logger, tokenStore: store });
      await gateway.payments.create(paymentParams());
      expect(warn).not.toHaveBeenCalled();
      expect(lines).toEqual([
        [expect.stringMatching(/^myr-gateway: the token store's get failed; using the token held in this process\.$/)],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses a logger without the four methods, and an unknown level, before any call', () => {
    const base = { baseUrl: mock.baseUrl, merchantId: 'M', apiKey: 'k' };
    expect(() => clientFor(mock, { ...base, logger: { info: () => undefined } as unknown as Logger })).toThrow(
      ConfigurationError,
    );
    expect(() => clientFor(mock, { ...base, logLevel: 'verbose' as 'debug' })).toThrow(/logLevel/);
    expect(() => clientFor(mock, { ...base, tracer: {} as never })).toThrow(/tracer/);
    expect(() => clientFor(mock, { ...base, onRetry: 'x' as never })).toThrow(/onRetry/);
  });
});

describe('OpenTelemetry', () => {
  function provider() {
    const exporter = new InMemorySpanExporter();
    return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) };
  }

  it('an explicit tracer: one client span per call with the attributes, retries as events, errors as status', async () => {
    const { exporter, provider: p } = provider();
    const { gateway } = clientFor(mock, { tracer: p.getTracer('checkout') });
    const params = paymentParams();
    mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 503, code: 'NO_GATEWAY_AVAILABLE' } });
    await gateway.payments.create(params);
    await caught(gateway.payments.retrieve('NOSUCHORDER'));
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual([
      'myr-gateway POST /auth/token',
      'myr-gateway POST /payment/request',
      'myr-gateway GET /payment/status/{identifier}',
    ]);
    const [, create, status] = spans;
    expect(create?.kind).toBe(2); // CLIENT
    expect(create?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.template': '/payment/request',
      'myr.operation': 'payment.create',
      'myr.reference_id': params.reference_id,
      'myr.attempts': 2,
      'http.response.status_code': 200,
      'myr.correlation_id': expect.any(String),
      'myr.rate_limit.remaining': expect.any(Number),
    });
    expect(create?.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'myr.retry',
        {
          'myr.attempt': 1,
          'myr.retry.delay_ms': 1000,
          'error.type': 'NO_GATEWAY_AVAILABLE',
          'http.response.status_code': 503,
        },
      ],
    ]);
    expect(create?.status.code).toBe(0);
    expect(status?.status).toEqual({ code: 2, message: 'NOT_FOUND' });
    expect(status?.attributes).toMatchObject({ 'error.type': 'NOT_FOUND', 'http.response.status_code': 404 });
    expectNoSecret(
      inspect(
        spans.map((s) => [s.name, s.attributes, s.events, s.status]),
        { depth: 9 },
      ),
      { API_KEY, authorization: 'Bearer ' },
    );
  });

  it('the globally registered provider is used without a tracer option; tracer: false turns it off', async () => {
    const { exporter, provider: p } = provider();
    expect(trace.setGlobalTracerProvider(p)).toBe(true);
    try {
      await clientFor(mock).gateway.payments.create(paymentParams());
      expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('myr-gateway POST /payment/request');
      expect(exporter.getFinishedSpans()[0]?.instrumentationScope.name).toBe('myr-gateway');
      exporter.reset();
      await clientFor(mock, { tracer: false }).gateway.payments.create(paymentParams());
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      trace.disable();
    }
    exporter.reset();
    await clientFor(mock).gateway.payments.create(paymentParams());
    expect(exporter.getFinishedSpans()).toEqual([]);
    await p.forceFlush();
  });
});
