/**
 * URLs the client sends or hands on: which hosts count as loopback (where
 * `allowInsecureLoopback` permits plain http), and URLs without credentials in them.
 *
 * @module
 */

/**
 * Whitespace (Unicode included) and control characters. `new URL()` silently drops tabs and line
 * breaks and trims spaces, so a URL is checked on its raw text for these before it is parsed:
 * otherwise `…/return\r\nSet-Cookie: …` passes the check on the parsed URL. True when `value`
 * holds whitespace, a control character or an invisible or bidi character anywhere.
 */
export function hasUnsafeUrlCharacter(value: string): boolean {
  // Whitespace, C0, DEL, C1; characters IDNA maps to nothing (soft hyphen, zero-width space,
  // word joiner), so a host that reads as one name is another; and the bidi controls, which make
  // a URL read other than it is. ZWNJ and ZWJ stay: IDNA2008 allows them in some scripts' names.
  return /[\s\p{Cc}\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069]/u.test(value);
}

/** `value` as the URL the SDK sends (`new URL(value).href`), or `value` itself when it is no URL. */
export function normalisedUrl(value: string): string {
  try {
    return new URL(value).href;
  } catch {
    return value;
  }
}

/** Hosts where `allowInsecureLoopback` permits plain http (local mocks). */
export const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** `value` as an absolute URL without credentials in it, or undefined. */
export function credentialFreeUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string' || hasUnsafeUrlCharacter(value)) return undefined;
  try {
    const url = new URL(value);
    return url.username || url.password ? undefined : url;
  } catch {
    return undefined;
  }
}

/** Whether `url` is plain `http://` to a loopback host (what `allowInsecureLoopback` admits). */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOST.test(url.hostname);
}

/**
 * With `allowInsecureLoopback`, the `http://` loopback `callback_url` and `redirect_url` a local
 * sandbox or webhook server needs: taken out of `params` so the https rule checks the rest, and
 * put back into the body, normalised, after validation. Any other http URL is still refused, and
 * one with whitespace or a control character is left for the schema to refuse.
 */
export function splitLoopbackUrls(params: unknown): {
  rest: unknown;
  urls: { callback_url?: string; redirect_url?: string };
} {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return { rest: params, urls: {} };
  const rest: Record<string, unknown> = { ...(params as Record<string, unknown>) };
  const urls: { callback_url?: string; redirect_url?: string } = {};
  for (const field of ['callback_url', 'redirect_url'] as const) {
    const url = credentialFreeUrl(rest[field]);
    if (url && isLoopbackHttp(url)) {
      urls[field] = url.href;
      delete rest[field];
    }
  }
  return { rest, urls };
}
