/**
 * src/core/errors/connection.ts on its own: how far a request got when its connection failed
 * (the system codes that prove it never left, the TLS ones that also prove the address or the
 * certificate is wrong), the error that says so, and the system code found in a cause chain.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionError } from '../../../../src/core/errors/service.js';
import { connectionError, connectionStage, systemErrorOf } from '../../../../src/core/errors/connection.js';

describe('connectionStage', () => {
  it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'])(
    '%s: no connection was made, nothing was sent',
    (code) => {
      expect(connectionStage(code)).toBe('connect');
    },
  );

  // OpenSSL's certificate verification codes and the handshake's own failures; the CRL checks
  // are verification codes too.
  it.each([
    'CERT_HAS_EXPIRED',
    'CERT_NOT_YET_VALID',
    'CERT_REVOKED',
    'CERT_UNTRUSTED',
    'CERT_REJECTED',
    'CERT_SIGNATURE_FAILURE',
    'CERT_CHAIN_TOO_LONG',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
    'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
    'ERROR_IN_CERT_NOT_BEFORE_FIELD',
    'ERROR_IN_CERT_NOT_AFTER_FIELD',
    'INVALID_CA',
    'INVALID_PURPOSE',
    'PATH_LENGTH_EXCEEDED',
    'HOSTNAME_MISMATCH',
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'ERR_TLS_HANDSHAKE_TIMEOUT',
    'ERR_SSL_WRONG_VERSION_NUMBER',
    'ERR_SSL_PACKET_LENGTH_TOO_LONG',
    'ERR_SSL_HTTP_REQUEST',
    'ERR_SSL_UNSUPPORTED_PROTOCOL',
    'ERR_SSL_NO_PROTOCOLS_AVAILABLE',
    'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
    'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
    'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
    'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
    'ERR_SSL_TLSV1_UNRECOGNIZED_NAME',
    'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    'UNABLE_TO_GET_CRL',
    'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  ])('%s: TLS refused the server during the handshake, nothing was sent', (code) => {
    expect(connectionStage(code)).toBe('handshake');
  });

  // After these the request may have reached the service: retrying blindly could move money twice.
  // TLS failures of a secured connection are among them: the request may already have been written.
  it.each([
    'ECONNRESET',
    'EPIPE',
    'ETIMEDOUT',
    'UND_ERR_SOCKET',
    'UND_ERR_HEADERS_TIMEOUT',
    'EPROTO',
    'econnrefused',
    'cert_has_expired',
    'ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC',
    'ERR_SSL_SSLV3_ALERT_BAD_RECORD_MAC',
    'ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR',
    'ERR_SSL_WRONG_VERSION_NUMBER_',
    'X_CERT_HAS_EXPIRED',
    undefined,
  ])('%s proves nothing', (code) => {
    expect(connectionStage(code)).toBe('exchange');
  });
});

describe('connectionError', () => {
  it('says whether anything was sent and keeps only the system code as cause', () => {
    const notSent = connectionError('ECONNREFUSED', 'connect', true);
    expect(notSent).toBeInstanceOf(ConnectionError);
    expect(notSent).toMatchObject({ code: 'NETWORK_ERROR', retryable: true, cause: { code: 'ECONNREFUSED' } });
    expect(notSent.message).toMatch(/nothing was sent \(ECONNREFUSED\)$/);
    const maybe = connectionError(undefined, 'exchange', true);
    expect(maybe.message).toMatch(/may have been sent$/);
    expect(maybe.cause).toBeUndefined();
  });

  it('says what to check after a refused TLS handshake', () => {
    const tls = connectionError('ERR_SSL_WRONG_VERSION_NUMBER', 'handshake', false);
    expect(tls).toMatchObject({ code: 'NETWORK_ERROR', retryable: false });
    expect(tls.message).toMatch(
      /nothing was sent; check the scheme, host and certificate of baseUrl \(ERR_SSL_WRONG_VERSION_NUMBER\)$/,
    );
  });
});

describe('a connection closed during the TLS handshake', () => {
  it("is the handshake by Node's words for it; any other ECONNRESET may have followed the request", () => {
    expect(
      connectionStage('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established'),
    ).toBe('handshake');
    expect(connectionStage('ECONNRESET', 'read ECONNRESET')).toBe('exchange');
    expect(connectionStage('ECONNRESET')).toBe('exchange');
  });
});

describe('systemErrorOf', () => {
  it("finds the first string code down a cause chain, with that error's message", () => {
    const inner = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    expect(systemErrorOf(new TypeError('fetch failed', { cause: inner }))).toEqual({
      code: 'ECONNREFUSED',
      message: 'connect',
    });
    expect(systemErrorOf(new Error('a', { cause: new Error('b', { cause: { code: 'UND_ERR_SOCKET' } }) }))?.code).toBe(
      'UND_ERR_SOCKET',
    );
  });

  it('ignores numeric codes and gives up on a chain deeper than six, or a cycle', () => {
    expect(systemErrorOf({ code: 5, cause: { code: 'EPIPE' } })?.code).toBe('EPIPE');
    let deep: Record<string, unknown> = { code: 'TOO_DEEP' };
    for (let i = 0; i < 6; i++) deep = { cause: deep };
    expect(systemErrorOf(deep)).toBeUndefined();
    const cycle: Record<string, unknown> = {};
    cycle.cause = cycle;
    expect(systemErrorOf(cycle)).toBeUndefined();
    expect(systemErrorOf('ECONNREFUSED')).toBeUndefined();
  });
});
