/**
 * A real node:http service on 127.0.0.1 enforcing a rate limit lower than the published one
 * (issue 14: a cold burst must not meet a 429 storm). It answers `POST /api/v1/auth/token` and
 * `POST /api/v1/payment/request`; payment creations count in a sliding window of `windowMs`, as
 * the spec describes: every answer carries `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix
 * seconds, whole), a 429 also `Retry-After` (seconds) and the spec's error envelope. The window
 * may be any number of milliseconds (the spec's is a minute): one that is not whole seconds is
 * where the client's edge probe (src/core/pacing/edge-probe.ts) is refused.
 */
import { json, listen, readBody, service } from './real-server.js';

export interface RateLimitedService {
  /** The base URL to give the client (ends with `/api/v1`). */
  baseUrl: string;
  /**
   * Statuses of the payment creations, in the order they arrived, with their arrival time (ms)
   * and `reference_id` (which caller sent it, when a test names its callers' references).
   */
  readonly creates: { status: number; at: number; ref: string }[];
  /** The reference_ids created. */
  readonly created: Set<string>;
  /** Forgets the window and what was created (a fresh service, on the same address). */
  reset(): void;
  /** Forgets as `reset` does, and counts in a window of `windowMs` from now on (one that is not whole seconds, say). */
  setWindow(windowMs: number): void;
  /** From now on, answers each creation `ms` after counting it (a slow service: its requests stay in flight). */
  holdAnswers(ms: number): void;
  close(): Promise<void>;
}

/** Starts the service: at most `limit` payment creations per sliding `windowMs`. */
export async function startRateLimitedService(limit: number, initialWindowMs: number): Promise<RateLimitedService> {
  let windowMs = initialWindowMs;
  const arrivals: number[] = [];
  const creates: { status: number; at: number; ref: string }[] = [];
  const created = new Set<string>();
  let seq = 0;
  let holdMs = 0;
  const { url, close } = await listen(async (req, res) => {
    const body = await readBody(req);
    if (req.url === '/api/v1/auth/token') return json(res, 200, service.token());
    if (req.url !== '/api/v1/payment/request')
      return json(res, 404, { status: 'error', error: 'NOT_FOUND', message: 'no such path' });
    const now = Date.now();
    const params = JSON.parse(body) as { reference_id: string; amount: number };
    while (arrivals.length > 0 && (arrivals[0] as number) <= now - windowMs) arrivals.shift();
    const allowed = arrivals.length < limit;
    if (allowed) arrivals.push(now);
    const freesAt = (arrivals[0] ?? now) + windowMs;
    const headers = {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(Math.max(0, limit - arrivals.length)),
      'X-RateLimit-Reset': String(Math.ceil(freesAt / 1000)),
    };
    creates.push({ status: allowed ? 200 : 429, at: now, ref: params.reference_id });
    if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
    if (!allowed) {
      const retryAfter = String(Math.max(1, Math.ceil((freesAt - now) / 1000)));
      return json(
        res,
        429,
        { status: 'error', error: 'RATE_LIMITED', message: 'Too many requests' },
        { ...headers, 'Retry-After': retryAfter },
      );
    }
    const id = `PAY${++seq}`;
    created.add(params.reference_id);
    return json(res, 200, service.payment(id, params.reference_id, params.amount), headers);
  });
  const reset = () => {
    arrivals.length = 0;
    creates.length = 0;
    created.clear();
  };
  const setWindow = (ms: number) => {
    reset();
    windowMs = ms;
  };
  const holdAnswers = (ms: number) => {
    holdMs = ms;
  };
  return { baseUrl: `${url}/api/v1`, creates, created, reset, setWindow, holdAnswers, close };
}
