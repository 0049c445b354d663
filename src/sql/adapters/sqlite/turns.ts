/**
 * How runs take turns on the SQLite adapter's one connection: one transaction at a time, in
 * arrival order, each run waiting at most its lock timeout, then turned away with SQLITE_BUSY
 * (the ledger's `in_flight`).
 *
 * @module
 */

function busy(message: string): Error {
  return Object.assign(new Error(message), { code: 'SQLITE_BUSY' });
}

/** A run waiting for its turn: how it is let in or turned away, and until when it waits. */
interface Waiter {
  readonly grant: (turn: Turn) => void;
  readonly refuse: (error: Error) => void;
  readonly timeoutMs: number;
  readonly until: number;
}

/** One run's turn on the connection, given back once (again: nothing). */
export class Turn {
  readonly #turns: Turns;
  #given = false;

  constructor(turns: Turns) {
    this.#turns = turns;
  }

  /** The next run waiting takes the connection (or it is free). */
  giveBack(): void {
    if (this.#given) return;
    this.#given = true;
    this.#turns.next();
  }
}

/**
 * Takes turns on one connection: one transaction at a time, in arrival order, each waiting at
 * most its `timeoutMs`. One timer watches the earliest deadline of all the waiting (under load
 * every run waits: a timer of its own each cost more than its statements).
 */
export class Turns {
  #held = false;
  readonly #waiting: Waiter[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armedUntil = Infinity;

  /** Runs waiting for the connection now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  take(timeoutMs: number): Promise<Turn> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve(new Turn(this));
    }
    return new Promise((grant, refuse) => {
      const until = performance.now() + timeoutMs;
      this.#waiting.push({ grant, refuse, timeoutMs, until });
      if (until < this.#armedUntil) this.#arm(until);
    });
  }

  /** A turn was given back: the first run waiting takes the connection, or it is free. */
  next(): void {
    const waiter = this.#waiting.shift();
    if (waiter) waiter.grant(new Turn(this));
    else {
      this.#held = false;
      this.#disarm();
    }
  }

  #arm(until: number): void {
    this.#disarm();
    this.#armedUntil = until;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, until - performance.now()));
  }

  #disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedUntil = Infinity;
  }

  /** Turns away every run whose wait is over, then watches the next deadline. */
  #expire(): void {
    this.#timer = undefined;
    this.#armedUntil = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (let i = 0; i < this.#waiting.length;) {
      const waiter = this.#waiting[i] as Waiter;
      if (waiter.until <= now) {
        this.#waiting.splice(i, 1);
        waiter.refuse(busy(`the SQLite connection was busy for ${waiter.timeoutMs} ms`));
      } else {
        next = Math.min(next, waiter.until);
        i++;
      }
    }
    if (next < Infinity) this.#arm(next);
  }
}
