/**
 * src/webhooks/errors.ts on its own: what a merchant's catch block and logs can rely on. Every
 * webhook error is a MyrGatewayError with a code from ErrorCode, says whether a retry may help,
 * keeps the merchant's original error as `cause` for `onError`, and never lets that cause (which
 * may hold a secret) into its message, JSON or `util.inspect` view.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MyrGatewayError, type ClientErrorCode } from '../../../src/core/errors/base.js';
import {
  ClaimLostError,
  WebhookHandlerError,
  WebhookVerificationError,
  type ClaimLostOperation,
  type WebhookVerificationReason,
} from '../../../src/webhooks/errors.js';

const SECRET = 'sk_live_errors_unit_secret_0001';

describe('WebhookVerificationError', () => {
  const reasons: readonly WebhookVerificationReason[] = [
    'missing_signature',
    'invalid_signature',
    'malformed',
    'header_mismatch',
    'invalid_timestamp',
    'stale',
    'future',
  ];

  it.each(reasons)(
    'is a non-retryable MyrGatewayError with code WEBHOOK_VERIFICATION_FAILED for reason %s',
    (reason) => {
      const error = new WebhookVerificationError(reason, 'the callback was refused');
      const code: ClientErrorCode = 'WEBHOOK_VERIFICATION_FAILED';
      expect(error).toBeInstanceOf(MyrGatewayError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('WebhookVerificationError');
      expect(error.code).toBe(code);
      expect(error.reason).toBe(reason);
      expect(error.retryable).toBe(false);
      expect(error.status).toBeUndefined();
    },
  );

  it('is retryable for reason internal (the runtime could not compute the HMAC: not the sender’s fault)', () => {
    expect(new WebhookVerificationError('internal', 'no crypto').retryable).toBe(true);
  });

  it('shows its reason in JSON and in util.inspect, beside the base fields', () => {
    const error = new WebhookVerificationError('stale', 'timestamp is older than the tolerance');
    const json = JSON.parse(JSON.stringify(error)) as Record<string, unknown>;
    expect(json).toMatchObject({
      name: 'WebhookVerificationError',
      code: 'WEBHOOK_VERIFICATION_FAILED',
      message: 'timestamp is older than the tolerance',
      retryable: false,
      reason: 'stale',
    });
    expect(inspect(error)).toContain('"reason":"stale"');
  });
});

describe('WebhookHandlerError', () => {
  it.each(['handler', 'store'] as const)(
    'for stage %s is a retryable MyrGatewayError with code WEBHOOK_HANDLER_FAILED',
    (stage) => {
      const error = new WebhookHandlerError(stage, 'onEvent threw', new Error('boom'));
      const code: ClientErrorCode = 'WEBHOOK_HANDLER_FAILED';
      expect(error).toBeInstanceOf(MyrGatewayError);
      expect(error.name).toBe('WebhookHandlerError');
      expect(error.code).toBe(code);
      expect(error.stage).toBe(stage);
      expect(error.retryable).toBe(true);
      expect(error.toJSON()).toMatchObject({ stage, code });
    },
  );

  it.each([
    ['an Error', new TypeError('order 1 not found')],
    ['a string', 'plain string'],
    ['an object', { status: 500 }],
  ])('keeps the original failure (%s) as cause, unchanged', (_name, cause) => {
    expect(new WebhookHandlerError('handler', 'onEvent threw', cause).cause).toBe(cause);
  });

  it('leaves cause unset when there was none', () => {
    expect('cause' in new WebhookHandlerError('store', 'the store failed', undefined)).toBe(false);
  });

  it("never shows the cause's text (it may hold a secret) in its message, JSON or util.inspect", () => {
    const error = new WebhookHandlerError('handler', 'onEvent threw', new Error(`db auth failed with ${SECRET}`));
    expect(error.message).not.toContain(SECRET);
    expect(JSON.stringify(error)).not.toContain(SECRET);
    expect(inspect(error)).not.toContain(SECRET);
    expect(inspect(error, { depth: 10 })).not.toContain(SECRET);
  });
});

describe('ClaimLostError', () => {
  it.each(['complete', 'release', 'renew'] as const satisfies readonly ClaimLostOperation[])(
    'at %s is a WebhookHandlerError of the store stage, code CLAIM_LOST, not retryable',
    (operation) => {
      const error = new ClaimLostError(operation, 'payment:PAY_1:SUCCESS');
      const code: ClientErrorCode = 'CLAIM_LOST';
      expect(error).toBeInstanceOf(WebhookHandlerError);
      expect(error).toBeInstanceOf(MyrGatewayError);
      expect(error.name).toBe('ClaimLostError');
      expect(error.code).toBe(code);
      expect(error.stage).toBe('store');
      expect(error.retryable).toBe(false);
      expect(error.operation).toBe(operation);
      expect(error.key).toBe('payment:PAY_1:SUCCESS');
      expect(error.message).toContain(operation);
      expect(error.message).toContain('may have run twice');
    },
  );

  it('shows operation, key and stage in JSON for the alert a merchant raises', () => {
    const json = JSON.parse(JSON.stringify(new ClaimLostError('renew', 'webhook:6f1c2a9e'))) as Record<string, unknown>;
    expect(json).toMatchObject({
      name: 'ClaimLostError',
      code: 'CLAIM_LOST',
      stage: 'store',
      operation: 'renew',
      key: 'webhook:6f1c2a9e',
      retryable: false,
    });
  });

  it('carries no cause (nothing was thrown: the store answered that the claim was gone)', () => {
    expect(new ClaimLostError('complete', 'payment:PAY_1:SUCCESS').cause).toBeUndefined();
  });
});

describe('one catch for everything', () => {
  it('lets `instanceof MyrGatewayError` catch each webhook error, and tells them apart by name and code', () => {
    const thrown = [
      new WebhookVerificationError('malformed', 'the body is not a JSON object'),
      new WebhookHandlerError('handler', 'onEvent threw', new Error('x')),
      new ClaimLostError('release', 'payment:PAY_1:FAILED'),
    ];
    const caught = thrown.map((error) => {
      try {
        throw error;
      } catch (e) {
        return e instanceof MyrGatewayError ? `${e.name}:${e.code}` : 'missed';
      }
    });
    expect(caught).toEqual([
      'WebhookVerificationError:WEBHOOK_VERIFICATION_FAILED',
      'WebhookHandlerError:WEBHOOK_HANDLER_FAILED',
      'ClaimLostError:CLAIM_LOST',
    ]);
  });
});
