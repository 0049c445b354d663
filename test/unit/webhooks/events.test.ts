/**
 * src/webhooks/events.ts on its own: the event handed to merchant code keeps what the signature
 * proves (`signed`) apart from what anyone on the path could have changed (`unsigned`), takes its
 * kind from the caller (the verifier derives it from the signed payment_id), and turns unsigned
 * values of the wrong type into null instead of refusing an authentic callback.
 */
import { describe, expect, it } from 'vitest';
import { TERMINAL_STATUSES, hasTerminalStatus, toEvent, type SignedEventFields } from '../../../src/webhooks/events.js';
import type { SignedCallbackFields } from '../../../src/webhooks/signing-scheme.js';
import { DEPOSIT_BODY, SIGNED_CALLBACK_FIELDS as SIGNED } from '../../fixtures/webhook-vectors-helpers.js';

const SIGNATURE = 'ab'.repeat(32);

const fieldsWith = (status: string): SignedCallbackFields => ({ ...SIGNED, status });

describe('hasTerminalStatus', () => {
  it('knows exactly the five terminal statuses of the spec', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(['CANCELLED', 'EXPIRED', 'FAILED', 'REFUNDED', 'SUCCESS']);
  });

  it.each(['SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED'])('accepts %s', (status) => {
    expect(hasTerminalStatus(fieldsWith(status))).toBe(true);
  });

  it.each(['PENDING', 'PROCESSING', 'success', 'Success', ' SUCCESS', 'SUCCESS ', '', 'toString', '__proto__'])(
    'refuses %j',
    (status) => {
      expect(hasTerminalStatus(fieldsWith(status))).toBe(false);
    },
  );
});

describe('toEvent: a deposit', () => {
  const body = {
    ...DEPOSIT_BODY,
    signature: SIGNATURE,
    bank_code: 'MBBEMYKL',
    account_number: '****6789',
  };

  it('keeps the signed fields as given and the unsigned display fields apart', () => {
    const event = toEvent('DEPOSIT', SIGNED, body, SIGNATURE, 0);
    expect(event).toEqual({
      transaction_type: 'DEPOSIT',
      signed: SIGNED,
      unsigned: { transaction_type: 'DEPOSIT', gateway_reference: 'GW123456', created_at: '2026-03-01T09:55:00.000Z' },
      signature: SIGNATURE,
      keyIndex: 0,
    });
    expect(event.signed).toBe(SIGNED);
  });

  it('carries no bank fields on a deposit, even when the body has them', () => {
    const event = toEvent('DEPOSIT', SIGNED, body, SIGNATURE, 0);
    expect(event.unsigned).not.toHaveProperty('bank_code');
    expect(event.unsigned).not.toHaveProperty('account_number');
  });
});

describe('toEvent: a withdrawal', () => {
  const signed: SignedEventFields = { ...SIGNED, payment_id: 'WD_1', status: 'FAILED', completed_at: null };

  it('adds the unsigned bank code and masked account number', () => {
    const event = toEvent(
      'WITHDRAWAL',
      signed,
      { bank_code: 'MBBEMYKL', account_number: '****6789', gateway_reference: null },
      SIGNATURE,
      1,
    );
    expect(event.transaction_type).toBe('WITHDRAWAL');
    expect(event.unsigned).toEqual({
      transaction_type: 'WITHDRAWAL',
      gateway_reference: null,
      created_at: null,
      bank_code: 'MBBEMYKL',
      account_number: '****6789',
    });
    expect(event.keyIndex).toBe(1);
  });

  it('answers null for every unsigned field the body lacks', () => {
    const event = toEvent('WITHDRAWAL', signed, {}, SIGNATURE, 0);
    expect(event.unsigned).toEqual({
      transaction_type: 'WITHDRAWAL',
      gateway_reference: null,
      created_at: null,
      bank_code: null,
      account_number: null,
    });
  });
});

describe('toEvent: signed and unsigned stay apart', () => {
  it('takes amount, status and ids from the signed fields, never from the body copies', () => {
    const forged = { ...SIGNED, amount: 999_999, status: 'REFUNDED', payment_id: 'PAY_OTHER', reference_id: 'OTHER' };
    const event = toEvent('DEPOSIT', SIGNED, forged, SIGNATURE, 0);
    expect(event.signed.amount).toBe(120.5);
    expect(event.signed.status).toBe('SUCCESS');
    expect(event.signed.payment_id).toBe('PAY_8F3K2M9Q');
    expect(JSON.stringify(event.unsigned)).not.toMatch(/999999|REFUNDED|PAY_OTHER|OTHER/);
  });

  it("takes the kind from the caller, not from the body's unsigned transaction_type", () => {
    const event = toEvent(
      'WITHDRAWAL',
      { ...SIGNED, payment_id: 'WD_1' },
      { transaction_type: 'DEPOSIT' },
      SIGNATURE,
      0,
    );
    expect(event.transaction_type).toBe('WITHDRAWAL');
    expect(event.unsigned.transaction_type).toBe('WITHDRAWAL');
  });

  it('hands out no body field beyond the ones it names (metadata, signature copies and extras stay out)', () => {
    const event = toEvent('DEPOSIT', SIGNED, { metadata: { order: 1 }, extra: 'x', signature: 'other' }, SIGNATURE, 0);
    expect(Object.keys(event.unsigned).sort()).toEqual(['created_at', 'gateway_reference', 'transaction_type']);
    expect(event.signature).toBe(SIGNATURE);
  });
});

describe('toEvent: unsigned values of another type', () => {
  it.each([
    ['a string', 'GW1', 'GW1'],
    ['an empty string', '', ''],
    ['an integer', 123456, '123456'],
    ['a decimal', 12.5, '12.5'],
    ['NaN', Number.NaN, null],
    ['Infinity', Number.POSITIVE_INFINITY, null],
    ['null', null, null],
    ['a boolean', true, null],
    ['an object', { id: 'GW1' }, null],
    ['an array', ['GW1'], null],
  ])('reads %s as %j', (_name, value, expected) => {
    const event = toEvent(
      'WITHDRAWAL',
      { ...SIGNED, payment_id: 'WD_1' },
      { gateway_reference: value, created_at: value, bank_code: value, account_number: value },
      SIGNATURE,
      0,
    );
    expect(event.unsigned).toMatchObject({
      gateway_reference: expected,
      created_at: expected,
      bank_code: expected,
      account_number: expected,
    });
  });
});
