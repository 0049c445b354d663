/**
 * src/webhooks/adapters/shared.ts on its own: what every framework adapter shares. The body
 * limits (defaults, where they may be given, refusals naming the option), which body a Node
 * request yields (a parser's result, bounded, or the stream read here), the answer for a body
 * that could not be had (413, 408, 400) with its one warn line, and the JSON text of an answer.
 */
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../../src/core/errors/base.js';
import { BodyTimeoutError, BodyTooLargeError } from '../../../../src/webhooks/adapters/body.js';
import {
  TOO_LARGE,
  bodyFailure,
  handleBody,
  logRefusedBody,
  nodeRequestBody,
  reshapedByParser,
  resolveAdapter,
  responseText,
  type NodeRequestLike,
} from '../../../../src/webhooks/adapters/shared.js';
import { createWebhookHandler } from '../../../../src/webhooks/handler.js';
import type { WebhookHandler, WebhookResponse } from '../../../../src/webhooks/handler-options.js';
import { signCallback } from '../../../../src/webhooks/sign.js';
import { warningLogger } from '../../../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const API_KEY = 'sk_live_adapter_shared_unit_0001';
const onEvent = () => {};
const LIMITS = { maxBodyBytes: 10, bodyTimeoutMs: 1_000 };

/** A handler whose `handle` is a spy, and whose logger keeps its lines. */
function spyHandler() {
  const { lines, logger } = warningLogger();
  const real = createWebhookHandler({ verifier: { apiKey: API_KEY }, onEvent, logger });
  const answer: WebhookResponse = { status: 200, body: { ok: true, outcome: 'processed' }, headers: {} };
  const handle = vi.fn(async () => answer);
  const handler: WebhookHandler = { ...real, handle, logger };
  return { handler, handle, lines, answer };
}

/** A Node request stream the test feeds by hand. */
function streamRequest(headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const stream = new Readable({ read() {} });
  const req = Object.assign(stream, { headers, socket: { destroy: vi.fn() } }, extra) as unknown as NodeRequestLike;
  return { req, stream };
}

/** A Node request whose stream a body parser already consumed to its end. */
async function consumedRequest(headers: Record<string, string> = {}): Promise<NodeRequestLike> {
  const { req, stream } = streamRequest(headers);
  stream.resume();
  stream.push(null);
  await new Promise((resolve) => stream.once('end', resolve));
  expect(req.readableEnded).toBe(true);
  return req;
}

describe('resolveAdapter', () => {
  it('defaults to a 64 KiB body read within 10 s', () => {
    const { limits } = resolveAdapter({ verifier: { apiKey: API_KEY }, onEvent }, undefined);
    expect(limits).toEqual({ maxBodyBytes: 65_536, bodyTimeoutMs: 10_000 });
  });

  it('takes the limits mixed into the handler options', () => {
    const { limits } = resolveAdapter(
      { verifier: { apiKey: API_KEY }, onEvent, maxBodyBytes: 16_384, bodyTimeoutMs: 5_000 },
      undefined,
    );
    expect(limits).toEqual({ maxBodyBytes: 16_384, bodyTimeoutMs: 5_000 });
  });

  it('lets the adapter options win over the ones mixed into the handler options', () => {
    const { limits } = resolveAdapter(
      { verifier: { apiKey: API_KEY }, onEvent, maxBodyBytes: 16_384, bodyTimeoutMs: 5_000 },
      { maxBodyBytes: 1_024 },
    );
    expect(limits).toEqual({ maxBodyBytes: 1_024, bodyTimeoutMs: 5_000 });
  });

  it('uses a ready handler as it is, with the limits of the second argument', () => {
    const { handler } = spyHandler();
    const resolved = resolveAdapter(handler, { bodyTimeoutMs: 2_000 });
    expect(resolved.handler).toBe(handler);
    expect(resolved.limits).toEqual({ maxBodyBytes: 65_536, bodyTimeoutMs: 2_000 });
  });

  it('builds a working handler from handler options', async () => {
    const seen: string[] = [];
    const { handler } = resolveAdapter(
      { verifier: { apiKey: API_KEY }, onEvent: (event) => void seen.push(event.signed.payment_id) },
      undefined,
    );
    const signed = await signCallback(API_KEY, {
      payment_id: 'PAY_1',
      reference_id: 'ORDER1',
      amount: 10,
      status: 'SUCCESS',
    });
    expect((await handler.handle({ body: signed.rawBody, headers: signed.headers })).status).toBe(200);
    expect(seen).toEqual(['PAY_1']);
  });

  it.each([
    ['maxBodyBytes', 0],
    ['maxBodyBytes', -1],
    ['maxBodyBytes', Number.NaN],
    ['maxBodyBytes', Number.POSITIVE_INFINITY],
    ['maxBodyBytes', '65536'],
    ['bodyTimeoutMs', 0],
    ['bodyTimeoutMs', -10_000],
    ['bodyTimeoutMs', Number.NaN],
    ['bodyTimeoutMs', '10000'],
  ] as const)('refuses %s = %j, naming the option', (name, value) => {
    for (const run of [
      () => resolveAdapter({ verifier: { apiKey: API_KEY }, onEvent }, { [name]: value as never }),
      () => resolveAdapter({ verifier: { apiKey: API_KEY }, onEvent, [name]: value as never }, undefined),
    ]) {
      let caught: unknown;
      try {
        run();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigurationError);
      expect((caught as ConfigurationError).field).toBe(name);
      expect((caught as ConfigurationError).message).toBe(
        name === 'bodyTimeoutMs'
          ? 'bodyTimeoutMs must be a whole number of milliseconds from 1 to 2147483647'
          : `${name} must be a positive number`,
      );
      expect((caught as ConfigurationError).message).not.toContain(API_KEY);
    }
  });

  it("passes on the handler options' own refusal", () => {
    expect(() => resolveAdapter({ verifier: { apiKey: API_KEY }, onEvent: 'no' as never }, undefined)).toThrow(
      ConfigurationError,
    );
  });
});

