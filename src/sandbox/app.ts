/**
 * The sandbox's routes besides the API: hosted payment pages and their outcome buttons, the
 * dashboard with its actions, and the server-sent event stream of changes.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MockService } from '../testing/service.js';
import type { CallbackDelivery, CallbackOptions } from '../testing/types/callbacks.js';
import { dashboardLive, dashboardPage, type DashboardView } from './dashboard.js';
import type { DeliveryLog } from './delivery-log.js';
import { sendHtml, readForm, redirect, sameOrigin, sendText } from './http.js';
import { messagePage, OUTCOMES, outcomePage, paymentPage, type Outcome } from './pages/payment.js';
import { qrSvg } from './qr.js';

/** What the routes work on. */
export interface AppContext {
  port: number;
  baseUrl: string;
  merchantId: string;
  defaultCallbackUrl: string | undefined;
  service: MockService;
  /** Options of every completion and resend (the retry schedule). */
  callbackOptions: CallbackOptions;
  deliveries: DeliveryLog;
  /** Runs a completion or resend in the background and logs how it ended. */
  track(delivery: Promise<CallbackDelivery>): void;
  /** Open event streams. */
  streams: Set<ServerResponse>;
}

const PAGE = /^\/(pay|qr|bank|wallet)\/([^/]+)$/;
const OUTCOME = /^\/pay\/([^/]+)\/outcome$/;

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function view(ctx: AppContext): DashboardView {
  return {
    baseUrl: ctx.baseUrl,
    merchantId: ctx.merchantId,
    defaultCallbackUrl: ctx.defaultCallbackUrl,
    payments: ctx.service.payments,
    withdrawals: ctx.service.withdrawals,
    deliveries: ctx.deliveries.list(),
  };
}

/** `http:`/`https:` URLs only: a redirect never goes to `javascript:` or the like. */
function followable(url: string | null): url is string {
  if (url === null) return false;
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

async function page(ctx: AppContext, res: ServerResponse, kind: string, id: string): Promise<void> {
  const payment = ctx.service.getPayment(id);
  if (!payment || payment.payment_id !== id) {
    sendHtml(res, 404, messagePage('Payment not found', `No payment ${id} in this sandbox.`));
    return;
  }
  const gatewayPath = new URL(payment.gateway_redirect_url).pathname;
  if (kind === 'pay' && payment.status !== 'PROCESSING') {
    sendHtml(res, 200, outcomePage(payment));
  } else if (kind !== 'pay' && `/${kind}/${encodeURIComponent(id)}` !== gatewayPath) {
    redirect(res, gatewayPath); // e.g. /bank/ of a wallet payment: its own page
  } else if (kind === 'pay' && payment.payment_method !== 'QR_PAYMENT') {
    redirect(res, gatewayPath);
  } else {
    const svg = payment.qr_data_string ? await qrSvg(payment.qr_data_string) : undefined;
    sendHtml(res, 200, paymentPage(payment, ctx.merchantId, svg));
  }
}

async function outcome(ctx: AppContext, req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
  const form = await readForm(req);
  const choice = form?.get('outcome');
  const payment = ctx.service.getPayment(id);
  if (!payment || payment.payment_id !== id)
    return sendHtml(res, 404, messagePage('Payment not found', `No payment ${id}.`));
  if (!choice || !Object.hasOwn(OUTCOMES, choice))
    return sendHtml(res, 400, messagePage('Unknown outcome', 'Choose pay, decline, cancel or expire.'));
  if (payment.status !== 'PROCESSING') return redirect(res, `/pay/${encodeURIComponent(id)}`);
  ctx.track(ctx.service.completePayment(id, OUTCOMES[choice as Outcome], ctx.callbackOptions)); // Object.hasOwn(OUTCOMES, choice) checked just above
  redirect(res, followable(payment.redirect_url) ? payment.redirect_url : `/pay/${encodeURIComponent(id)}`);
}

async function dashboardAction(
  ctx: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const form = await readForm(req);
  const id = form?.get('id') ?? '';
  const record = ctx.service.getPayment(id) ?? ctx.service.getWithdrawal(id);
  if (!record || record.payment_id !== id)
    return sendHtml(res, 404, messagePage('Not found', `No payment or withdrawal ${id}.`));
  if (path === '/actions/resend') {
    ctx.track(ctx.service.resend(id, ctx.callbackOptions));
  } else if (path === '/actions/refund' && record.kind === 'DEPOSIT' && record.status === 'SUCCESS') {
    ctx.track(ctx.service.completePayment(id, 'REFUNDED', ctx.callbackOptions));
  } else if (path === '/actions/withdrawal' && record.kind === 'WITHDRAWAL' && record.status === 'PROCESSING') {
    const status = form?.get('status');
    if (status !== 'SUCCESS' && status !== 'FAILED')
      return sendHtml(res, 400, messagePage('Unknown status', 'Complete with SUCCESS or FAILED.'));
    ctx.track(ctx.service.completeWithdrawal(id, status, ctx.callbackOptions));
  } else {
    return sendHtml(
      res,
      409,
      messagePage('Not possible now', `${id} is ${record.status}; the dashboard has changed since it was drawn.`),
    );
  }
  redirect(res, '/');
}

function events(ctx: AppContext, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
  res.write('retry: 1000\n\n');
  ctx.streams.add(res);
  req.on('close', () => ctx.streams.delete(res));
}

/** Handles every non-API request. */
export async function handleApp(ctx: AppContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const method = req.method ?? 'GET';
  const path = url.pathname;
  if (method === 'GET' || method === 'HEAD') {
    if (path === '/') return sendHtml(res, 200, dashboardPage(view(ctx)));
    if (path === '/live') return sendHtml(res, 200, dashboardLive(view(ctx)));
    if (path === '/events') return events(ctx, req, res);
    const match = PAGE.exec(path);
    if (match) return page(ctx, res, match[1] as string, decode(match[2] as string)); // both groups of PAGE always take part in a match
    return sendHtml(res, 404, messagePage('Not found', `Nothing at ${path}.`));
  }
  if (method !== 'POST') return sendText(res, 405, 'method not allowed');
  if (!sameOrigin(req, ctx.port))
    return sendText(res, 403, "refused: this action must come from the sandbox's own pages");
  const match = OUTCOME.exec(path);
  if (match) return outcome(ctx, req, res, decode(match[1] as string)); // the group of OUTCOME always takes part in a match
  if (path === '/actions/resend' || path === '/actions/refund' || path === '/actions/withdrawal')
    return dashboardAction(ctx, req, res, path);
  return sendText(res, 404, 'not found');
}

/** Tells every open event stream that something changed. */
export function broadcast(streams: Set<ServerResponse>): void {
  for (const stream of streams) stream.write('event: change\ndata: {}\n\n');
}
