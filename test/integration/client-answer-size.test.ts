/**
 * A service answer the client reads is bounded: a body that never ends (a broken upstream, a
 * hostile host) is cut after 1 MiB and reads as the malformed answer it is, a typed error, instead
 * of filling the merchant's memory until the attempt's timeout. Real HTTP on 127.0.0.1.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MyrGateway, MyrGatewayError } from '../../src/index.js';
import { caught, paymentParams } from '../helpers/client.js';
import { asListener, json, readBody, service } from '../helpers/real-server.js';

type Endless = { status: number; chunked: boolean };
let endless: Endless | undefined;
/** Bytes the server wrote of each endless answer before the client closed the connection. */
const written: number[] = [];
let server: Server;
let baseUrl: string;

/** Writes `{"status":"success","data":"AAAA…` for ever (with or without a Content-Length that says so), until the client goes. */
function stream(res: ServerResponse, { status, chunked }: Endless): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(chunked ? {} : { 'content-length': String(1 << 30) }),
  });
  const chunk = Buffer.alloc(65_536, 'A');
  let sent = 0;
  let open = true;
  res.on('close', () => {
    open = false;
    written.push(sent);
  });
  res.write('{"status":"success","data":"');
  const pump = () => {
    while (open && sent < 256 * 1_048_576) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
}

beforeAll(async () => {
  server = createServer(
    asListener(async (req, res) => {
      await readBody(req);
      const path = req.url ?? '';
      if (path.endsWith('/auth/token')) return json(res, 200, service.token());
      if (endless) return stream(res, endless);
      return json(res, 200, service.status('PAY_REAL1', path.split('/').pop() ?? '', 120.5));
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const gateway = () =>
  new MyrGateway({
    baseUrl,
    merchantId: 'M1',
    apiKey: 'sk_real_http',
    allowInsecureLoopback: true,
    sleep: () => Promise.resolve(),
    random: () => 0,
  });

describe('an answer that never ends', () => {
  it.each([
    ['chunked', true],
    ['with a Content-Length of 1 GiB', false],
  ])(
    'a 2xx (%s) is cut after 1 MiB and is an INVALID_RESPONSE: the connection closed, the rest never read',
    async (_, chunked) => {
      const client = gateway();
      await client.payments.retrieve('WARM1');
      endless = { status: 200, chunked };
      written.length = 0;
      try {
        const error = await caught(client.payments.retrieve('ORDER1', { maxRetries: 0 }));
        expect(error).toBeInstanceOf(MyrGatewayError);
        expect(error.code).toBe('INVALID_RESPONSE');
      } finally {
        endless = undefined;
      }
      await expect.poll(() => written.length).toBe(1);
      // What the server got out before it saw the close: the 1 MiB read, plus what the sockets buffer.
      expect(written[0]).toBeLessThan(64 * 1_048_576);
    },
  );

  it('an error answer (500) is cut after 1 MiB too, and is a typed error that quotes at most 500 characters of it', async () => {
    const client = gateway();
    await client.payments.retrieve('WARM1');
    endless = { status: 500, chunked: true };
    written.length = 0;
    try {
      const error = await caught(client.payments.create(paymentParams(), { maxRetries: 0 }));
      expect(error).toBeInstanceOf(MyrGatewayError);
      expect(error.message.length).toBeLessThan(2_000);
    } finally {
      endless = undefined;
    }
    await expect.poll(() => written.length).toBeGreaterThan(0);
    expect(Math.max(...written)).toBeLessThan(64 * 1_048_576);
  });
});