describe('nodeRequestBody', () => {
  it('reads the stream itself when no body parser ran', async () => {
    const { req, stream } = streamRequest();
    const body = nodeRequestBody(req, undefined, LIMITS);
    stream.push(Buffer.from('{"a":1}'));
    stream.push(null);
    expect(Buffer.from((await body) as Uint8Array).toString()).toBe('{"a":1}');
  });

  it('bounds the stream it reads by the limit', async () => {
    const { req, stream } = streamRequest();
    const body = nodeRequestBody(req, undefined, LIMITS);
    stream.push(Buffer.alloc(11));
    await expect(body).rejects.toBeInstanceOf(BodyTooLargeError);
  });

  it("takes a parser's result once the stream has ended", async () => {
    const req = await consumedRequest();
    const raw = Buffer.from('{"a":1}');
    await expect(nodeRequestBody(req, raw, LIMITS)).resolves.toBe(raw);
    const parsed = { a: 1 };
    await expect(nodeRequestBody(req, parsed, LIMITS)).resolves.toBe(parsed);
  });

  it('takes the parsed body when body-parser marked the request (_body), without touching the stream', async () => {
    const { req, stream } = streamRequest({}, { _body: true });
    const read = vi.spyOn(stream, 'on');
    const parsed = { a: 1 };
    await expect(nodeRequestBody(req, parsed, LIMITS)).resolves.toBe(parsed);
    expect(read).not.toHaveBeenCalled();
  });

  it("refuses a parser's raw body over the limit", async () => {
    const req = await consumedRequest();
    await expect(nodeRequestBody(req, Buffer.alloc(11), LIMITS)).rejects.toBeInstanceOf(BodyTooLargeError);
    await expect(nodeRequestBody(req, 'x'.repeat(11), LIMITS)).rejects.toBeInstanceOf(BodyTooLargeError);
  });

  it("refuses a parser's object when the request's Content-Length was over the limit", async () => {
    const req = await consumedRequest({ 'content-length': '11' });
    await expect(nodeRequestBody(req, { a: 1 }, LIMITS)).rejects.toBeInstanceOf(BodyTooLargeError);
  });
});

describe('bodyFailure', () => {
  it.each([
    ['a body over the limit', new BodyTooLargeError(), 413],
    ['a body slower than the read timeout', new BodyTimeoutError(), 408],
    ['a failed stream', new Error('ECONNRESET'), 400],
    ['a non-error', 'closed', 400],
  ])('answers %s with %d, rejected as malformed', (_name, error, status) => {
    const response = bodyFailure(error);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ ok: false, outcome: 'rejected', reason: 'malformed' });
    expect(response.event).toBeUndefined();
  });

  it('answers TOO_LARGE for a body over the limit', () => {
    expect(bodyFailure(new BodyTooLargeError())).toBe(TOO_LARGE);
    expect(TOO_LARGE.status).toBe(413);
  });
});

