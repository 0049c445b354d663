/**
 * src/webhooks/adapters/body.ts on its own: one body limit and one read timeout for every way a
 * body arrives. A Content-Length over the limit is refused before anything is read; a stream is
 * cut off at the first chunk past the limit (the rest is never buffered); a body that stalls is
 * given up after the read timeout; after a refusal the Node request is drained briefly, then its
 * socket closed. Node streams are faked with node:stream Readable, Web streams with
 * ReadableStream; timers are fake, so nothing here waits.
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BodyTimeoutError,
  BodyTooLargeError,
  checkParsedBody,
  declaredTooLarge,
  readNodeStream,
  readWebStream,
  type BodyLimits,
} from '../../../../src/webhooks/adapters/body.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const LIMITS: BodyLimits = { maxBodyBytes: 10, bodyTimeoutMs: 1_000 };
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

/** A request stream the test feeds by hand, with the headers and socket of an IncomingMessage. */
function fakeRequest(headers: Record<string, string | string[]> = {}) {
  const stream = new Readable({ read() {} });
  // bytesWritten grows when the answer is handed to the socket (a test sets it).
  const socket = { destroy: vi.fn(), end: vi.fn(), pause: vi.fn(), bytesWritten: 0, writableLength: 0 };
  const req = Object.assign(stream, { headers, socket }) as unknown as IncomingMessage;
  return { req, stream, socket };
}

/** Settles `promise` into a value or the error it rejected with, so a test can inspect either. */
function settled<T>(promise: Promise<T>): {
  current: () => { done: false } | { done: true; value?: T; error?: unknown };
} {
  let state: { done: false } | { done: true; value?: T; error?: unknown } = { done: false };
  promise.then(
    (value) => (state = { done: true, value }),
    (error: unknown) => (state = { done: true, error }),
  );
  return { current: () => state };
}

