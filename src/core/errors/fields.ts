/**
 * The request field each code of the spec's error table is about, so that an error the
 * service sent names the field to fix as a client-side refusal does. Codes about no single
 * field (`VALIDATION_ERROR`: "one or more fields"; credentials; rate limits) have none.
 *
 * @module
 */

/** Code → field, from the spec's error table. */
const FIELD_OF_CODE: Readonly<Record<string, string>> = {
  INVALID_AMOUNT: 'amount',
  DUPLICATE_REFERENCE: 'reference_id',
  MISSING_PROVIDER_CHANNEL: 'metadata.provider_channel_id',
  INVALID_PROVIDER_CHANNEL: 'metadata.provider_channel_id',
  INVALID_BANK_CODE: 'bank_code',
};

/** @internal The field a service error code is about, or undefined when it names none. */
export function fieldOfCode(code: string): string | undefined {
  return Object.hasOwn(FIELD_OF_CODE, code) ? FIELD_OF_CODE[code] : undefined;
}
