/**
 * Secrets taken out of text the service sent back before it reaches an error message: the api
 * key of the client, and the access token of the attempt (which may come from a shared store
 * this instance never fetched into).
 *
 * @module
 */

/** Returns `text` with the secrets it knows replaced by `[redacted]`. */
export type Redact = (text: string) => string;

const REDACTED = '[redacted]';

/** A {@link Redact} for one secret (the client's api key). */
export function redactSecret(secret: string): Redact {
  return (text) => text.split(secret).join(REDACTED);
}

/** `redact`, and `secret` too when there is one (the access token an attempt was sent with). */
export function alsoRedact(redact: Redact, secret: string | undefined): Redact {
  return secret === undefined ? redact : (text) => redact(text).split(secret).join(REDACTED);
}
