/**
 * A reconciliation job: payments created but not confirmed by a callback within N minutes are
 * looked up and handed to the same fulfilment code the webhook handler calls, exactly once.
 *
 * Exactly once holds because the job and the webhook handler claim the same key
 * (`paymentKey(payment_id, status)`, the handler's default idempotency key) in the same store
 * (`handler.store`, a RedisWebhookStore on a fleet) through the same `runOnce`. A callback that
 * arrives while the job runs, or after it, finds the key taken or done and does not fulfil again;
 * a job run that meets a callback in flight skips the payment (`in_flight`) for the next run.
 *
 * Run it against the built-in mock: `npx tsx examples/reconcile.ts`. Schedule it every few
 * minutes in production; N should exceed the gateway's callback retries (about 6 s) by a margin.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { MyrGateway, TERMINAL_STATUSES, type PaymentStatus } from 'myr-gateway';
import {
  createNodeHandler,
  createWebhookHandler,
  paymentKey,
  runOnce,
  type WebhookHandler,
} from 'myr-gateway/webhooks';

/** What fulfilment needs, whether it comes from a callback or from a status lookup. */
export interface PaymentOutcome {
  payment_id: string;
  reference_id: string;
  status: string;
  amount: number;
}

/** What one run of the job did. */
export interface ReconcileReport {
  /** Fulfilled by this run. */
  fulfilled: string[];
  /** Already handled by a callback (or an earlier run), or superseded by a later status that was. */
  alreadyHandled: string[];
  /** Being handled right now elsewhere, or still PROCESSING: look again next run. */
  later: string[];
  /** The lookup or the fulfilment failed: look again next run. */
  failed: string[];
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/**
 * One run: every reference in `unconfirmed` (created more than N minutes ago, no callback
 * recorded) is looked up; a terminal one goes to `fulfil` through `runOnce` on `store`.
 */
export async function reconcilePayments(options: {
  gateway: MyrGateway;
  /** The handler's store (a plain or a transactional one): the job claims in the same ledger. */
  store: WebhookHandler['store'];
  unconfirmed: string[];
  fulfil: (payment: PaymentOutcome) => Promise<void>;
}): Promise<ReconcileReport> {
  const report: ReconcileReport = { fulfilled: [], alreadyHandled: [], later: [], failed: [] };
  for (const referenceId of options.unconfirmed) {
    let status: PaymentStatus;
    try {
      // Paced like every call: a long list waits for rate-limit slots instead of meeting 429s.
      status = await options.gateway.payments.retrieve(referenceId);
    } catch {
      report.failed.push(referenceId); // not found yet, or the service is unavailable: next run
      continue;
    }
    if (!TERMINAL.has(status.status)) {
      report.later.push(referenceId);
      continue;
    }
    const outcome: PaymentOutcome = {
      payment_id: status.payment_id,
      reference_id: status.reference_id,
      status: status.status,
      amount: status.amount,
    };
    try {
      // `payment` keeps the handler's order: a SUCCESS read before a refund is not fulfilled once the REFUNDED was.
      const result = await runOnce(
        options.store,
        paymentKey(status.payment_id, status.status),
        () => options.fulfil(outcome),
        { payment: status },
      );
      (result.outcome === 'processed'
        ? report.fulfilled
        : result.outcome === 'in_flight'
          ? report.later
          : report.alreadyHandled
      ).push(referenceId);
    } catch {
      report.failed.push(referenceId); // the claim was released: the next run (or a callback) tries again
    }
  }
  return report;
}

/** The demo: one payment confirmed by its callback, one whose callback was lost. */
async function main(): Promise<void> {
  const { createMockGateway } = await import('myr-gateway/testing');
  const fulfilled: string[] = [];
  // The one fulfilment function, called by the webhook handler and by the job.
  const fulfil = async (payment: PaymentOutcome) => {
    if (payment.status === 'SUCCESS') fulfilled.push(payment.reference_id);
  };
  const handler = createWebhookHandler({
    verifier: { apiKey: 'sk_test_reconcile_0001' },
    onEvent: (event) => fulfil(event.signed),
  });
  const handle = createNodeHandler(handler);
  const server = createServer(handle).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const mock = createMockGateway({
    environment: 'test',
    merchants: [{ merchantId: 'M_RECONCILE', apiKey: 'sk_test_reconcile_0001' }],
  });
  mock.listen();
  try {
    const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant });
    const params = (reference_id: string) =>
      ({
        amount: 25,
        reference_id,
        customer_name: 'Aisyah Rahman',
        customer_phone: '60123456789',
        payment_method: 'QR_PAYMENT',
      }) as const;
    const a = await gateway.payments.create(params(`RECON${Date.now()}A`));
    const b = await gateway.payments.create(params(`RECON${Date.now()}B`));
    // A's callback reaches the handler; B's goes to an address where nobody listens.
    const port = (server.address() as AddressInfo).port;
    await mock.completePayment(a.payment_id, 'SUCCESS', { callbackUrl: `http://127.0.0.1:${port}/webhooks` });
    await mock.completePayment(b.payment_id, 'SUCCESS', { callbackUrl: 'http://127.0.0.1:9/lost', retryDelaysMs: [] });

    const report = await reconcilePayments({
      gateway,
      store: handler.store,
      unconfirmed: [a.reference_id, b.reference_id],
      fulfil,
    });
    console.log(`fulfilled by the job: ${report.fulfilled.join(', ')}`);
    console.log(`already handled by a callback: ${report.alreadyHandled.join(', ')}`);
    console.log(`fulfilments: ${fulfilled.length}, distinct orders: ${new Set(fulfilled).size}`);
  } finally {
    mock.close();
    server.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
