import { describe, expect, it } from 'vitest';
import { settle } from '../../../src/sql/sql-client.js';

describe('settle', () => {
  it('resolves whether the promise resolved or rejected', async () => {
    await expect(settle(Promise.reject(new Error('x')))).resolves.toBeUndefined();
    await expect(settle(Promise.resolve(1))).resolves.toBeUndefined();
  });
});