describe('logRefusedBody', () => {
  it.each([
    [413, new BodyTooLargeError(), 'larger than maxBodyBytes'],
    [408, new BodyTimeoutError(), 'slower than bodyTimeoutMs'],
    [400, new Error('x'), 'unreadable'],
  ])('writes one warn line for a %d naming the limit, and hands the answer back', (status, error, why) => {
    const { handler, lines } = spyHandler();
    const response = bodyFailure(error);
    expect(logRefusedBody(handler, response)).toBe(response);
    expect(lines).toEqual([`myr-gateway webhook: a callback body was refused (${status}): ${why}`]);
  });

  it('writes nothing, and still answers, without a logger', () => {
    const handler = createWebhookHandler({ verifier: { apiKey: API_KEY }, onEvent });
    expect(logRefusedBody(handler, TOO_LARGE)).toBe(TOO_LARGE);
  });

  it('keeps its answer when the logger throws', () => {
    const { handler } = spyHandler();
    const broken = {
      ...handler,
      logger: {
        debug() {},
        info() {},
        warn() {
          throw new Error('log sink down');
        },
        error() {},
      },
    };
    expect(logRefusedBody(broken, TOO_LARGE)).toBe(TOO_LARGE);
  });
});

describe('handleBody', () => {
  it('hands the body and headers to the handler once the body is read', async () => {
    const { handler, handle, answer, lines } = spyHandler();
    const headers = { 'x-webhook-id': 'w-1' };
    await expect(handleBody(handler, Promise.resolve('{"a":1}'), headers)).resolves.toBe(answer);
    expect(handle).toHaveBeenCalledExactlyOnceWith({ body: '{"a":1}', headers });
    expect(lines).toEqual([]);
  });

  it.each([
    [new BodyTooLargeError(), 413],
    [new BodyTimeoutError(), 408],
    [new Error('request closed before its body ended'), 400],
  ])(
    'answers a body that failed with %s as %d without running the handler, and logs it once',
    async (error, status) => {
      const { handler, handle, lines } = spyHandler();
      const response = await handleBody(handler, Promise.reject(error), {});
      expect(response.status).toBe(status);
      expect(handle).not.toHaveBeenCalled();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`(${status})`);
    },
  );

  it('verifies and runs a signed callback read from a stream, end to end', async () => {
    const events: string[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      onEvent: (event) => void events.push(event.signed.reference_id),
    });
    const signed = await signCallback(API_KEY, {
      payment_id: 'PAY_2',
      reference_id: 'ORDER2',
      amount: 20,
      status: 'SUCCESS',
    });
    const { req, stream } = streamRequest(signed.headers);
    const response = handleBody(
      handler,
      nodeRequestBody(req, undefined, { maxBodyBytes: 65_536, bodyTimeoutMs: 1_000 }),
      req.headers,
    );
    stream.push(Buffer.from(signed.rawBody));
    stream.push(null);
    expect((await response).status).toBe(200);
    expect((await response).body).toEqual({ ok: true, outcome: 'processed' });
    expect(events).toEqual(['ORDER2']);
  });
});

describe('responseText', () => {
  it('is the JSON of the answer body alone: no headers, no event, no signature', async () => {
    const handler = createWebhookHandler({ verifier: { apiKey: API_KEY }, onEvent });
    const signed = await signCallback(API_KEY, {
      payment_id: 'PAY_3',
      reference_id: 'ORDER3',
      amount: 30,
      status: 'SUCCESS',
    });
    const response = await handler.handle({ body: signed.rawBody, headers: signed.headers });
    expect(response.event).toBeDefined();
    const text = responseText(response);
    expect(JSON.parse(text)).toEqual({ ok: true, outcome: 'processed' });
    expect(text).not.toContain(signed.body.signature);
    expect(text).not.toContain('PAY_3');
  });

  it('carries the refusal reason of a rejected callback', () => {
    expect(JSON.parse(responseText(TOO_LARGE))).toEqual({ ok: false, outcome: 'rejected', reason: 'malformed' });
  });
});

describe('reshapedByParser', () => {
  const body = { webhook_id: 'WH_1', payment_id: 'PAY_1', amount: 120.5 };
  it.each([
    ['a parsed callback as sent', body, false],
    ['raw bytes', new TextEncoder().encode('{"amount":"1"}'), false],
    ['raw text', '{"amount":"1"}', false],
    ['null', null, false],
    ['a body without amount (the verifier says what is missing)', { webhook_id: 'WH_1' }, false],
    ['amount turned into a string', { ...body, amount: '120.50' }, true],
    ['amount turned into a decimal object', { ...body, amount: { value: '120.5' } }, true],
    ['camel-cased keys', { webhookId: 'WH_1', paymentId: 'PAY_1', amount: 120.5 }, true],
    ['Pascal-cased keys', { WebhookId: 'WH_1', Amount: 120.5 }, true],
    ['kebab-cased keys', { 'webhook-id': 'WH_1', amount: 120.5 }, true],
    ['webhook_id present beside a camel copy', { ...body, webhookId: 'WH_1' }, false],
  ])('%s', (_name, value, expected) => {
    expect(reshapedByParser(value)).toBe(expected);
  });
});
