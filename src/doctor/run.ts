/**
 * The checks of `npx myr-gateway doctor` that ask the service, through the public client with
 * a fresh token cache: one token request and one status lookup of a reference nobody uses.
 * Nothing here creates a payment or a withdrawal.
 *
 * @module
 */
import { MemoryTokenStore, MyrGateway, MyrGatewayError, type ResponseEvent } from '../index.js';
import {
  checkCallbackUrl,
  checkClockSkew,
  readConfiguration,
  tokenRateLimitHint,
  ENV,
  type CheckResult,
  type Environment,
} from './checks.js';

/** What {@link runDoctor} reads and which clock it trusts. */
export interface DoctorInput {
  /** The environment, usually `process.env`. */
  env: Environment;
  /**
   * The local clock, compared with the service's `Date` header.
   * @default Date.now
   */
  now?: () => number;
  /**
   * The fetch the client uses.
   * @default globalThis.fetch
   */
  fetch?: typeof globalThis.fetch;
}

/** A reference no merchant uses: `DOCTOR` and 20 random hex digits (alphanumeric, as the spec requires). */
function unusedReference(): string {
  const bytes = new Uint8Array(10);
  globalThis.crypto.getRandomValues(bytes);
  return `DOCTOR${[...bytes]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase()}`;
}

/** An SDK error's message, starting with its code; another error's name. Both are free of secrets. */
function describeError(error: unknown): string {
  if (error instanceof MyrGatewayError)
    return error.message.startsWith(error.code) ? error.message : `${error.code}: ${error.message}`;
  return error instanceof Error ? error.name : 'unknown error';
}

const skip = (name: CheckResult['name'], detail: string): CheckResult => ({ name, outcome: 'skip', detail });

/**
 * Runs every check and returns one result per check, in order. Never throws for a service or
 * configuration problem: those are failed checks.
 *
 * @example
 * ```ts
 * const results = await runDoctor({ env: process.env });
 * const failed = results.find((r) => r.outcome === 'fail');
 * ```
 */
export async function runDoctor(input: DoctorInput): Promise<CheckResult[]> {
  const now = input.now ?? Date.now;
  const read = readConfiguration(input.env);
  const after = ['token', 'status lookup', 'clock', 'rate limits'] as const;
  if ('missing' in read) {
    return [
      { name: 'configuration', outcome: 'fail', detail: `${read.missing.join(', ')} not set` },
      ...after.map((name) => skip(name, 'needs the configuration')),
      checkCallbackUrl(input.env[ENV.callbackUrl]?.trim() || undefined),
    ];
  }
  if ('invalid' in read) {
    return [
      { name: 'configuration', outcome: 'fail', detail: describeError(read.invalid) },
      ...after.map((name) => skip(name, 'needs the configuration')),
      checkCallbackUrl(input.env[ENV.callbackUrl]?.trim() || undefined),
    ];
  }
  const { configuration } = read;
  const events: ResponseEvent[] = [];
  const seen: { date?: string; at?: number } = {};
  const baseFetch = input.fetch ?? globalThis.fetch;
  let gateway: MyrGateway;
  try {
    gateway = new MyrGateway({
      baseUrl: configuration.baseUrl,
      merchantId: configuration.merchantId,
      apiKey: configuration.apiKey,
      // As readConfiguration resolved it: plain http only on 127.0.0.1 (the sandbox).
      allowInsecureLoopback: true,
      // A cache of its own: the token check must really ask the service for a token.
      tokenStore: new MemoryTokenStore(),
      maxRetries: 1,
      timeout: 10_000,
      totalTimeout: 30_000,
      logLevel: 'off',
      tracer: false,
      // Answers only: an attempt that got none (a refused or failed TLS connection) says nothing of the service.
      onResponse: (event) => void (event.status !== undefined && events.push(event)),
      fetch: async (resource, init) => {
        const response = await baseFetch(resource, init);
        const date = response.headers.get('date');
        if (date !== null) Object.assign(seen, { date, at: now() });
        return response;
      },
    });
  } catch (error) {
    return [
      { name: 'configuration', outcome: 'fail', detail: describeError(error) },
      ...after.map((name) => skip(name, 'needs the configuration')),
      checkCallbackUrl(configuration.callbackUrl),
    ];
  }
  const results: CheckResult[] = [
    {
      name: 'configuration',
      outcome: 'ok',
      detail: `${configuration.baseUrl.replace(/\/$/, '')} as merchant ${configuration.merchantId}`,
    },
  ];

  const reference = unusedReference();
  let lookupError: unknown;
  let found = false;
  try {
    await gateway.payments.retrieve(reference);
    found = true;
  } catch (error) {
    lookupError = error;
  }

  const tokenAnswers = events.filter((e) => e.path === '/auth/token');
  const tokenObtained = tokenAnswers.some((e) => e.status === 200);
  if (tokenObtained) {
    results.push({ name: 'token', outcome: 'ok', detail: 'access token obtained from POST /auth/token' });
  } else {
    const hint =
      lookupError instanceof MyrGatewayError && lookupError.code === 'INVALID_CREDENTIALS'
        ? `; check ${ENV.merchantId} and ${ENV.apiKey}`
        : lookupError instanceof MyrGatewayError && lookupError.status === 429
          ? tokenRateLimitHint(lookupError.retryAfter)
          : tokenAnswers.length === 0
            ? `; is ${ENV.baseUrl} right and the service reachable?`
            : '';
    results.push({ name: 'token', outcome: 'fail', detail: `no access token: ${describeError(lookupError)}${hint}` });
  }

  if (!tokenObtained) {
    results.push(skip('status lookup', 'needs a token'));
  } else if (found) {
    results.push({
      name: 'status lookup',
      outcome: 'fail',
      detail: `GET /payment/status/${reference} found a payment; the spec says 404 NOT_FOUND`,
    });
  } else if (lookupError instanceof MyrGatewayError && lookupError.code === 'NOT_FOUND' && lookupError.status === 404) {
    results.push({
      name: 'status lookup',
      outcome: 'ok',
      detail: `GET /payment/status/${reference} answered 404 NOT_FOUND, as the spec says`,
    });
  } else {
    results.push({
      name: 'status lookup',
      outcome: 'fail',
      detail: `GET /payment/status/${reference}: ${describeError(lookupError)}; the spec says 404 NOT_FOUND`,
    });
  }

  results.push(
    seen.at === undefined ? skip('clock', 'no answer from the service') : checkClockSkew(seen.date, seen.at),
  );

  const limits = gateway.rateLimit;
  if (events.length === 0) results.push(skip('rate limits', 'no answer from the service'));
  else if (limits) {
    results.push({
      name: 'rate limits',
      outcome: 'ok',
      detail: `X-RateLimit-* headers seen (limit ${limits.limit ?? '?'}, remaining ${limits.remaining ?? '?'})`,
    });
  } else {
    results.push({
      name: 'rate limits',
      outcome: 'warn',
      detail: 'no X-RateLimit-* headers: the SDK paces to the published limits only',
    });
  }

  results.push(checkCallbackUrl(configuration.callbackUrl));
  return results;
}
