// Compile-time checks, run by `npm run typecheck`: a transactional store hands the merchant's
// own transaction type to onEvent and runOnce; a plain store gives `tx: undefined` and keeps
// `runOnce(store, key, () => …)` compiling as it did.
import {
  createExpressMiddleware,
  createFastifyHandler,
  createHonoHandler,
  createKoaMiddleware,
  createNodeHandler,
  createWebHandler,
  createWebhookHandler,
  MemoryWebhookStore,
  runOnce,
  type TransactionalWebhookStore,
  type WebhookHandler,
} from '../../src/webhooks/index.js';

interface PoolClient {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}
declare const ledger: TransactionalWebhookStore<PoolClient>;
declare const handler: WebhookHandler;

createWebhookHandler({
  verifier: { apiKey: 'sk_test_types' },
  store: ledger,
  onEvent: async (event, { key, tx }) => {
    await tx.query("UPDATE orders SET status = 'paid' WHERE reference_id = $1", [event.signed.reference_id, key]);
  },
});

createWebhookHandler({
  verifier: { apiKey: 'sk_test_types' },
  store: new MemoryWebhookStore(),
  onEvent: (_event, { tx }) => {
    const none: undefined = tx;
    return none;
  },
});

createWebhookHandler({
  verifier: { apiKey: 'sk_test_types' },
  onEvent: (_event, { tx }) => {
    // @ts-expect-error a plain store has no transaction
    void tx.query('UPDATE orders');
  },
});

async function jobs() {
  const fromLedger = await runOnce(ledger, 'payment:PAY_1:SUCCESS', ({ tx }) => tx.query('UPDATE orders'));
  const plain = await runOnce(new MemoryWebhookStore(), 'payment:PAY_1:SUCCESS', () => 1);
  const value: number | undefined = plain.outcome === 'processed' ? plain.value : undefined;
  // handler.store may be either kind: the job gets an unknown tx, never a wrong one.
  await runOnce(handler.store, 'payment:PAY_1:SUCCESS', ({ tx }) => {
    const unknownTx: unknown = tx;
    return unknownTx;
  });
  // @ts-expect-error a plain store cannot promise a transaction
  await runOnce<void, PoolClient>(new MemoryWebhookStore(), 'payment:PAY_1:SUCCESS', ({ tx }) => void tx.query('x'));
  return [fromLedger, value];
}
void jobs;

// Every adapter takes the handler's options with a ledger as createWebhookHandler does: the
// merchant's onEvent sees its own transaction type, with no cast and no handler built first.
for (const adapter of [
  createExpressMiddleware,
  createNodeHandler,
  createFastifyHandler,
  createHonoHandler,
  createKoaMiddleware,
  createWebHandler,
]) {
  adapter({
    verifier: { apiKey: 'sk_test_types' },
    store: ledger,
    onEvent: async (event, { tx }) => {
      await tx.query('UPDATE orders SET status = $1', [event.signed.status]);
    },
  });
  adapter({
    verifier: { apiKey: 'sk_test_types' },
    onEvent: (_event, { tx }) => {
      // @ts-expect-error a plain store has no transaction
      void tx.query('UPDATE orders');
    },
  });
}