/** Lets stream events (process.nextTick, microtasks, setImmediate) run; timers stay frozen. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('declaredTooLarge', () => {
  it.each([
    ['11', 10, true],
    ['10', 10, false],
    ['0', 10, false],
    [' 11 ', 10, true],
    [11, 10, true],
    [['11', '5'], 10, true],
    [['5', '11'], 10, false],
    ['65537', 65_536, true],
    ['1e9', 65_536, true],
  ] as const)('reads Content-Length %j against a limit of %d as over: %s', (value, limit, over) => {
    expect(declaredTooLarge(value, limit)).toBe(over);
  });

  it.each([undefined, null, '', 'abc', '-1', []])(
    'does not refuse an absent or unreadable Content-Length %j (the read itself is bounded)',
    (value) => {
      expect(declaredTooLarge(value, 10)).toBe(false);
    },
  );
});

describe('checkParsedBody', () => {
  it('hands back a body within the limit unchanged', () => {
    const buffer = Buffer.from('0123456789');
    expect(checkParsedBody(buffer, '10', 10)).toBe(buffer);
    expect(checkParsedBody('0123456789', undefined, 10)).toBe('0123456789');
    const parsed = { a: 1 };
    expect(checkParsedBody(parsed, undefined, 10)).toBe(parsed);
  });

  it('refuses bytes over the limit', () => {
    expect(() => checkParsedBody(Buffer.alloc(11), undefined, 10)).toThrow(BodyTooLargeError);
    expect(() => checkParsedBody(new Uint8Array(11), undefined, 10)).toThrow(BodyTooLargeError);
  });

  it('refuses an ArrayBuffer over the limit, as it does the other byte forms', () => {
    expect(() => checkParsedBody(new ArrayBuffer(11), undefined, 10)).toThrow(BodyTooLargeError);
    const fits = new ArrayBuffer(10);
    expect(checkParsedBody(fits, undefined, 10)).toBe(fits);
  });

  it('counts a lone surrogate as the 3 bytes of the U+FFFD it is encoded to', () => {
    const text = 'ab\uD800'; // 2 + 3 bytes once encoded
    expect(checkParsedBody(text, undefined, 5)).toBe(text);
    expect(() => checkParsedBody(text, undefined, 4)).toThrow(BodyTooLargeError);
  });

  it('refuses any parsed body whose Content-Length was over the limit', () => {
    expect(() => checkParsedBody({ a: 1 }, '11', 10)).toThrow(BodyTooLargeError);
    expect(() => checkParsedBody('x', ['11'], 10)).toThrow(BodyTooLargeError);
  });

  it.each([
    ['ASCII', 'a'],
    ['two-byte UTF-8 (é)', '\u00E9'],
    ['three-byte UTF-8 (中)', '\u4E2D'],
    ['four-byte UTF-8 (a surrogate pair)', '\u{1F375}'],
  ])('measures text of %s in UTF-8 bytes, as it came over the wire', (_name, unit) => {
    const size = Buffer.byteLength(unit, 'utf8');
    const fits = unit.repeat(Math.floor(12 / size));
    const over = fits + unit;
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(12);
    expect(checkParsedBody(fits, undefined, 12)).toBe(fits);
    expect(() => checkParsedBody(over, undefined, 12)).toThrow(BodyTooLargeError);
  });
});

describe('readNodeStream', () => {
  it('collects the chunks in order', async () => {
    const { req, stream } = fakeRequest();
    const body = readNodeStream(req, LIMITS);
    stream.push(bytes('{"a":'));
    stream.push(bytes('1}'));
    stream.push(null);
    expect(text(await body)).toBe('{"a":1}');
  });

  it('reads a request stream that something paused before the adapter got it', async () => {
    const { req, stream } = fakeRequest();
    stream.pause();
    const body = readNodeStream(req, LIMITS);
    stream.push(bytes('{}'));
    stream.push(null);
    expect(text(await body)).toBe('{}');
  });

  it('accepts a body of exactly the limit', async () => {
    const { req, stream } = fakeRequest({ 'content-length': '10' });
    const body = readNodeStream(req, LIMITS);
    stream.push(bytes('01234'));
    stream.push(bytes('56789'));
    stream.push(null);
    expect(text(await body)).toBe('0123456789');
  });

  it('answers an empty body as no bytes', async () => {
    const { req, stream } = fakeRequest();
    const body = readNodeStream(req, LIMITS);
    stream.push(null);
    expect((await body).byteLength).toBe(0);
  });

  it('counts text chunks (a stream with an encoding set) in UTF-8 bytes, not characters', async () => {
    const { req, stream } = fakeRequest();
    stream.setEncoding('utf8');
    const body = readNodeStream(req, LIMITS);
    stream.push(Buffer.from('\u00E9\u00E9\u00E9\u00E9\u00E9\u00E9')); // 6 characters, 12 bytes
    await expect(body).rejects.toBeInstanceOf(BodyTooLargeError);
  });

  it('answers 413 before reading a body whose Content-Length is over the limit', async () => {
    const { req, stream } = fakeRequest({ 'content-length': '11' });
    const resume = vi.spyOn(stream, 'resume');
    const body = settled(readNodeStream(req, LIMITS));
    await flush();
    // Refused though not one byte has arrived, and without waiting for the read timeout.
    expect(body.current()).toEqual({ done: true, error: expect.any(BodyTooLargeError) });
    expect(resume).toHaveBeenCalled(); // what the sender still sends is drained, not kept
  });

  it('cuts the read off at the first chunk past the limit, without waiting for the end of the body', async () => {
    const { req, stream } = fakeRequest();
    const body = settled(readNodeStream(req, LIMITS));
    stream.push(bytes('0123456'));
    await flush();
    expect(body.current().done).toBe(false);
    stream.push(bytes('7890')); // 11 bytes: one past the limit
    await flush();
    expect(body.current()).toEqual({ done: true, error: expect.any(BodyTooLargeError) });
  });

  it('gives up a stalled body after bodyTimeoutMs with BodyTimeoutError, and not before', async () => {
    const { req, stream } = fakeRequest();
    const body = settled(readNodeStream(req, LIMITS));
    stream.push(bytes('{"a":')); // then nothing more
    await flush();
    vi.advanceTimersByTime(LIMITS.bodyTimeoutMs - 1);
    await flush();
    expect(body.current().done).toBe(false);
    vi.advanceTimersByTime(1);
    await flush();
    expect(body.current()).toEqual({ done: true, error: expect.any(BodyTimeoutError) });
  });

  it('bounds the whole read, not the gaps between chunks (a trickling sender is given up too)', async () => {
    const { req, stream } = fakeRequest();
    const body = settled(readNodeStream(req, { maxBodyBytes: 1_000, bodyTimeoutMs: 1_000 }));
    for (let i = 0; i < 10; i++) {
      stream.push(bytes('x'));
      await flush();
      vi.advanceTimersByTime(100);
    }
    await flush();
    expect(body.current()).toEqual({ done: true, error: expect.any(BodyTimeoutError) });
  });

  it('closes the socket when the sender keeps going for 500 ms after a refusal', async () => {
    const { req, stream, socket } = fakeRequest({ 'content-length': '100000' });
    await expect(readNodeStream(req, LIMITS)).rejects.toBeInstanceOf(BodyTooLargeError);
    stream.push(bytes('still sending'));
    await flush();
    vi.advanceTimersByTime(499);
    expect(socket.destroy).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it('leaves the socket open when the refused body ends within the drain, so the 413 reaches the sender', async () => {
    const { req, stream, socket } = fakeRequest();
    const body = readNodeStream(req, LIMITS);
    stream.push(bytes('0123456789abc'));
    await expect(body).rejects.toBeInstanceOf(BodyTooLargeError);
    stream.push(bytes('rest'));
    stream.push(null);
    await flush();
    vi.advanceTimersByTime(1_000);
    expect(socket.destroy).not.toHaveBeenCalled();
  });

  it('stops reading and ends the connection once the sender pushed more than 1 MiB after the 413 was written', async () => {
    const { req, stream, socket } = fakeRequest({ 'content-length': String(100 * 1024 * 1024) });
    await expect(readNodeStream(req, LIMITS)).rejects.toBeInstanceOf(BodyTooLargeError);
    const block = Buffer.allocUnsafe(512 * 1024 + 1);
    stream.push(block);
    stream.push(block);
    await flush();
    expect(socket.end).not.toHaveBeenCalled(); // not answered yet: the sender gets its whole drain once the 413 is out
    socket.bytesWritten = 180; // the 413
    stream.push(block);
    await flush();
    expect(socket.end).not.toHaveBeenCalled();
    stream.push(block); // 1 MiB and 2 bytes drained after the answer
    await flush();
    expect(socket.pause).toHaveBeenCalled();
    expect(socket.end).toHaveBeenCalledTimes(1);
    expect(socket.destroy).not.toHaveBeenCalled(); // a reset now could beat the 413 to the sender
    vi.advanceTimersByTime(500);
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it('rejects with the error of a failing stream', async () => {
    const { req, stream } = fakeRequest();
    const body = readNodeStream(req, LIMITS);
    const failure = new Error('ECONNRESET');
    stream.destroy(failure);
    await expect(body).rejects.toBe(failure);
  });

  it('rejects when the request closes before its body ended', async () => {
    const { req, stream } = fakeRequest();
    const body = readNodeStream(req, LIMITS);
    stream.push(bytes('{"a":'));
    await flush();
    stream.destroy();
    const error: unknown = await body.catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(BodyTooLargeError);
    expect(error).not.toBeInstanceOf(BodyTimeoutError);
    expect((error as Error).message).toContain('closed before its body ended');
  });

  it('leaves no read timer behind once the body is read', async () => {
    const { req, stream } = fakeRequest();
    const body = readNodeStream(req, LIMITS);
    stream.push(bytes('{}'));
    stream.push(null);
    await body;
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('readWebStream', () => {
  /** A byte stream that hands out `chunks` one per pull (no read-ahead), then ends unless `stall`. */
  function webStream(chunks: readonly string[], stall = false) {
    let pulls = 0;
    const cancel = vi.fn();
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const chunk = chunks[pulls++];
          if (chunk !== undefined) controller.enqueue(bytes(chunk));
          else if (stall) return new Promise<void>(() => {});
          else controller.close();
          return undefined;
        },
        cancel,
      },
      { highWaterMark: 0 },
    );
    return { stream, cancel, pulls: () => pulls };
  }

  it('answers no bytes for a request without a body', async () => {
    expect((await readWebStream(null, LIMITS)).byteLength).toBe(0);
  });

  it('collects the chunks in order, up to exactly the limit', async () => {
    const { stream } = webStream(['{"a":', '1234}']);
    expect(text(await readWebStream(stream, LIMITS))).toBe('{"a":1234}');
  });

  it('stops at the first chunk past the limit, asks for no more and cancels the stream', async () => {
    const { stream, cancel, pulls } = webStream(['0123', '4567', '89ab', 'cdef', 'ghij']);
    await expect(readWebStream(stream, LIMITS)).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(pulls()).toBe(3); // the third chunk takes the body to 12 bytes
    expect(cancel).toHaveBeenCalledTimes(1);
  });

  it('gives up a stalled body after bodyTimeoutMs with BodyTimeoutError and cancels the stream', async () => {
    const { stream, cancel } = webStream(['{"a":'], true);
    const body = settled(readWebStream(stream, LIMITS));
    await flush();
    vi.advanceTimersByTime(LIMITS.bodyTimeoutMs - 1);
    await flush();
    expect(body.current().done).toBe(false);
    vi.advanceTimersByTime(1);
    await flush();
    expect(body.current()).toEqual({ done: true, error: expect.any(BodyTimeoutError) });
    expect(cancel).toHaveBeenCalledTimes(1);
  });

  it('rejects with the error of a failing stream', async () => {
    const failure = new Error('network reset');
    const stream = new ReadableStream<Uint8Array>({
      pull() {
        throw failure;
      },
    });
    await expect(readWebStream(stream, LIMITS)).rejects.toBe(failure);
  });

  it('leaves no read timer behind once the body is read', async () => {
    const { stream } = webStream(['{}']);
    await readWebStream(stream, LIMITS);
    expect(vi.getTimerCount()).toBe(0);
  });
});
