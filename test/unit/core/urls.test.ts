/**
 * src/core/urls.ts: URL hygiene for what the client sends or hands on. A URL is checked on its
 * raw text for whitespace and control characters (which `new URL()` would silently drop, letting
 * `…\r\nSet-Cookie: …` through), never carries credentials, and plain http is admitted only to
 * loopback hosts under `allowInsecureLoopback`.
 */
import { describe, expect, it } from 'vitest';
import {
  credentialFreeUrl,
  hasUnsafeUrlCharacter,
  isLoopbackHttp,
  LOOPBACK_HOST,
  normalisedUrl,
  splitLoopbackUrls,
} from '../../../src/core/urls.js';

describe('hasUnsafeUrlCharacter', () => {
  it.each([
    ['a space', 'https://shop.example/return ok'],
    ['a tab', 'https://shop.example/\treturn'],
    ['a CR LF header injection', 'https://shop.example/return\r\nSet-Cookie: a=b'],
    ['a bare line feed', 'https://shop.example/\nreturn'],
    ['a NUL', 'https://shop.example/\u0000'],
    ['DEL', 'https://shop.example/\u007f'],
    ['a C1 control (NEL)', 'https://shop.example/\u0085'],
    ['a C1 control (CSI)', 'https://shop.example/\u009b'],
    ['a no-break space', 'https://shop.example/\u00a0'],
    ['a line separator', 'https://shop.example/\u2028'],
    ['an ideographic space', 'https://shop.example/\u3000'],
    ['a byte-order mark', '\ufeffhttps://shop.example/'],
    ['a leading space (new URL would trim it)', ' https://shop.example/'],
    ['a trailing newline (new URL would drop it)', 'https://shop.example/\n'],
    [
      'a zero-width space in the host (new URL drops it: local\u200bhost is sent to localhost)',
      'http://local\u200bhost/cb',
    ],
    ['a right-to-left override', 'https://shop.example/\u202egnp.exe'],
    ['a soft hyphen in the host', 'https://sh\u00adop.example/'],
    ['a word joiner', 'https://shop\u2060.example/'],
    ['a left-to-right mark', 'https://shop.example/\u200e'],
    ['a right-to-left isolate', 'https://shop.example/\u2067x'],
  ])('finds %s', (_what, value) => {
    expect(hasUnsafeUrlCharacter(value)).toBe(true);
  });

  it.each([
    'https://shop.example/return?order=1&x=%20y#top',
    'http://[::1]:8080/cb',
    'https://xn--bcher-kva.example/é',
    '',
    // ZWNJ is part of some scripts' domain names (IDNA2008 allows it): a Persian shop's own URL.
    'https://\u0646\u0645\u0648\u0646\u0647\u200c\u0627\u06cc.ir/r',
    // ZWJ inside an emoji sequence in a query string is percent-encoded when sent.
    'https://shop.example/r?note=\u{1F469}\u200d\u{1F4BB}',
  ])('finds nothing unsafe in %j', (value) => {
    expect(hasUnsafeUrlCharacter(value)).toBe(false);
  });
});

describe('normalisedUrl', () => {
  it.each([
    ['HTTPS://Shop.EXAMPLE/Return', 'https://shop.example/Return'],
    ['https://shop.example', 'https://shop.example/'],
    ['https://shop.example:443/a', 'https://shop.example/a'],
    ['http://127.1:3000/cb', 'http://127.0.0.1:3000/cb'],
    ['http://[0:0:0:0:0:0:0:1]/cb', 'http://[::1]/cb'],
    ['https://shop.example/a/../b?q=1#f', 'https://shop.example/b?q=1#f'],
  ])('writes %s as the URL the SDK sends: %s', (value, href) => {
    expect(normalisedUrl(value)).toBe(href);
  });

  it.each(['not a url', '/relative/path', 'shop.example/return', ''])(
    'leaves %j, which is no URL, as it is for the schema to refuse',
    (value) => {
      expect(normalisedUrl(value)).toBe(value);
    },
  );
});

describe('LOOPBACK_HOST', () => {
  it.each(['localhost', 'LocalHost', '127.0.0.1', '127.0.0.53', '127.255.255.255', '[::1]'])(
    'counts %s as loopback',
    (host) => {
      expect(LOOPBACK_HOST.test(host)).toBe(true);
    },
  );

  it.each([
    'localhost.evil.example',
    'evil.localhost.example',
    '127.0.0.1.nip.io',
    'x127.0.0.1',
    '128.0.0.1',
    '0.0.0.0',
    '10.0.0.1',
    '::1', // a URL's hostname keeps the brackets: unbracketed is no hostname a URL gives
    '[::2]',
    '[::ffff:7f00:1]',
    'localhost.',
    '',
  ])('does not count %j as loopback', (host) => {
    expect(LOOPBACK_HOST.test(host)).toBe(false);
  });
});

describe('isLoopbackHttp', () => {
  it.each([
    'http://localhost:3000/callback',
    'http://127.0.0.1/return',
    'http://[::1]:8080/cb',
    'http://[0:0:0:0:0:0:0:1]/cb', // the long IPv6 form, written [::1] by the URL parser
    'http://127.1/cb', // short IPv4, written 127.0.0.1
    'http://2130706433/cb', // IPv4 as one number
    'http://0x7f.0.0.1/cb', // hexadecimal IPv4
    'HTTP://LOCALHOST/cb',
  ])('admits %s', (value) => {
    expect(isLoopbackHttp(new URL(value))).toBe(true);
  });

  it.each([
    'https://localhost/cb', // not plain http: the https rule already admits it
    'http://shop.example/cb',
    'http://localhost.evil.example/cb',
    'http://127.0.0.1.nip.io/cb',
    'http://[::ffff:127.0.0.1]/cb',
    'http://0.0.0.0/cb',
    'ws://localhost/cb',
    'ftp://127.0.0.1/cb',
  ])('refuses %s', (value) => {
    expect(isLoopbackHttp(new URL(value))).toBe(false);
  });
});

