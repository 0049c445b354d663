/**
 * A span per handled callback, when the merchant passes a tracer. Nothing here imports
 * `@opentelemetry/api`: the webhooks entry stays free of it.
 *
 * @module
 */
import { runTraced, setAttributes, SPAN_STATUS_ERROR, type SpanLike, type TracerLike } from '../core/observe/trace.js';
import type { WebhookRequest } from './request-parts.js';
import type { WebhookResponse } from './handler-options.js';

function describe(span: SpanLike | undefined, response: WebhookResponse): WebhookResponse {
  if (!span) return response;
  const signed = response.event?.signed;
  setAttributes(span, {
    'http.response.status_code': response.status,
    'myr.webhook.outcome': response.body.outcome,
    'myr.webhook.reason': response.body.reason,
    'myr.transaction_type': response.event?.transaction_type,
    'myr.webhook_id': signed?.webhook_id,
    'myr.payment_id': signed?.payment_id,
    'myr.reference_id': signed?.reference_id,
    'myr.status': signed?.status,
  });
  if (response.status >= 500) span.setStatus({ code: SPAN_STATUS_ERROR, message: response.body.outcome });
  span.end();
  return response;
}

/**
 * Runs `handle` inside a `myr-gateway webhook` span carrying the outcome, the answer's status
 * and the signed identifiers (webhook, payment and reference id, status): never the body, the
 * signature, a key or an account number. `handle` never throws, and a tracer that throws
 * never changes the answer (nor runs `handle` twice).
 */
export function traced(tracer: TracerLike | undefined, handle: (request: WebhookRequest) => Promise<WebhookResponse>) {
  if (!tracer) return handle;
  return (request: WebhookRequest): Promise<WebhookResponse> =>
    runTraced(
      tracer,
      'myr-gateway webhook',
      {},
      (span) => handle(request).then((response) => describe(span, response)),
      () => {},
    );
}
