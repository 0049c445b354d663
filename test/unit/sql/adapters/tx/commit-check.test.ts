import { describe, expect, it } from 'vitest';
import { CommitCheck } from '../../../../../src/sql/adapters/tx/commit-check.js';

/** A driver's `query` whose answers the test settles by hand, in order. */
function driver() {
  const settles: ((error?: Error) => void)[] = [];
  const self = {
    query: (text: unknown): Promise<unknown> =>
      new Promise((resolve, reject) => settles.push((error) => (error ? reject(error) : resolve(text)))),
    stream: (): object => ({ on: () => undefined }),
  };
  return { self, settle: (error?: Error) => settles.shift()?.(error) };
}

describe("CommitCheck: whether COMMIT must check that the transaction is still the ledger's", () => {
  it('not after plain statements that were answered, whether they succeeded or (when the driver says a failure ends nothing) failed', async () => {
    const { self, settle } = driver();
    const check = new CommitCheck(() => false);
    const answered = check.send(self.query, self, ['UPDATE orders SET paid = 1 WHERE id = ?', [1]], false);
    expect(check.needed()).toBe(true); // still running: it would run before COMMIT
    settle();
    await expect(answered).resolves.toBe('UPDATE orders SET paid = 1 WHERE id = ?');
    const failed = check.send(self.query, self, ['SELECT * FROM no_such_table'], false);
    settle(new Error('no such table'));
    await expect(failed).rejects.toThrow('no such table');
    expect(check.needed()).toBe(false);
  });

  it('after a failure the driver says may end the transaction, which it sees', async () => {
    const { self, settle } = driver();
    const seen: unknown[] = [];
    const check = new CommitCheck((error) => (seen.push(error), true));
    const failure = new Error('deadlock');
    const failed = check.send(self.query, self, ['UPDATE stock SET n = n - 1'], false);
    settle(failure);
    await expect(failed).rejects.toBe(failure);
    expect(seen).toEqual([failure]);
    expect(check.needed()).toBe(true);
  });

  it.each([
    ['a statement that is not plain', ['ROLLBACK'], false],
    ['a plain text whose values may carry another statement', ['SELECT ?', ['raw']], true],
  ])('after %s, answered', async (_, args, mayCarryMore) => {
    const { self, settle } = driver();
    const check = new CommitCheck(() => false);
    const sent = check.send(self.query, self, args, mayCarryMore);
    settle();
    await sent;
    expect(check.needed()).toBe(true);
  });

  it('after a statement that answered no promise (a stream, a callback), and after what the adapter touched', () => {
    const { self } = driver();
    const streamed = new CommitCheck(() => false);
    expect(streamed.send(self.stream, self, ['SELECT 1'], false)).toEqual({ on: expect.any(Function) });
    expect(streamed.needed()).toBe(true);
    const touched = new CommitCheck(() => false);
    touched.touch();
    expect(touched.needed()).toBe(true);
  });

  it('sends nothing for a member that is not a function', () => {
    const check = new CommitCheck(() => false);
    expect(check.send(undefined, {}, ['UPDATE orders SET paid = 1'], false)).toBeUndefined();
    expect(check.needed()).toBe(false);
  });
});
