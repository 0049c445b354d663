/**
 * Reading the answer of `POST /auth/token` (naming variants: docs/assumptions.md A1).
 *
 * @module
 */
import type { StoredToken } from './store.js';
import { InvalidResponseError } from '../errors/service.js';
import { isStoredToken } from './store.js';

/** The spec's token lifetime, assumed when the answer gives none or one this clock cannot use. */
export const DEFAULT_TOKEN_LIFETIME_MS = 3_600_000;
/** The longest lifetime believed; a longer one (clock skew, milliseconds sent as seconds) is capped. */
export const MAX_TOKEN_LIFETIME_MS = 24 * 3_600_000;

function invalid(message: string): InvalidResponseError {
  return new InvalidResponseError(`INVALID_RESPONSE: ${message}`, { code: 'INVALID_RESPONSE', field: 'access_token' });
}

/** Lifetime in ms from the answer's fields, or undefined when absent or unusable on this clock. */
function lifetimeOf(data: Record<string, unknown>, now: number): number | undefined {
  const expiresIn = Number(data.expires_in ?? data.expiresIn);
  if (Number.isFinite(expiresIn) && expiresIn > 0) return expiresIn * 1000;
  const expiresAt = data.expires_at ?? data.expiresAt;
  let at: number | undefined;
  // Unix seconds, or milliseconds when the number is too large to be seconds.
  if (typeof expiresAt === 'number' && expiresAt > 0) at = expiresAt > 1e11 ? expiresAt : expiresAt * 1000;
  else if (typeof expiresAt === 'string' && !Number.isNaN(Date.parse(expiresAt))) at = Date.parse(expiresAt);
  // An expiry already past on this clock means the clocks disagree, not that the fresh token is dead.
  return at !== undefined && at > now ? at - now : undefined;
}

/**
 * The token of an answer, with its expiry on this process's clock. A lifetime that is
 * missing, zero, negative or in the past (clock skew) counts as the spec's one hour; one
 * longer than a day is capped; the service's TOKEN_EXPIRED stays the final word either way.
 */
export function readToken(body: unknown, now: number): StoredToken {
  const outer: Record<string, unknown> = isRecord(body) ? body : {};
  const data = isRecord(outer.data) ? outer.data : outer;
  const accessToken = data.access_token ?? data.accessToken ?? data.token;
  if (typeof accessToken !== 'string' || accessToken === '') throw invalid('the token answer carries no access token');
  const lifetime = Math.min(lifetimeOf(data, now) ?? DEFAULT_TOKEN_LIFETIME_MS, MAX_TOKEN_LIFETIME_MS);
  const token: StoredToken = { accessToken, expiresAt: now + lifetime, issuedAt: now };
  // Control characters or spaces would break the Authorization header of every later request.
  if (!isStoredToken(token))
    throw invalid('the access token is not a printable ASCII string of at most 8192 characters');
  return token;
}

/** A JSON object: its fields are read as unknown and checked one by one. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
