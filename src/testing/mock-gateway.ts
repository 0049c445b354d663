/**
 * `createMockGateway`: the whole service as msw handlers over in-memory state. The service
 * itself (state, dispatcher, callbacks) is in service.ts, shared with the sandbox.
 *
 * @module
 */
import { http, type RequestHandler } from 'msw';
import { setupServer, type SetupServer } from 'msw/node';
import { createMockService } from './service.js';
import type { MockGateway } from './types/gateway.js';
import type { MockGatewayOptions } from './types/options.js';

export { DEFAULT_BASE_URL, DEFAULT_MERCHANT } from './service.js';

/**
 * Creates an in-memory mock of the whole MYR Payment Gateway Service as msw handlers:
 * the four endpoints with every rule and error code of the spec, expiring tokens, rate
 * limits, fault injection, request recording, and signed callbacks.
 *
 * @example
 * ```ts
 * import { createMockGateway } from 'myr-gateway/testing';
 * import { MyrGateway } from 'myr-gateway';
 *
 * const mock = createMockGateway();
 * beforeAll(() => mock.listen());
 * afterEach(() => mock.reset());
 * afterAll(() => mock.close());
 *
 * it('creates a payment', async () => {
 *   const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant });
 *   const payment = await gateway.payments.create({
 *     amount: 120.5, reference_id: 'ORDER1001', customer_name: 'Aisyah', customer_phone: '60123456789',
 *     payment_method: 'MOBILE_WALLET',
 *   });
 *   expect(mock.getPayment(payment.payment_id)?.status).toBe('PROCESSING');
 * });
 * ```
 */
export function createMockGateway(options: MockGatewayOptions = {}): MockGateway {
  const service = createMockService(options);
  const { dispatch } = service;
  // The mock shows only its public members (getters kept live); the sandbox's extras stay out.
  const { dispatch: _d, resend: _r, snapshot: _s, restore: _t, ...members } = Object.getOwnPropertyDescriptors(service);
  // It has the descriptors of every member of the service but the extras taken out above.
  const mock = Object.defineProperties({}, members) as Omit<MockGateway, 'handlers' | 'listen' | 'close'>;
  const handlers: RequestHandler[] = [http.all(`${mock.baseUrl}/*`, ({ request }) => dispatch(request))];
  let server: SetupServer | undefined;
  return Object.assign(mock, {
    handlers,
    listen() {
      if (server) return;
      server = setupServer(...handlers);
      server.listen({ onUnhandledFrame: 'bypass' });
    },
    close() {
      server?.close();
      server = undefined;
    },
  });
}
