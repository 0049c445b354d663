/**
 * The public entries list what they export, name by name (the exact lists: exports.test.ts): a
 * new module's internals cannot leak into the API through an `export *`, and the helpers kept for the SDK's own use
 * (timestamp parsing, the idempotency key builder, test seams) are not importable by merchants.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import * as webhooks from '../../src/webhooks/index.js';

const src = new URL('../../src/', import.meta.url).pathname;
const entries = readdirSync(src, { withFileTypes: true, recursive: true })
  .filter((entry) => entry.isFile() && entry.name === 'index.ts')
  .map((entry) => join(entry.parentPath, entry.name).slice(src.length));

describe('public entries', () => {
  it.each(entries)('src/%s exports named symbols only', (file) => {
    expect(readFileSync(join(src, file), 'utf8')).not.toMatch(/export\s+(type\s+)?\*/);
  });

  it('finds the entries of every subpath', () => {
    expect(entries).toEqual(
      expect.arrayContaining(['index.ts', 'webhooks/index.ts', 'redis/index.ts', 'testing/index.ts']),
    );
  });

  // Each internal is named with the module that defines it: the absence is only worth asserting
  // for a name that exists, so a rename inside src/webhooks fails here instead of leaving a
  // check that passes for ever.
  it.each([
    ['parseTimestamp', 'timestamp-parse.js'],
    ['idempotencyKey', 'handler.js'],
    ['toWebhookHandler', 'handler.js'],
    ['nodeCrypto', 'signing-scheme.js'],
    ['buildSignedString', 'signing-scheme.js'],
    ['readSignedParts', 'request-parts.js'],
    ['hasTerminalStatus', 'events.js'],
  ])('myr-gateway/webhooks does not export the internal %s (src/webhooks/%s)', async (name, module) => {
    const internals = (await import(`../../src/webhooks/${module}`)) as Record<string, unknown>;
    expect(Object.keys(internals)).toContain(name);
    expect(Object.keys(webhooks)).not.toContain(name);
  });

  it('every error class myr-gateway/webhooks exports is a MyrGatewayError', () => {
    const errors = Object.entries(webhooks).filter(([name]) => name.endsWith('Error'));
    expect(errors.length).toBeGreaterThan(0);
    for (const [, value] of errors)
      expect((value as { prototype: unknown }).prototype).toBeInstanceOf(root.MyrGatewayError);
  });

  it('myr-gateway exports every class of the error tree, each a MyrGatewayError', () => {
    const errors = Object.entries(root).filter(([name]) => name.endsWith('Error'));
    expect(errors.map(([name]) => name).sort()).toEqual(
      [
        'AbortError',
        'ApiError',
        'AuthenticationError',
        'ConfigurationError',
        'ConnectionError',
        'DuplicateReferenceError',
        'InvalidRequestError',
        'InvalidResponseError',
        'MyrGatewayError',
        'NotFoundError',
        'OutcomeUnknownError',
        'PaymentPendingError',
        'PaymentUrlUnavailableError',
        'PermissionDeniedError',
        'RateLimitError',
        'ServiceUnavailableError',
        'TimeoutError',
      ].sort(),
    );
    for (const [, value] of errors) expect((value as { prototype: unknown }).prototype).toBeInstanceOf(Error);
    for (const [name, value] of errors) {
      if (name !== 'MyrGatewayError')
        expect((value as { prototype: unknown }).prototype).toBeInstanceOf(root.MyrGatewayError);
    }
  });
});
