/**
 * Bank codes accepted as `metadata.provider_channel_id` for `BANK_TRANSFER` deposits,
 * exactly as the spec lists them. A bank may appear in both groups; either code works.
 */

/** Group A: online-banking network A. */
export const PROVIDER_CHANNELS_GROUP_A = [
  'ABB0233',
  'ABMB0212',
  'AGRO01',
  'AMBB0209',
  'BCBB0235',
  'BIMB0340',
  'BKRM0602',
  'BMMB0341',
  'BSN0601',
  'HLB0224',
  'HSBC0223',
  'KFH0346',
  'MB2U0227',
  'OCBC0229',
  'PBB0233',
  'RHB0218',
  'SCB0216',
  'UOB0226',
] as const;

/** Group B: interbank network B. */
export const PROVIDER_CHANNELS_GROUP_B = [
  'AFBQMYKL',
  'AGOBMYKL',
  'ARBKMYKL',
  'BIMBMYKL',
  'BKCHMYKL',
  'BKRMMYKL',
  'BMMBMYKL',
  'BOBEMYK2',
  'BSNAMYK1',
  'CIBBMYKL',
  'FNXSMYNB',
  'HBMBMYKL',
  'MBLOMYNB',
  'MFBBMYKL',
  'OCBCMYKL',
  'PBBEMYKL',
  'PHBMMYKL',
  'RJHIMYKL',
  'UOVBMYKL',
] as const;

/** A bank code from either group. */
export type ProviderChannelId = (typeof PROVIDER_CHANNELS_GROUP_A)[number] | (typeof PROVIDER_CHANNELS_GROUP_B)[number];

/** @internal Both groups in one list: what `provider_channel_id` may be. */
export const PROVIDER_CHANNELS: readonly ProviderChannelId[] = [
  ...PROVIDER_CHANNELS_GROUP_A,
  ...PROVIDER_CHANNELS_GROUP_B,
];
// Pure: the client checks a code with its schema and never asks isProviderChannelId.
const ALL: ReadonlySet<string> = /* @__PURE__ */ new Set<string>(PROVIDER_CHANNELS);

/**
 * Whether `code` is a valid `provider_channel_id`.
 *
 * @example
 * ```ts
 * isProviderChannelId('MB2U0227'); // true
 * ```
 */
export function isProviderChannelId(code: unknown): code is ProviderChannelId {
  return typeof code === 'string' && ALL.has(code);
}

/**
 * E-wallet codes a withdrawal's `bank_code` may name, beside the banks of both lists above
 * (assumption A5: the spec says 31 banks and e-wallets exist but does not list them). A payout
 * form offers these next to the banks.
 *
 * @example
 * ```ts
 * const options = [...PROVIDER_CHANNELS_GROUP_A, ...WITHDRAWAL_EWALLET_CODES];
 * ```
 */
export const WITHDRAWAL_EWALLET_CODES = ['TNGDMYNB', 'GRABMYNB', 'BOOSTMYNB', 'SHOPEEMYNB'] as const;
