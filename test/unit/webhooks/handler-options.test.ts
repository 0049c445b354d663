/**
 * src/webhooks/handler-options.ts on its own: `resolveHandlerOptions` fills the documented
 * defaults and refuses, with a ConfigurationError whose `field` and message name the option to
 * fix, every option that cannot work, without ever echoing an api key.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MyrGatewayError } from '../../../src/core/errors/base.js';
import { DEFAULT_IN_FLIGHT_TTL_MS } from '../../../src/webhooks/delivery-policy.js';
import { resolveHandlerOptions, type WebhookHandlerOptions } from '../../../src/webhooks/handler-options.js';
import { MemoryWebhookStore } from '../../../src/webhooks/stores/memory.js';
import { WebhookVerifier } from '../../../src/webhooks/verifier.js';

const API_KEY = 'sk_live_handler_options_unit_0001';
const onEvent = () => {};
const base = (): WebhookHandlerOptions => ({ verifier: { apiKey: API_KEY }, onEvent });

/** The ConfigurationError `run` throws (fails the test when it throws something else or nothing). */
function configError(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('expected a ConfigurationError');
}

describe('resolveHandlerOptions: defaults', () => {
  it('dedupes by payment, claims for the delivery policy TTL, answers within 8 s (below the sandbox’s 10 s per attempt), renews for 10 min and remembers for 24 h', () => {
    const resolved = resolveHandlerOptions(base());
    expect(resolved).toMatchObject({
      mode: 'payment',
      inFlightTtlMs: DEFAULT_IN_FLIGHT_TTL_MS,
      handlerTimeoutMs: 8_000,
      maxRenewalMs: 600_000,
      completedTtlMs: 86_400_000,
      tracer: undefined,
      logger: undefined,
      onError: undefined,
    });
    expect(resolved.onEvent).toBe(onEvent);
  });

  it('builds a verifier from its options, and a fresh in-memory store for each handler', () => {
    const a = resolveHandlerOptions(base());
    const b = resolveHandlerOptions(base());
    expect(a.verifier).toBeInstanceOf(WebhookVerifier);
    expect(a.verifier.toleranceSeconds).toBe(300);
    expect(a.store).toBeInstanceOf(MemoryWebhookStore);
    expect(a.store).not.toBe(b.store);
  });

  it('keeps a verifier, store, logger and tracer given ready-made', () => {
    const verifier = new WebhookVerifier({ apiKey: API_KEY });
    const store = new MemoryWebhookStore();
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const tracer = { startActiveSpan: () => undefined };
    const onError = () => {};
    const resolved = resolveHandlerOptions({
      verifier,
      onEvent,
      store,
      logger,
      tracer: tracer as never,
      onError,
      idempotency: 'webhook',
    });
    expect(resolved.verifier).toBe(verifier);
    expect(resolved.store).toBe(store);
    expect(resolved.logger).toBe(logger);
    expect(resolved.tracer).toBe(tracer);
    expect(resolved.onError).toBe(onError);
    expect(resolved.mode).toBe('webhook');
  });

  it('takes the given timings as they are', () => {
    const resolved = resolveHandlerOptions({
      ...base(),
      inFlightTtlMs: 1,
      handlerTimeoutMs: 2_147_483_647,
      maxRenewalMs: 30 * 60_000,
      completedTtlMs: 600_000,
    });
    expect(resolved).toMatchObject({
      inFlightTtlMs: 1,
      handlerTimeoutMs: 2_147_483_647,
      maxRenewalMs: 1_800_000,
      completedTtlMs: 600_000,
    });
  });

  it('accepts console as the logger', () => {
    expect(resolveHandlerOptions({ ...base(), logger: console }).logger).toBe(console);
  });
});

