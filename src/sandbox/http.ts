/**
 * Small node:http helpers of the sandbox: answers, bounded form bodies, and the checks that
 * keep other web pages (and DNS rebinding) from driving a sandbox on 127.0.0.1.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SafeHtml } from './html.js';

/** Largest form body an action accepts. */
const FORM_LIMIT = 16 * 1024;

/** Security headers of every page: no framing, no outside scripts. */
const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on form posts.
  'Referrer-Policy': 'same-origin',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'; form-action 'self' http: https:; frame-ancestors 'none'",
};

/** Sends a page. */
export function sendHtml(res: ServerResponse, status: number, page: SafeHtml): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(page.value);
}

/** Sends a 303 to `location` (after a form POST). */
export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { Location: location, 'Cache-Control': 'no-store' });
  res.end();
}

/** Sends plain text. */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(text);
}

/** Reads an `application/x-www-form-urlencoded` body of at most 16 KiB; undefined when larger. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    // No encoding is set on the request: chunks are Buffers.
    size += (chunk as Buffer).length;
    if (size > FORM_LIMIT) return undefined;
    chunks.push(chunk as Buffer); // see above
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The Host header names this sandbox (127.0.0.1 or localhost on our port): refuses DNS rebinding. */
export function hostAllowed(req: IncomingMessage, port: number): boolean {
  const host = (req.headers.host ?? '').toLowerCase();
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

/**
 * A request comes from the sandbox's own pages or from a program, not from another site. A
 * browser names the page's origin in `Origin` (on every cross-origin fetch and every POST) and
 * its relation in `Sec-Fetch-Site`; programs such as the SDK client send neither.
 */
export function sameOrigin(req: IncomingMessage, port: number): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`;
}

/** Why an API request is refused before the service sees it: status, the error code, the message. */
export interface ApiRefusal {
  status: 403 | 415;
  code: 'CROSS_SITE_REQUEST' | 'UNSUPPORTED_MEDIA_TYPE';
  message: string;
}

const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

/**
 * The checks that keep a web page the developer visits from driving the sandbox's API: no
 * other origin, and a JSON content type on every body, which a page can only send after a
 * CORS preflight (that this server refuses), never as a blind `text/plain` form post.
 */
export function apiRefusal(req: IncomingMessage, port: number): ApiRefusal | undefined {
  if (!sameOrigin(req, port)) {
    return {
      status: 403,
      code: 'CROSS_SITE_REQUEST',
      message: 'Refused: this sandbox answers its own pages and programs, never another site',
    };
  }
  const bodyless = req.method === 'GET' || req.method === 'HEAD';
  if (!bodyless && !JSON_MEDIA_TYPE.test(req.headers['content-type'] ?? '')) {
    return {
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'Request bodies must be JSON, sent with Content-Type: application/json',
    };
  }
  return undefined;
}

/** Sends an answer in the service's error envelope (`{ status: 'error', error, message }`). */
export function sendApiError(res: ServerResponse, refusal: ApiRefusal): void {
  res.writeHead(refusal.status, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-store',
    'X-Correlation-ID': globalThis.crypto.randomUUID(),
  });
  res.end(JSON.stringify({ status: 'error', error: refusal.code, message: refusal.message }));
}
