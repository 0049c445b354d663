/**
 * What a failed connection proves: how far the request got before it failed, and the
 * {@link ConnectionError} that says so. The stage decides the money rules in `retry-policy.ts`: only a
 * failure after the request may have left (`exchange`) can have moved money.
 *
 * @module
 */
import { ConnectionError } from './service.js';

/**
 * How far a request got before its connection failed:
 * - `connect`: no connection was made (refused, no route, DNS, connect timeout); nothing was sent.
 * - `handshake`: TLS refused the server (a certificate it does not trust or that names another
 *   host, or no TLS at all: `https://` to a plain-HTTP port), or the server closed the connection
 *   before the handshake ended; nothing was sent, and retrying
 *   cannot help: the scheme, host or certificate is wrong.
 * - `exchange`: the connection failed after the request may have been sent.
 */
export type ConnectionStage = 'connect' | 'handshake' | 'exchange';

/** System codes of a connection that was never made. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Codes that only a TLS handshake raises, so the request, which is written after the handshake,
 * never left: OpenSSL's certificate verification codes (every `CERT_…`, `UNABLE_TO_…` and
 * `ERROR_IN_CERT_…` code, and the six without a common prefix), Node's host check, and the
 * handshake's own failures (no TLS on the other end, no common protocol, an alert), named one by
 * one: other `ERR_SSL_` codes (a bad record MAC, say) can come after the request was written.
 */
const HANDSHAKE_REFUSED =
  /^(?:CERT_|UNABLE_TO_|ERROR_IN_CERT_)|^(?:DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH_EXCEEDED|HOSTNAME_MISMATCH|ERR_TLS_CERT_ALTNAME_INVALID|ERR_TLS_HANDSHAKE_TIMEOUT|ERR_SSL_(?:WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST|UNSUPPORTED_PROTOCOL|NO_PROTOCOLS_AVAILABLE|SSLV3_ALERT_HANDSHAKE_FAILURE|SSLV3_ALERT_BAD_CERTIFICATE|TLSV1_ALERT_PROTOCOL_VERSION|TLSV1_ALERT_UNKNOWN_CA|TLSV1_UNRECOGNIZED_NAME|TLSV13_ALERT_CERTIFICATE_REQUIRED))$/;

/**
 * Node's words for a TLS connection the other end closed before the handshake ended: a plain
 * `ECONNRESET` that, unlike one read after the request was written (`read ECONNRESET`), proves
 * nothing left.
 */
const CLOSED_IN_HANDSHAKE = /before secure TLS/;

/**
 * How far a request whose connection failed with the system error `code` (and its `message`)
 * got; no code proves nothing: `exchange`.
 */
export function connectionStage(code: string | undefined, message?: unknown): ConnectionStage {
  if (code === undefined) return 'exchange';
  if (NOT_CONNECTED.has(code)) return 'connect';
  return HANDSHAKE_REFUSED.test(code) || CLOSED_IN_HANDSHAKE.test(String(message)) ? 'handshake' : 'exchange';
}

/** Walks a cause chain for the first system error: the one with a code (ECONNREFUSED, UND_ERR_SOCKET, …). */
export function systemErrorOf(error: unknown): { code: string; message?: unknown } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const failure = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof failure.code === 'string') return { code: failure.code, message: failure.message };
    current = failure.cause;
  }
  return undefined;
}

const WHAT_HAPPENED: Record<ConnectionStage, string> = {
  connect: 'the connection to the service could not be made; nothing was sent',
  handshake:
    'the TLS handshake with the service failed, so nothing was sent; check the scheme, host and certificate of baseUrl',
  exchange: 'the connection failed after the request may have been sent',
};

/**
 * Failure of the connection itself; `cause` keeps only the system error code. `retryable` is
 * the policy's answer for the stage (src/core/call/retry-policy.ts), passed in so the rule lives there.
 */
export function connectionError(
  systemCode: string | undefined,
  stage: ConnectionStage,
  retryable: boolean,
): ConnectionError {
  return new ConnectionError(`Network error: ${WHAT_HAPPENED[stage]}${systemCode ? ` (${systemCode})` : ''}`, {
    code: 'NETWORK_ERROR',
    retryable,
    cause: systemCode === undefined ? undefined : { code: systemCode },
  });
}
