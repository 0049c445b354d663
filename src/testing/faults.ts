/**
 * The fault queue: scripted misbehaviour consumed in FIFO order by matching requests.
 *
 * @module
 */
import type { Endpoint } from './types/options.js';
import type { Fault, FaultResponse } from './types/faults.js';

interface QueuedFault {
  endpoint: Endpoint | '*';
  when: 'before' | 'after';
  remaining: number;
  response: FaultResponse;
}

/** A fault taken from the queue for one request. */
export interface TakenFault {
  when: 'before' | 'after';
  response: FaultResponse;
}

/** FIFO queue of faults. */
export class FaultQueue {
  private queue: QueuedFault[] = [];

  /** Adds a fault at the end of the queue. */
  add(fault: Fault): void {
    const times = fault.times ?? 1;
    if (!(times > 0)) throw new RangeError('fault.times must be a positive number');
    if (fault.response.type === 'delay' && !(fault.response.ms >= 0)) {
      throw new RangeError('a delay fault needs ms >= 0');
    }
    this.queue.push({
      endpoint: fault.endpoint ?? '*',
      when: fault.when ?? 'before',
      remaining: times,
      response: fault.response,
    });
  }

  /**
   * Takes one use of the first fault matching `endpoint`, or undefined. When `accept` refuses
   * that fault (a `when: 'after'` fault and a request that failed authentication), nothing is
   * taken and it stays first in line: faults keep their FIFO order.
   */
  take(endpoint: Endpoint | 'unknown', accept: (fault: TakenFault) => boolean = () => true): TakenFault | undefined {
    const index = this.queue.findIndex((f) => f.endpoint === '*' || f.endpoint === endpoint);
    if (index < 0) return undefined;
    const fault = this.queue[index] as QueuedFault; // findIndex found it
    if (!accept(fault)) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.queue.splice(index, 1);
    return { when: fault.when, response: fault.response };
  }

  /** Number of faults still queued (a fault with times > 1 counts once). */
  get size(): number {
    return this.queue.length;
  }

  clear(): void {
    this.queue = [];
  }
}