describe('credentialFreeUrl', () => {
  it('gives an absolute URL without credentials as a URL', () => {
    const url = credentialFreeUrl('https://shop.example/return?order=1');
    expect(url).toBeInstanceOf(URL);
    expect(url?.href).toBe('https://shop.example/return?order=1');
  });

  it.each([
    ['a user and password', 'https://merchant:s3cret@shop.example/cb'],
    ['a user only', 'https://merchant@shop.example/cb'],
    ['a password only', 'https://:s3cret@shop.example/cb'],
    ['an encoded user', 'http://%61dmin@localhost/cb'],
    ['credentials on loopback', 'http://user:pass@127.0.0.1:3000/cb'],
  ])('refuses a URL with credentials in it (%s)', (_what, value) => {
    expect(credentialFreeUrl(value)).toBeUndefined();
  });

  it('admits an @ that is part of the path or query, not of the authority', () => {
    expect(credentialFreeUrl('https://shop.example/u/@me?mail=a@b.example')?.hostname).toBe('shop.example');
  });

  it.each([
    ['a CR LF in the path', 'http://localhost/cb\r\nSet-Cookie: a=b'],
    ['a tab in the host', 'http://local\thost/cb'],
    ['a leading space', ' http://localhost/cb'],
    ['a trailing newline', 'http://localhost/cb\n'],
    ['a NUL', 'http://localhost/cb\u0000'],
  ])('refuses a URL with %s, though new URL() would accept it', (_what, value) => {
    expect(() => new URL(value)).not.toThrow();
    expect(credentialFreeUrl(value)).toBeUndefined();
  });

  it.each([undefined, null, 42, {}, ['http://localhost/'], new URL('http://localhost/')])(
    'refuses %j, which is no string',
    (value) => {
      expect(credentialFreeUrl(value)).toBeUndefined();
    },
  );

  it.each(['/callback', 'shop.example/cb', '', 'http://'])('refuses %j, which is no absolute URL', (value) => {
    expect(credentialFreeUrl(value)).toBeUndefined();
  });
});

describe('splitLoopbackUrls', () => {
  const base = { amount: '10.00', reference_id: 'order-1', customer_name: 'Aminah' };

  it('takes http loopback callback_url and redirect_url out of the params, normalised', () => {
    const params = {
      ...base,
      callback_url: 'HTTP://LocalHost:3000/hooks',
      redirect_url: 'http://[0:0:0:0:0:0:0:1]:5173/done',
    };
    const { rest, urls } = splitLoopbackUrls(params);
    expect(urls).toEqual({ callback_url: 'http://localhost:3000/hooks', redirect_url: 'http://[::1]:5173/done' });
    expect(rest).toEqual(base);
  });

  it("leaves the caller's params object as it was", () => {
    const params = { ...base, callback_url: 'http://127.0.0.1:3000/hooks' };
    splitLoopbackUrls(params);
    expect(params).toEqual({ ...base, callback_url: 'http://127.0.0.1:3000/hooks' });
  });

  it.each([
    ['https, which the https rule checks', 'https://localhost:3000/hooks'],
    ['http to a host that is not loopback', 'http://shop.example/hooks'],
    ['http to a look-alike of loopback', 'http://127.0.0.1.nip.io/hooks'],
    ['credentials', 'http://user:pass@localhost:3000/hooks'],
    ['a CR LF', 'http://localhost:3000/hooks\r\nX-Evil: 1'],
    ['a trailing space', 'http://localhost:3000/hooks '],
    ['no absolute URL', '/hooks'],
    ['no scheme (parsed as a "localhost:" scheme, not http)', 'localhost:3000/hooks'],
  ])('leaves a callback_url with %s in the params for the schema to judge', (_what, callback_url) => {
    const { rest, urls } = splitLoopbackUrls({ ...base, callback_url });
    expect(urls).toEqual({});
    expect(rest).toEqual({ ...base, callback_url });
  });

  it('leaves params that are an array as they were, for the schema to refuse as a whole', () => {
    const params = ['http://localhost:3000/hooks'];
    const { rest, urls } = splitLoopbackUrls(params);
    expect(urls).toEqual({});
    expect(rest).toBe(params);
  });

  it('takes only the field that qualifies when the other does not', () => {
    const { rest, urls } = splitLoopbackUrls({
      ...base,
      callback_url: 'http://localhost/hooks',
      redirect_url: 'http://shop.example/done',
    });
    expect(urls).toEqual({ callback_url: 'http://localhost/hooks' });
    expect(rest).toEqual({ ...base, redirect_url: 'http://shop.example/done' });
  });

  it('leaves other fields holding loopback URLs alone', () => {
    const params = { ...base, metadata: { callback_url: 'http://localhost/x' }, return_url: 'http://localhost/y' };
    const { rest, urls } = splitLoopbackUrls(params);
    expect(urls).toEqual({});
    expect(rest).toEqual(params);
  });

  it.each([null, undefined, 'params', 42])('hands %j, which is no object, back untouched', (params) => {
    expect(splitLoopbackUrls(params)).toEqual({ rest: params, urls: {} });
  });
});
