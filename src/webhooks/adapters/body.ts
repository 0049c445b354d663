/**
 * Reading a callback body under one limit, whatever delivers it: a Node stream, a Web
 * stream, or what a body parser already made of it. A body over the limit stops the read
 * at the first chunk past it (the rest is never buffered); a body that does not finish
 * within the read timeout is given up (slow senders cannot hold a request open).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { unref } from '../../core/wait.js';

/** @internal The limits every adapter applies. */
export interface BodyLimits {
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
}

/** @internal The body is over the limit (413). */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** @internal The body did not arrive within the read timeout (408). */
export class BodyTimeoutError extends Error {
  override name = 'BodyTimeoutError';
}

/** @internal True when a Content-Length header announces more than the limit. */
export function declaredTooLarge(value: unknown, maxBodyBytes: number): boolean {
  return Number(Array.isArray(value) ? value[0] : value) > maxBodyBytes;
}

/**
 * @internal A body a parser already read: refused when its Content-Length, or its own
 * size (bytes, text), is over the limit. A parsed object was bounded by that parser's
 * own limit (docs/webhooks.md says to set it).
 */
export function checkParsedBody(parsed: unknown, contentLength: unknown, maxBodyBytes: number): unknown {
  if (declaredTooLarge(contentLength, maxBodyBytes)) throw new BodyTooLargeError();
  if ((parsed instanceof Uint8Array || parsed instanceof ArrayBuffer) && parsed.byteLength > maxBodyBytes)
    throw new BodyTooLargeError();
  // The length first bounds what is encoded; the encoding counts what is verified (a lone surrogate as its 3-byte U+FFFD).
  if (
    typeof parsed === 'string' &&
    (parsed.length > maxBodyBytes || new TextEncoder().encode(parsed).byteLength > maxBodyBytes)
  )
    throw new BodyTooLargeError();
  return parsed;
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

const DRAIN_MAX_BYTES = 1_048_576; // 1 MiB, a literal so that bundles that never drain drop it
const DRAIN_MAX_MS = 500;

/**
 * Discards what the sender still sends after a refusal, then closes the connection: at most
 * 1 MiB once the answer (413) has been handed to the socket (then nothing more is read and our
 * side is ended), and the socket is destroyed 500 ms after the refusal if still open. Closing at once would
 * reset the connection before most senders read the 413; draining everything would let a sender
 * keep the server busy for as long as it likes, and a larger drain lets every refused
 * connection hold that much in buffers at once. Counting starts when the answer is out, so the
 * sender has a full drain's time to read it however long the handler took to write it.
 */
function drainThenClose(req: IncomingMessage): void {
  let drained = 0;
  const socket = req.socket as IncomingMessage['socket'] | null; // null once a framework detached it
  const writtenBefore = socket?.bytesWritten ?? 0;
  const answered = () => socket === null || (socket.bytesWritten > writtenBefore && socket.writableLength === 0);
  const close = () => {
    clearTimeout(timer);
    req.off('data', onData);
    if (!req.readableEnded) socket?.destroy();
  };
  // Past the drain: stop reading and finish our side (FIN after the answer). Destroying here
  // would reset a sender still writing before it read the 413; the timer destroys the socket
  // if the sender keeps it open, and nothing more is read meanwhile.
  const stop = () => {
    req.off('data', onData);
    // Both: a flowing request would resume the socket to read on.
    req.pause();
    socket?.pause();
    socket?.end();
  };
  const onData = (chunk: Uint8Array | string) => {
    if (!answered()) return;
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) stop();
  };
  const timer = unref(setTimeout(close, DRAIN_MAX_MS));
  req.on('data', onData);
  req.once('end', () => clearTimeout(timer));
  req.resume();
}

/** @internal Reads a Node request stream up to the limit, within the read timeout. */
export function readNodeStream(req: IncomingMessage, limits: BodyLimits): Promise<Uint8Array> {
  if (declaredTooLarge(req.headers['content-length'], limits.maxBodyBytes)) {
    drainThenClose(req);
    return Promise.reject(new BodyTooLargeError());
  }
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const stop = (error: Error | null) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error) {
        drainThenClose(req);
        reject(error);
      } else {
        resolve(concat(chunks, size));
      }
    };
    const onData = (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      size += bytes.byteLength;
      if (size > limits.maxBodyBytes) return stop(new BodyTooLargeError());
      chunks.push(bytes);
    };
    const onEnd = () => stop(null);
    const onError = (error: unknown) => stop(error instanceof Error ? error : new Error('request stream failed'));
    const onClose = () => stop(new Error('request closed before its body ended'));
    const timer = setTimeout(() => stop(new BodyTimeoutError()), limits.bodyTimeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
    // A 'data' listener does not start a stream that something paused explicitly.
    req.resume();
  });
}

/** @internal Reads a Web stream up to the limit, within the read timeout; cancels it when refused. */
export async function readWebStream(
  stream: ReadableStream<Uint8Array> | null,
  limits: BodyLimits,
): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyTimeoutError()), limits.bodyTimeoutMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), timeout]);
      if (done) break;
      size += value.byteLength;
      if (size > limits.maxBodyBytes) throw new BodyTooLargeError();
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return concat(chunks, size);
}