describe('resolveHandlerOptions: completedTtlMs against the tolerance', () => {
  it('accepts exactly twice the tolerance, so a replay inside the tolerance on either side still finds its record', () => {
    expect(
      resolveHandlerOptions({ verifier: { apiKey: API_KEY, toleranceSeconds: 10 }, onEvent, completedTtlMs: 20_000 })
        .completedTtlMs,
    ).toBe(20_000);
  });

  it.each([19_999, 0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses %s with a tolerance of 10 s',
    (completedTtlMs) => {
      const error = configError(() =>
        resolveHandlerOptions({ verifier: { apiKey: API_KEY, toleranceSeconds: 10 }, onEvent, completedTtlMs }),
      );
      expect(error.field).toBe('completedTtlMs');
      expect(error.message).toContain('completedTtlMs');
      expect(error.message).toContain('twice the tolerance');
    },
  );

  it('stretches the 24 h default to twice a tolerance over 12 h, so a replay still finds its record', () => {
    expect(
      resolveHandlerOptions({ verifier: { apiKey: API_KEY, toleranceSeconds: 50_000 }, onEvent }).completedTtlMs,
    ).toBe(100_000_000);
    expect(
      resolveHandlerOptions({ verifier: { apiKey: API_KEY, toleranceSeconds: 43_200 }, onEvent }).completedTtlMs,
    ).toBe(86_400_000);
  });

  it('refuses a completedTtlMs the merchant set below twice a long tolerance, naming completedTtlMs as what to raise', () => {
    const error = configError(() =>
      resolveHandlerOptions({
        verifier: { apiKey: API_KEY, toleranceSeconds: 50_000 },
        onEvent,
        completedTtlMs: 86_400_000,
      }),
    );
    expect(error.field).toBe('completedTtlMs');
  });
});

describe('resolveHandlerOptions: refusals name what to fix', () => {
  it.each([
    ['inFlightTtlMs', 0],
    ['inFlightTtlMs', -1],
    ['inFlightTtlMs', Number.NaN],
    ['inFlightTtlMs', Number.POSITIVE_INFINITY],
    ['inFlightTtlMs', '4000'],
    ['handlerTimeoutMs', 0],
    ['handlerTimeoutMs', -25_000],
    ['handlerTimeoutMs', Number.NaN],
    ['handlerTimeoutMs', '25000'],
    ['maxRenewalMs', 0],
    ['maxRenewalMs', Number.NEGATIVE_INFINITY],
    ['maxRenewalMs', true],
    // Over what a Node timer holds (it would fire after 1 ms), or not whole.
    ['handlerTimeoutMs', 3e9],
    ['inFlightTtlMs', 2_147_483_648],
    ['maxRenewalMs', 2.5],
  ] as const)('refuses %s = %s as not a whole number of milliseconds a timer holds', (name, value) => {
    const error = configError(() => resolveHandlerOptions({ ...base(), [name]: value as never }));
    expect(error.field).toBe(name);
    expect(error.message).toBe(`${name} must be a whole number of milliseconds from 1 to 2147483647`);
  });

  it.each([
    ['onEvent missing', { verifier: { apiKey: API_KEY } }, 'onEvent', 'onEvent must be a function'],
    [
      'onEvent not a function',
      { verifier: { apiKey: API_KEY }, onEvent: 'handle' },
      'onEvent',
      'onEvent must be a function',
    ],
    ['an unknown idempotency', { ...base(), idempotency: 'both' }, 'idempotency', "'payment' or 'webhook'"],
    ['a tracer without startActiveSpan', { ...base(), tracer: { startSpan() {} } }, 'tracer', 'startActiveSpan'],
    ['a logger without error', { ...base(), logger: { warn() {} } }, 'logger', 'warn and error'],
    ['a logger without warn', { ...base(), logger: { error() {} } }, 'logger', 'warn and error'],
    ['a null logger', { ...base(), logger: null }, 'logger', 'warn and error'],
    ['a verifier with no api key', { verifier: {}, onEvent }, 'apiKey', 'apiKey'],
    [
      'a verifier with a zero tolerance',
      { verifier: { apiKey: API_KEY, toleranceSeconds: 0 }, onEvent },
      'toleranceSeconds',
      'toleranceSeconds',
    ],
  ])('refuses %s', (_name, options, field, text) => {
    const error = configError(() => resolveHandlerOptions(options as unknown as WebhookHandlerOptions));
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.code).toBe('INVALID_CONFIGURATION');
    expect(error.field).toBe(field);
    expect(error.message).toContain(text);
  });

  it.each([null, undefined, 'options', 42])('refuses %j as options', (options) => {
    const error = configError(() => resolveHandlerOptions(options as unknown as WebhookHandlerOptions));
    expect(error.message).toContain('needs options');
  });

  it('never quotes the api key in a refusal', () => {
    const refusals = [
      { ...base(), idempotency: 'both' },
      { ...base(), inFlightTtlMs: -1 },
      { verifier: { apiKey: API_KEY, toleranceSeconds: -1 }, onEvent },
      { verifier: { apiKey: API_KEY, apiKeys: [API_KEY] }, onEvent },
      { ...base(), logger: {} },
    ];
    for (const options of refusals) {
      const error = configError(() => resolveHandlerOptions(options as unknown as WebhookHandlerOptions));
      expect(error.message).not.toContain(API_KEY);
      expect(JSON.stringify(error)).not.toContain(API_KEY);
      expect(inspect(error)).not.toContain(API_KEY);
    }
  });

  it('keeps the api key out of what it resolves when that is logged', () => {
    const resolved = resolveHandlerOptions(base());
    expect(JSON.stringify(resolved)).not.toContain(API_KEY);
    expect(inspect(resolved, { depth: 5 })).not.toContain(API_KEY);
  });
});
