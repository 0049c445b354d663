/**
 * The verified callback, as the verifier hands it to merchant code.
 *
 * The spec signs only eight of the body's fields. The type keeps them apart:
 *
 * - `event.signed` holds exactly the signed fields. They are proven to come from the
 *   service: trust them for money decisions (which payment, which amount, which status).
 * - `event.unsigned` holds everything else the body carries (`transaction_type`,
 *   `gateway_reference`, `created_at`, and for withdrawals `bank_code` and
 *   `account_number`). Anyone on the path could have changed them without breaking the
 *   signature. Use them for display and logs; look the payment up
 *   ({@link confirmDeposit}) before acting on them.
 *
 * `event.transaction_type` is the discriminant of the union, lifted to the top so that
 * `switch (event.transaction_type)` narrows the whole event. It is derived from the
 * signed `payment_id` (`PAY_` is a deposit, any other id a withdrawal); a body whose
 * unsigned `transaction_type` contradicts it is refused by the verifier.
 *
 * @module
 */

import { TERMINAL_STATUSES, type TerminalStatus } from '../schemas/statuses.js';
import type { SignedCallbackFields } from './signing-scheme.js';

export { TERMINAL_STATUSES, type TerminalStatus };

/** Kinds of transaction a callback reports. */
export type TransactionType = 'DEPOSIT' | 'WITHDRAWAL';

/** The fields the signature covers. Proven authentic once `verify()` returns. */
export interface SignedEventFields {
  /** UUID of this delivery; the same on every retry of it. */
  readonly webhook_id: string;
  /** The payment's (or withdrawal's) identifier. Deposits begin with `PAY_`. */
  readonly payment_id: string;
  /** The merchant's own reference for the payment. */
  readonly reference_id: string;
  /** Amount in MYR, as the service sent it. */
  readonly amount: number;
  /** Currency code, `MYR`. */
  readonly currency: string;
  /** The terminal status reached. */
  readonly status: TerminalStatus;
  /** ISO 8601 time the service generated the callback (checked against the tolerance). */
  readonly timestamp: string;
  /** ISO 8601 completion time, or null when not completed. */
  readonly completed_at: string | null;
}

/** Unsigned fields common to both transaction types. */
interface UnsignedCommon {
  /** Gateway's transaction reference, or null. Not signed. */
  readonly gateway_reference: string | null;
  /** ISO 8601 creation time of the payment, or null when the body had none. Not signed. */
  readonly created_at: string | null;
}

/** Unsigned fields of a deposit callback. */
export interface DepositUnsignedFields extends UnsignedCommon {
  /** Derived from the signed `payment_id` (`PAY_`); the body's unsigned field, when present, agreed. */
  readonly transaction_type: 'DEPOSIT';
}

/** Unsigned fields of a withdrawal callback. */
export interface WithdrawalUnsignedFields extends UnsignedCommon {
  /** Derived from the signed `payment_id` (not `PAY_`); the body's unsigned field, when present, agreed. */
  readonly transaction_type: 'WITHDRAWAL';
  /** Beneficiary bank code, or null when the body had none. Not signed. */
  readonly bank_code: string | null;
  /** Masked account number (`****6789`), or null when the body had none. Not signed. */
  readonly account_number: string | null;
}

interface EventCommon {
  /** The signed fields: authentic once `verify()` returned. */
  readonly signed: SignedEventFields;
  /** The signature that matched (64 lowercase hex). */
  readonly signature: string;
  /**
   * Index, in the verifier's `apiKeys`, of the key whose signing key matched. Watch it
   * during a rotation: when nothing matches index 0's predecessor any more, drop it.
   */
  readonly keyIndex: number;
}

/** A verified callback for a deposit (collection). */
export interface DepositEvent extends EventCommon {
  /** Discriminant, derived from the signed `payment_id`. */
  readonly transaction_type: 'DEPOSIT';
  /** Fields the signature does not cover. */
  readonly unsigned: DepositUnsignedFields;
}

/** A verified callback for a withdrawal (payout). */
export interface WithdrawalEvent extends EventCommon {
  /** Discriminant, derived from the signed `payment_id`. */
  readonly transaction_type: 'WITHDRAWAL';
  /** Fields the signature does not cover. */
  readonly unsigned: WithdrawalUnsignedFields;
}

/**
 * A verified callback: a discriminated union on `transaction_type`.
 *
 * @example
 * ```ts
 * switch (event.transaction_type) {
 *   case 'DEPOSIT':
 *     if (event.signed.status === 'SUCCESS') await fulfilOrder(event.signed.reference_id, event.signed.amount);
 *     break;
 *   case 'WITHDRAWAL':
 *     await markPayout(event.signed.reference_id, event.signed.status, event.unsigned.bank_code);
 *     break;
 * }
 * ```
 */
export type WebhookEvent = DepositEvent | WithdrawalEvent;

const TERMINAL_STATUS_SET: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** The signed fields carry one of the spec's terminal statuses. */
export function hasTerminalStatus(fields: SignedCallbackFields): fields is SignedCallbackFields & SignedEventFields {
  return TERMINAL_STATUS_SET.has(fields.status);
}

/**
 * An unsigned, display-only field. A number is kept as its string; any other non-string is
 * null. Refusing an authentic callback over the type of a field nobody signed would lose it.
 */
function optionalString(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/**
 * The event of an authentic callback whose kind is known (from the signed `payment_id`):
 * the signed fields as they are, the unsigned ones as display data.
 */
export function toEvent(
  kind: TransactionType,
  signed: SignedEventFields,
  body: Readonly<Record<string, unknown>>,
  signature: string,
  keyIndex: number,
): WebhookEvent {
  const gateway_reference = optionalString(body.gateway_reference);
  const created_at = optionalString(body.created_at);
  if (kind === 'DEPOSIT') {
    return {
      transaction_type: 'DEPOSIT',
      signed,
      unsigned: { transaction_type: 'DEPOSIT', gateway_reference, created_at },
      signature,
      keyIndex,
    };
  }
  return {
    transaction_type: 'WITHDRAWAL',
    signed,
    unsigned: {
      transaction_type: 'WITHDRAWAL',
      gateway_reference,
      created_at,
      bank_code: optionalString(body.bank_code),
      account_number: optionalString(body.account_number),
    },
    signature,
    keyIndex,
  };
}
