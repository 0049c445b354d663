/**
 * What RedisWebhookStore's options decide before any command: the ledger's MAC keys (which one
 * is written), the WAIT after each write and how long a payment's records are kept, each refused
 * with a ConfigurationError naming it.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors/base.js';
import { ledgerKeys, paymentRecordTtl, replicaWait } from '../../../src/redis/webhook-ledger-options.js';

describe('ledgerKeys', () => {
  it('derives one key per api key, the one written first: the last listed unless writeWith names another', () => {
    const [a] = ledgerKeys({ authenticateWith: 'sk_a' });
    const [b] = ledgerKeys({ authenticateWith: 'sk_b' });
    expect(a).toHaveLength(32);
    expect(a?.equals(b as Buffer)).toBe(false);
    const both = ledgerKeys({ authenticateWith: ['sk_a', 'sk_b'] });
    expect(both.map((k) => k.toString('hex'))).toEqual([b?.toString('hex'), a?.toString('hex')]);
    const rotated = ledgerKeys({ authenticateWith: ['sk_a', 'sk_b'], writeWith: 'sk_a' });
    expect(rotated.map((k) => k.toString('hex'))).toEqual([a?.toString('hex'), b?.toString('hex')]);
  });

  it('writes plain values without authenticateWith', () => {
    expect(ledgerKeys({})).toEqual([]);
  });

  it.each([
    ['writeWith without authenticateWith', { writeWith: 'sk_a' }, 'writeWith'],
    ['an empty list', { authenticateWith: [] }, 'authenticateWith'],
    ['an empty key', { authenticateWith: [''] }, 'authenticateWith'],
    ['writeWith not among the keys', { authenticateWith: ['sk_a'], writeWith: 'sk_b' }, 'writeWith'],
  ])('refuses %s, naming the option', (_, options, field) => {
    expect(() => ledgerKeys(options)).toThrow(ConfigurationError);
    expect(() => ledgerKeys(options)).toThrow(expect.objectContaining({ field }));
  });
});

describe('replicaWait', () => {
  it('asks for WAIT <replicas> <timeoutMs>, or nothing when not asked', () => {
    expect(replicaWait({ waitForReplicas: { replicas: 1, timeoutMs: 200 } })).toEqual(['WAIT', '1', '200']);
    expect(replicaWait({})).toBeUndefined();
  });

  it.each([
    ['no replica', { waitForReplicas: { replicas: 0, timeoutMs: 200 } }],
    ['a fraction of a replica', { waitForReplicas: { replicas: 1.5, timeoutMs: 200 } }],
    ['a wait as long as the store timeout', { timeoutMs: 500, waitForReplicas: { replicas: 1, timeoutMs: 500 } }],
    ['a wait above the default store timeout', { waitForReplicas: { replicas: 1, timeoutMs: 1000 } }],
  ])('refuses %s, naming waitForReplicas', (_, options) => {
    expect(() => replicaWait(options)).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', field: 'waitForReplicas' }),
    );
  });
});

describe('paymentRecordTtl', () => {
  it('keeps a payment 30 days unless told; any whole number of ms, above the 2^31 − 1 of a timer too', () => {
    expect(paymentRecordTtl({})).toBe(2_592_000_000);
    expect(paymentRecordTtl({ paymentRecordTtlMs: 365 * 86_400_000 })).toBe(31_536_000_000);
    expect(paymentRecordTtl({ paymentRecordTtlMs: 1 })).toBe(1);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
    'refuses %s with a ConfigurationError naming the option',
    (ms) => {
      expect(() => paymentRecordTtl({ paymentRecordTtlMs: ms })).toThrow(ConfigurationError);
      expect(() => paymentRecordTtl({ paymentRecordTtlMs: ms })).toThrow(
        expect.objectContaining({ field: 'paymentRecordTtlMs' }),
      );
    },
  );
});
