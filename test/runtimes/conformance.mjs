// The runtime conformance checks, shared by the Bun/Deno entry and the workerd Worker.
// Plain JavaScript with no imports: each entry passes in the SDK exactly as a merchant
// imports it from the installed package. It reports what it observed; the expectations
// live in conformance.test.ts, on the Node side.

/** What a thrown value looks like across the runtime boundary. */
function describeError(error, MyrGatewayError) {
  return {
    name: error?.name,
    code: error?.code,
    reason: error?.reason,
    field: error?.field,
    isMyrGatewayError: error instanceof MyrGatewayError,
  };
}

async function settle(promise, MyrGatewayError) {
  try {
    return { value: await promise };
  } catch (error) {
    return { error: describeError(error, MyrGatewayError) };
  }
}

function eventSummary(event) {
  const s = event.signed;
  return {
    transaction_type: event.transaction_type,
    webhook_id: s.webhook_id,
    payment_id: s.payment_id,
    reference_id: s.reference_id,
    amount: s.amount,
    status: s.status,
  };
}

/**
 * (a) The verifier and the exactly-once handler, called directly, once per crypto path.
 * `auto` is what the runtime picks; `web` forces Web Crypto.
 */
async function verifierChecks(webhooks, MyrGatewayError, input) {
  const { callbacks, apiKey } = input;
  const out = {};
  for (const mode of ['auto', 'web']) {
    const verifier = new webhooks.WebhookVerifier({ apiKey, crypto: mode });
    const verify = async (cb) => {
      const r = await settle(verifier.verify({ body: cb.rawBody, headers: cb.headers }), MyrGatewayError);
      return r.error ? { error: r.error } : { event: eventSummary(r.value) };
    };
    const runs = [];
    const handler = webhooks.createWebhookHandler({
      verifier,
      onEvent: (event) => {
        runs.push(event.signed.webhook_id);
      },
    });
    const deliver = async (cb) => {
      const r = await handler.handle({ body: cb.rawBody, headers: cb.headers });
      return { status: r.status, body: r.body };
    };
    out[mode] = {
      cryptoPath: verifier.cryptoPath,
      genuine: await verify(callbacks.genuine),
      tampered: await verify(callbacks.tampered),
      stale: await verify(callbacks.stale),
      handlerFirst: await deliver(callbacks.genuine),
      handlerReplay: await deliver(callbacks.genuine),
      handlerRedelivery: await deliver(callbacks.redelivery),
      handlerRuns: runs,
    };
  }
  return out;
}

/** A Web-standard handler whose `onEvent` records what it ran. */
export function conformanceWebHandler(webhooks, apiKey, runs) {
  return webhooks.createWebHandler({
    verifier: { apiKey },
    onEvent: (event) => {
      runs.push(event.signed.webhook_id);
    },
  });
}

/**
 * (b) The Web handler as the runtime serves it: `post(init)` sends one request to it
 * through the runtime's own server (Bun.serve, Deno.serve, a workerd service binding).
 */
async function webHandlerChecks(post, input) {
  const { callbacks } = input;
  const send = async (init) => {
    const response = await post(init);
    const text = await response.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, contentType: response.headers.get('content-type'), body };
  };
  const postCallback = (cb) => send({ method: 'POST', headers: cb.headers, body: cb.rawBody });
  return {
    genuine: await postCallback(callbacks.genuine),
    replay: await postCallback(callbacks.genuine),
    redelivery: await postCallback(callbacks.redelivery),
    tampered: await postCallback(callbacks.tampered),
    stale: await postCallback(callbacks.stale),
    missingSignature: await postCallback(callbacks.missingSignature),
    malformed: await send({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"webhook_id":' }),
    get: await send({ method: 'GET' }),
  };
}

/** (c) The client against the mock, which runs in Node as a real HTTP server. */
async function clientChecks(sdk, input) {
  const { MyrGateway, MyrGatewayError } = sdk;
  const gateway = new MyrGateway({
    baseUrl: input.mockBaseUrl,
    merchantId: input.merchantId,
    apiKey: input.apiKey,
    allowInsecureLoopback: true,
  });
  const params = {
    amount: 120.5,
    reference_id: input.referenceId,
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
    payment_method: 'BANK_TRANSFER',
    metadata: { provider_channel_id: 'MB2U0227' },
  };
  const created = await settle(gateway.payments.create(params), MyrGatewayError);
  const retrieved = await settle(gateway.payments.retrieve(input.referenceId), MyrGatewayError);
  const invalid = await settle(gateway.payments.create({ ...params, amount: 0 }), MyrGatewayError);
  const duplicate = await settle(gateway.payments.create(params), MyrGatewayError);
  const pick = (r) =>
    r.error
      ? { error: r.error }
      : {
          payment_id: r.value.payment_id,
          reference_id: r.value.reference_id,
          status: r.value.status,
          amount: r.value.amount,
        };
  return {
    created: pick(created),
    retrieved: pick(retrieved),
    invalidAmount: invalid.error ? { error: invalid.error } : { unexpected: 'accepted' },
    duplicateReference: duplicate.error ? { error: duplicate.error } : { unexpected: 'accepted' },
  };
}

/**
 * Runs every check and returns one JSON-able report.
 *
 * @param {object} options
 * @param {object} options.sdk what `import * from 'myr-gateway'` gave
 * @param {object} options.webhooks what `import * from 'myr-gateway/webhooks'` gave
 * @param {object} options.input the fixtures from the Node side
 * @param {(init: RequestInit) => Promise<Response>} options.post sends a request to the served Web handler
 * @param {string[]} options.runs the served handler's record of `onEvent` runs
 */
export async function runConformance({ sdk, webhooks, input, post, runs }) {
  const verifier = await verifierChecks(webhooks, sdk.MyrGatewayError, input);
  const webHandler = await webHandlerChecks(post, input);
  const client = await clientChecks(sdk, input);
  return {
    version: sdk.VERSION,
    errorTreeShared: new webhooks.WebhookVerificationError('malformed', 'x') instanceof sdk.MyrGatewayError,
    verifier,
    webHandler: { ...webHandler, runs: [...runs] },
    client,
  };
}
