import { describe, expect, it } from 'vitest';
import {
  ALONE_FOR_MS,
  SHARED_COMMIT_MAX_RUNS,
  SHARED_COMMIT_OPEN_MS,
  isSlowRun,
  SharedCommit,
  SLOW_RUN_MS,
  sharedCommitFailed,
  sharesCommit,
} from '../../../../../src/sql/adapters/sqlite/shared-commit.js';
import { isConflict, sharedCommitLost } from '../../../../../src/sql/database-errors.js';

const open = { waiting: 3, runs: 1, openForMs: 0.5, sincePauseMs: Number.POSITIVE_INFINITY };

describe('isSlowRun: whether a run cost the runs before it their time', () => {
  it.each([
    [
      'runs wait on its COMMIT, held the connection past SLOW_RUN_MS',
      { heldMs: SLOW_RUN_MS + 1, waitingOnIt: 3 },
      true,
    ],
    ['one run waits, held it past SLOW_RUN_MS', { heldMs: SLOW_RUN_MS + 1, waitingOnIt: 1 }, true],
    ['runs wait, held it exactly SLOW_RUN_MS', { heldMs: SLOW_RUN_MS, waitingOnIt: 3 }, false],
    ['runs wait, quick', { heldMs: 0.2, waitingOnIt: 3 }, false],
    ['the first of its transaction (nobody waits), held it a second', { heldMs: 1000, waitingOnIt: 0 }, false],
  ])('%s', (_case, hold, expected) => {
    expect(isSlowRun(hold)).toBe(expected);
  });
});

describe('sharesCommit: whether the transaction stays open for the next run', () => {
  it.each([
    ['a run waits, one run in, just begun', open, true],
    ['nobody waits: COMMIT now', { ...open, waiting: 0 }, false],
    ['one short of the most runs', { ...open, runs: SHARED_COMMIT_MAX_RUNS - 1 }, true],
    ['the most runs: COMMIT now', { ...open, runs: SHARED_COMMIT_MAX_RUNS }, false],
    ['open just under its time', { ...open, openForMs: SHARED_COMMIT_OPEN_MS - 0.01 }, true],
    ['open its whole time: COMMIT now', { ...open, openForMs: SHARED_COMMIT_OPEN_MS }, false],
    ['a shared COMMIT failed just now: runs commit alone', { ...open, sincePauseMs: 0 }, false],
    ['one failed a moment less than the quarantine ago', { ...open, sincePauseMs: ALONE_FOR_MS - 1 }, false],
    ['one failed the quarantine ago', { ...open, sincePauseMs: ALONE_FOR_MS }, true],
  ])('%s', (_case, state, expected) => {
    expect(sharesCommit(state)).toBe(expected);
  });
});

describe('SharedCommit', () => {
  it('the runs waiting on a COMMIT are told together when it lands', async () => {
    const shared = new SharedCommit();
    shared.began(0);
    const waiting = [shared.await(), shared.await()];
    expect(shared.pending).toBe(2);
    shared.landed();
    await expect(Promise.all(waiting)).resolves.toEqual([undefined, undefined]);
    expect(shared.open).toBe(false);
    expect(shared.pending).toBe(0);
  });

  it('when it fails, each waiting run is told with an error the ledger reads as "go again", never as the cause it wraps', async () => {
    const shared = new SharedCommit();
    shared.began(0);
    const waiting = shared.await();
    const foreignKey = Object.assign(new Error('FOREIGN KEY constraint failed'), { errcode: 787 });
    shared.failed(foreignKey, 100);
    const error: unknown = await waiting.catch((e: unknown) => e);
    expect(sharedCommitLost(error)).toBe(true);
    expect(isConflict(error)).toBe(true);
    expect(error).toMatchObject({ cause: foreignKey });
    expect(sharedCommitLost(foreignKey)).toBe(false);
    expect(sharedCommitLost(new Error('x', { cause: sharedCommitFailed(foreignKey) }))).toBe(false);
    // Runs waited on it: the next runs commit alone.
    shared.began(200);
    expect(shared.staysOpen(5, 200.5)).toBe(false);
    expect(shared.staysOpen(5, 100 + ALONE_FOR_MS)).toBe(false); // open past its time by then
    shared.began(100 + ALONE_FOR_MS);
    expect(shared.staysOpen(5, 100 + ALONE_FOR_MS)).toBe(true);
  });

  it('a run that failed alone (no run waited on its COMMIT) does not stop the others sharing: the failure was its own', () => {
    const shared = new SharedCommit();
    shared.began(0);
    shared.failed(new Error('disk I/O error'), 1);
    shared.began(2);
    expect(shared.staysOpen(5, 2)).toBe(true);
  });

  it('a slow run (runs before it waited, and it held the connection past SLOW_RUN_MS) makes runs commit alone for a while; a quick one, or a long one nobody waited on, does not', () => {
    const shared = new SharedCommit();
    shared.began(0);
    shared.ran(100 * SLOW_RUN_MS, 40); // the first of its transaction: nobody waits on it
    void shared.await(); // it committed into the transaction; the next run joins
    shared.ran(SLOW_RUN_MS, 50);
    shared.landed();
    shared.began(60);
    expect(shared.staysOpen(5, 60)).toBe(true);
    void shared.await();
    shared.ran(SLOW_RUN_MS + 1, 100);
    shared.landed();
    shared.began(101);
    expect(shared.staysOpen(5, 101)).toBe(false);
    shared.began(100 + ALONE_FOR_MS);
    expect(shared.staysOpen(5, 100 + ALONE_FOR_MS)).toBe(true);
  });
});
