/**
 * The world a doc snippet runs in (test/docs/run-snippets.test.ts): the msw mock of the
 * service at the docs' own base URL (https://api.gateway.example/api/v1), a client wired to
 * it, a real webhook receiver on 127.0.0.1 that the mock's callbacks reach, a receiver at
 * http://127.0.0.1:3000/webhooks/myr served by msw (no port is taken), and recorders for the
 * merchant's own functions the snippets declare (`orders`, `metrics`, `onEvent`…).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { http, type RequestHandler } from 'msw';
import { setupServer, type SetupServer } from 'msw/node';
import { MyrGateway } from '../../src/index.js';
import { createMockGateway, type MockGateway } from '../../src/testing/index.js';
import { createNodeHandler, createWebHandler, signCallback, type SignedCallback, type WebhookEvent } from '../../src/webhooks/index.js';
import { asListener } from '../helpers/real-server.js';

/** The API key of every scene's merchant (the docs' receivers say sk_test_shop1): it signs the callbacks and is MYR_GATEWAY_API_KEY. */
export const SHOP = Object.freeze({ apiKey: 'sk_test_shop1' });
let scenes = 0;
/** The base URL the docs write out in full. */
export const DOCS_BASE_URL = 'https://api.gateway.example/api/v1';
/** The amount of every fixture order: what `orders.get(…).total` answers. */
export const ORDER_TOTAL = 120.5;

/** One call a snippet made to a function or method it declared, e.g. `orders.markPaid`. */
export interface RecordedCall {
  name: string;
  args: unknown[];
}

export class Scene {
  readonly calls: RecordedCall[] = [];
  /** Events the msw-served receiver at 127.0.0.1:3000 accepted. */
  readonly port3000: WebhookEvent[] = [];
  readonly gateway: MyrGateway;
  #msw: SetupServer | undefined;
  #signed: Promise<SignedCallback> | undefined;

  private constructor(
    /** A merchant id of this scene alone: the client's token cache is per process, and a token of the last scene's mock is unknown to this one. */
    readonly merchantId: string,
    readonly mock: MockGateway,
    readonly webhookUrl: string,
    private readonly receiver: Server,
    /** reference_id of each event the 127.0.0.1 receiver handed to its onEvent and completed. */
    readonly fulfilled: string[],
    /** references whose first delivery the receiver fails with a 500 (as a merchant's handler might). */
    readonly failOnce: Set<string>,
  ) {
    this.gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant, retry: { baseDelayMs: 1, jitterMs: 0 } });
  }

  /** A scene with its receiver listening; msw is started only when `msw` (a test-file snippet brings its own). */
  static async open({ msw }: { msw: boolean }): Promise<Scene> {
    const fulfilled: string[] = [];
    const failOnce = new Set<string>();
    const receiver = createServer(
      asListener(
      createNodeHandler({
        verifier: { apiKey: SHOP.apiKey },
        onEvent: (event) => {
          const reference = event.signed.reference_id;
          if (failOnce.delete(reference)) throw new Error(`the merchant's handler fails once for ${reference}`);
          fulfilled.push(reference);
        },
      }),),
    );
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/myr`;
    scenes += 1;
    const merchantId = `SHOP${scenes}`;
    const mock = createMockGateway({ baseUrl: DOCS_BASE_URL, merchants: [{ merchantId, apiKey: SHOP.apiKey, defaultCallbackUrl: webhookUrl }] });
    const scene = new Scene(merchantId, mock, webhookUrl, receiver, fulfilled, failOnce);
    if (msw) scene.#listen();
    return scene;
  }

  #listen(): void {
    const at3000 = createWebHandler({ verifier: { apiKey: SHOP.apiKey }, onEvent: (event) => void this.port3000.push(event) });
    this.#msw = setupServer(...this.mock.handlers, http.post('http://127.0.0.1:3000/webhooks/myr', ({ request }) => at3000(request)));
    this.#msw.listen({ onUnhandledFrame: 'bypass' }); // callbacks to the 127.0.0.1 receiver go out for real
  }

  /** More msw handlers, for the snippet's own hosts (e.g. the sandbox's 127.0.0.1:41873). */
  use(...handlers: RequestHandler[]): void {
    this.#msw?.use(...handlers);
  }

  /** The calls made to `name` (e.g. 'orders.markPaid'), each as its arguments. */
  callsTo(name: string): unknown[][] {
    return this.calls.filter((call) => call.name === name).map((call) => call.args);
  }

  /** A function that records its calls under `name` and answers `answer(...args)`. */
  recorder(name: string, answer: (...args: unknown[]) => unknown = () => undefined): (...args: unknown[]) => unknown {
    return (...args) => {
      this.calls.push({ name, args });
      return answer(...args);
    };
  }

  /** An object whose every method records its calls under `name.method`. */
  recorderObject(name: string, answers: Record<string, (...args: unknown[]) => unknown> = {}): object {
    // Not a thenable: `await` must hand the object over, not call its `then`.
    const isMethod = (key: string | symbol): key is string => typeof key === 'string' && key !== 'then' && key !== 'toJSON';
    return new Proxy({}, { get: (_target, key) => (isMethod(key) ? this.recorder(`${name}.${key}`, answers[key]) : undefined) });
  }

  /** A payment created through the mock and completed SUCCESS without a callback, as a deposit the status API confirms. */
  async paidDeposit(reference = 'ORDER5001'): Promise<SignedCallback> {
    const payment = await this.gateway.payments.create({
      amount: ORDER_TOTAL, reference_id: reference, customer_name: 'Aisyah Rahman', customer_phone: '60123456789', payment_method: 'QR_PAYMENT',
    });
    await this.mock.completePayment(payment.payment_id, 'SUCCESS', { deliver: false });
    return signCallback(SHOP.apiKey, { payment_id: payment.payment_id, reference_id: reference, amount: ORDER_TOTAL, status: 'SUCCESS' });
  }

  /**
   * A signed callback that no payment in the mock stands behind, for verify-only snippets: the
   * same one each call, so a snippet's `body` and `headers` belong together.
   */
  signed(): Promise<SignedCallback> {
    this.#signed ??= signCallback(SHOP.apiKey, { payment_id: 'PAY_DOCS1', reference_id: 'ORDER1', amount: ORDER_TOTAL, status: 'SUCCESS' });
    return this.#signed;
  }

  /** Payment ids, each of a PROCESSING payment in the mock. */
  async paymentIds(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let n = 1; n <= count; n += 1) {
      const payment = await this.gateway.payments.create({
        amount: ORDER_TOTAL, reference_id: `ORDER700${n}`, customer_name: 'Aisyah Rahman', customer_phone: '60123456789', payment_method: 'QR_PAYMENT',
      });
      ids.push(payment.payment_id);
    }
    return ids;
  }

  async close(): Promise<void> {
    this.#msw?.close();
    this.receiver.closeAllConnections();
    await new Promise((resolve) => this.receiver.close(resolve));
  }
}
