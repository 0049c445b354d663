/**
 * src/core/observe/trace.ts runTraced: a merchant's tracer can never change what a money call
 * returns or throws. A tracer that throws before running the work leaves it to run untraced
 * (once); one that throws after, or whose span methods throw, is reported and ignored.
 */
import { describe, expect, it } from 'vitest';
import {
  isTracer,
  runTraced,
  setAttributes,
  type SpanLike,
  type TracerLike,
} from '../../../../src/core/observe/trace.js';
import { recordingSpan, recordingTracer } from '../../../helpers/recording-tracer.js';

function tracerOf(startActiveSpan: (fn: (span: SpanLike) => unknown) => unknown): TracerLike {
  return { startActiveSpan: (_name, _options, fn) => startActiveSpan(fn) as never };
}

describe('runTraced', () => {
  it('runs the work inside the span and returns its result, with the span handed to the work', async () => {
    const { tracer, spans, calls } = recordingTracer();
    const result = await runTraced(
      tracer,
      'myr-gateway payments.create',
      {},
      async (s) => {
        s?.setAttribute('myr_gateway.reference_id', 'ORDER1');
        s?.end();
        return 'payment';
      },
      () => undefined,
    );
    expect(result).toBe('payment');
    expect(spans.map((s) => s.name)).toEqual(['myr-gateway payments.create']);
    expect(calls).toEqual(['attr myr_gateway.reference_id=ORDER1', 'end']);
  });

  it('a tracer that throws before running the work: the work runs once, untraced, and the error is reported', async () => {
    const reported: unknown[] = [];
    let runs = 0;
    const broken = new Error('exporter misconfigured');
    const result = await runTraced(
      tracerOf(() => {
        throw broken;
      }),
      'op',
      {},
      async (span) => {
        runs += 1;
        expect(span).toBeUndefined();
        return 42;
      },
      (e) => reported.push(e),
    );
    expect(result).toBe(42);
    expect(runs).toBe(1);
    expect(reported).toEqual([broken]);
  });

  it('a tracer that throws after starting the work does not run it twice, and its result stands', async () => {
    const reported: unknown[] = [];
    let runs = 0;
    const { span } = recordingSpan();
    const tracer = tracerOf((fn) => {
      fn(span);
      throw new Error('context manager broke');
    });
    const result = await runTraced(
      tracer,
      'op',
      {},
      async () => {
        runs += 1;
        return 'withdrawal';
      },
      (e) => reported.push(e),
    );
    expect(result).toBe('withdrawal');
    expect(runs).toBe(1);
    expect(reported).toHaveLength(1);
  });

  it("the work's own error passes through unchanged", async () => {
    const { span } = recordingSpan();
    const failure = new Error('DUPLICATE_REFERENCE');
    await expect(
      runTraced(
        tracerOf((fn) => fn(span)),
        'op',
        {},
        () => Promise.reject(failure),
        () => undefined,
      ),
    ).rejects.toBe(failure);
  });

  it('span methods that throw are swallowed and reported: the work never sees them', async () => {
    const reported: unknown[] = [];
    const { span, calls } = recordingSpan({ broken: true });
    const result = await runTraced(
      tracerOf((fn) => fn(span)),
      'op',
      {},
      async (s) => {
        s?.setAttribute('k', 'v');
        s?.addEvent('retry');
        s?.setStatus({ code: 2 });
        s?.end();
        return 'done';
      },
      (e) => reported.push(e),
    );
    expect(result).toBe('done');
    expect(calls).toEqual(['attr k=v', 'event retry', 'status 2', 'end']);
    expect(reported).toHaveLength(4);
  });
});

describe('isTracer and setAttributes', () => {
  it.each([
    [{ startActiveSpan: () => undefined }, true],
    [{ startSpan: () => undefined }, false],
    [null, false],
    ['tracer', false],
  ])('isTracer(%o) is %s', (value, expected) => {
    expect(isTracer(value)).toBe(expected);
  });

  it('setAttributes leaves out undefined values and keeps false and 0', () => {
    const { span, calls } = recordingSpan();
    setAttributes(span, { a: 'x', b: undefined, c: 0, d: false });
    expect(calls).toEqual(['attr a=x', 'attr c=0', 'attr d=false']);
  });
});
