/**
 * src/core/errors/base.ts: what a merchant's logger gets from an SDK error (`JSON.stringify`,
 * `util.inspect`, `console.log`) is the error's own fields and nothing from its cause, which
 * may be a request carrying the Authorization header or a store error echoing a password.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, InvalidRequestError, MyrGatewayError } from '../../../../src/core/errors/base.js';

const SECRETS = ['Bearer tok_secret_live', 'sk_live_hunter2'];

function leakyCause() {
  return Object.assign(new Error(`fetch failed: Authorization: ${SECRETS[0]}`), {
    headers: { 'x-api-key': SECRETS[1] },
  });
}

describe('MyrGatewayError', () => {
  it('toJSON holds the fields a log needs and leaves out the ones that were not set', () => {
    const error = new MyrGatewayError('RATE_LIMITED: slow down', {
      code: 'RATE_LIMITED',
      status: 429,
      retryable: true,
      retryAfter: 12,
    });
    expect(error.toJSON()).toEqual({
      name: 'MyrGatewayError',
      code: 'RATE_LIMITED',
      message: 'RATE_LIMITED: slow down',
      status: 429,
      retryable: true,
      retryAfter: 12,
    });
    const full = new InvalidRequestError('VALIDATION_ERROR: amount', {
      code: 'VALIDATION_ERROR',
      field: 'amount',
      referenceId: 'ORDER1',
      correlationId: 'corr-1',
    });
    expect(full.toJSON()).toMatchObject({
      name: 'InvalidRequestError',
      field: 'amount',
      referenceId: 'ORDER1',
      correlationId: 'corr-1',
      retryable: false,
    });
  });

  it('neither JSON.stringify nor util.inspect shows the cause, whatever it carries', () => {
    const error = new MyrGatewayError('NETWORK_ERROR: connection reset', {
      code: 'NETWORK_ERROR',
      retryable: true,
      cause: leakyCause(),
    });
    expect(error.cause).toBeDefined(); // kept for code that asks for it on purpose
    const views = [
      JSON.stringify(error),
      inspect(error),
      inspect({ wrapped: error }, { depth: 5 }),
      inspect(error, { showHidden: true }),
    ];
    for (const view of views) for (const secret of SECRETS) expect(view).not.toContain(secret);
    expect(inspect(error)).toContain('NETWORK_ERROR: connection reset');
    expect(inspect(error)).toContain('"code":"NETWORK_ERROR"');
  });

  it('ConfigurationError always carries INVALID_CONFIGURATION and the option at fault', () => {
    const error = new ConfigurationError('baseUrl must be https', 'baseUrl');
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.toJSON()).toEqual({
      name: 'ConfigurationError',
      code: 'INVALID_CONFIGURATION',
      message: 'baseUrl must be https',
      status: undefined,
      retryable: false,
      field: 'baseUrl',
    });
  });
});
