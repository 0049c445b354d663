import { describe, expect, it } from 'vitest';
import {
  BeginInOneRoundTrip,
  takesPipeline,
  type PgConnectionLike,
} from '../../../../../src/sql/adapters/pg/begin-in-one-round-trip.js';
import { BOUND_AND_MARKED, preparedStatementGone } from '../../../../../src/sql/dialects/postgres/session.js';

const CLAIM = { text: 'INSERT INTO ledger (k, n) VALUES ($1, $2)', values: ['k:PAY_1', 42] } as const;
const nameOf = (text: string) => `n_${text.length}`;

/** The claim's opening, submitted on `target`; `prepare: false` parses every statement at each use (no names). */
function submittedOn(target: PgConnectionLike, prepare = true): BeginInOneRoundTrip {
  const opening = new BeginInOneRoundTrip(5000, CLAIM, prepare ? nameOf : undefined, () => (text) => text);
  opening.submit(target);
  return opening;
}

/** A node-postgres connection that records the protocol messages written to it, and whether they left corked. */
function connection() {
  const written: string[] = [];
  let corked = 0;
  const record = (message: string) => written.push(corked > 0 ? message : `${message} (uncorked)`);
  const target: PgConnectionLike = {
    parse: ({ name, text }) => record(`Parse ${name || '(unnamed)'} ${text}`),
    bind: ({ statement, values }) => record(`Bind ${statement || '(unnamed)'} ${JSON.stringify(values)}`),
    describe: ({ type }) => record(`Describe ${type}`),
    execute: () => record('Execute'),
    close: ({ name }) => record(`Close ${name}`),
    sync: () => record('Sync'),
    stream: { cork: () => void (corked += 1), uncork: () => void (corked -= 1) },
  };
  return { target, written };
}

/** What the server answers a pipeline that succeeded: BEGIN, the bounds' one row, then the claim's tag. */
function answerAll(opening: BeginInOneRoundTrip, tag = 'INSERT 0 1') {
  opening.handleCommandComplete({ text: 'BEGIN' });
  opening.handleDataRow({ fields: ['5000', 'on'] });
  opening.handleCommandComplete({ text: 'SELECT 1' });
  opening.handleCommandComplete({ text: tag });
  opening.handleReadyForQuery();
}

describe('BeginInOneRoundTrip: BEGIN, the bounds and the first statement under one Sync', () => {
  it('writes BEGIN, the bounds and the statement, each bound and executed, the statement described, one Sync, all corked', () => {
    const { target, written } = connection();
    submittedOn(target);
    const bounds = nameOf(BOUND_AND_MARKED);
    const claim = nameOf(CLAIM.text);
    expect(written).toEqual([
      'Parse (unnamed) BEGIN',
      'Bind (unnamed) []',
      'Execute',
      `Close ${bounds}`,
      `Parse ${bounds} ${BOUND_AND_MARKED}`,
      `Bind ${bounds} ["5000"]`,
      'Execute',
      `Close ${claim}`,
      `Parse ${claim} ${CLAIM.text}`,
      `Bind ${claim} ["k:PAY_1","42"]`,
      'Describe P',
      'Execute',
      'Sync',
    ]);
  });

  it('parses its named statements once per connection, after a pipeline that succeeded; every time without names (prepare: false)', async () => {
    const { target, written } = connection();
    const first = submittedOn(target);
    answerAll(first);
    await first.answer;
    written.length = 0;
    submittedOn(target);
    expect(written.filter((message) => message.startsWith('Parse') || message.startsWith('Close'))).toEqual([
      'Parse (unnamed) BEGIN',
    ]);

    const unnamed = connection();
    for (let i = 0; i < 2; i++) submittedOn(unnamed.target, false);
    expect(unnamed.written.filter((message) => message.startsWith('Parse')).length).toBe(6);
    expect(unnamed.written.some((message) => message.startsWith('Close'))).toBe(false);
  });

  it('after a pipeline that failed, closes and parses its statements again (their Parse may or may not have happened)', async () => {
    const { target, written } = connection();
    const failed = submittedOn(target);
    failed.handleError(Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }));
    await expect(failed.answer).rejects.toMatchObject({ code: '55P03' });
    written.length = 0;
    submittedOn(target);
    expect(written.filter((message) => message.startsWith('Close')).length).toBe(2);
  });

  it("forgets the connection's statements when the server says one is gone (DEALLOCATE ALL ran: 26000)", async () => {
    const { target, written } = connection();
    const first = submittedOn(target);
    answerAll(first);
    await first.answer;
    const gone = Object.assign(new Error('prepared statement does not exist'), { code: '26000' });
    expect(preparedStatementGone(gone)).toBe(true);
    const second = submittedOn(target);
    second.handleError(gone);
    await expect(second.answer).rejects.toBe(gone);
    written.length = 0;
    submittedOn(target);
    expect(written.filter((message) => message.startsWith('Parse')).length).toBe(3);
  });

  it("answers the statement's rows (parsed by the client's parsers) and the count of its tag; the bounds' row is not among them", async () => {
    const { target } = connection();
    const opening = new BeginInOneRoundTrip(5000, CLAIM, nameOf, (oid) =>
      oid === 23 ? (text) => Number(text) : (text) => text,
    );
    opening.submit(target);
    opening.handleCommandComplete({ text: 'BEGIN' });
    opening.handleDataRow({ fields: ['5000', 'on'] });
    opening.handleCommandComplete({ text: 'SELECT 1' });
    opening.handleRowDescription({
      fields: [
        { name: 'mark_rank', dataTypeID: 23 },
        { name: 'note', dataTypeID: 25 },
      ],
    });
    opening.handleDataRow({ fields: ['3', null] });
    opening.handleCommandComplete({ text: 'INSERT 0 1' });
    opening.handleReadyForQuery();
    expect(await opening.answer).toEqual({ rows: [{ mark_rank: 3, note: null }], affected: 1 });
  });

  it("calls node-postgres's callback once with the outcome (its query_timeout timer is cleared only there)", async () => {
    const outcomes: unknown[] = [];
    const done = new BeginInOneRoundTrip(5000, CLAIM, nameOf, () => (text) => text);
    done.callback = (error) => outcomes.push(error);
    done.submit(connection().target);
    answerAll(done);
    done.handleError(new Error('Query read timeout'));
    await done.answer;
    const failed = new BeginInOneRoundTrip(5000, CLAIM, nameOf, () => (text) => text);
    const timeout = new Error('Query read timeout');
    failed.callback = (error) => outcomes.push(error);
    failed.submit(connection().target);
    failed.handleError(timeout);
    answerAll(failed);
    await expect(failed.answer).rejects.toBe(timeout);
    expect(outcomes).toEqual([null, timeout]);
  });

  it('refuses a parameter it cannot write before anything is written', () => {
    expect(
      () => new BeginInOneRoundTrip(5000, { text: CLAIM.text, values: [{ a: 1 }] }, nameOf, () => (text) => text),
    ).toThrow(TypeError);
  });
});

describe('takesPipeline', () => {
  it("takes node-postgres's JavaScript client, not one in its pipeline mode, nor one whose connection writes no messages (pg.native)", () => {
    const { target } = connection();
    expect(takesPipeline({ connection: target })).toBe(true);
    expect(takesPipeline({ connection: target, pipeline: true })).toBe(false);
    expect(takesPipeline({ native: {} })).toBe(false);
    expect(takesPipeline({ connection: { parse: () => undefined } })).toBe(false);
  });
});
