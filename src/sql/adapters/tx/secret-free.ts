/**
 * What the work's `tx` shows of itself in a log: util.inspect (console.log), JSON.stringify, and
 * loggers' circular-safe JSON. A `tx` that is a Proxy of the merchant's connection would show the
 * connection, whose configuration holds the database password (mysql2's `config`, reached from
 * Drizzle's transaction too); it shows a small summary instead.
 *
 * @module
 */

/** The key util.inspect reads a custom view from. */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * Whether `key` is one a log reads to show an object (`toJSON`, util.inspect's custom view): the
 * `tx` Proxy's `get` answers it with the summary, and sends or notes nothing.
 *
 * @example
 * ```ts
 * get(_, key) { if (showsItself(key)) return show; … }
 * ```
 */
export function showsItself(key: string | symbol): boolean {
  return key === 'toJSON' || key === INSPECT;
}

/** The traps a `tx` Proxy sets itself; every other one reaches the connection. */
export type TxTraps<C extends object> = Pick<ProxyHandler<C>, 'get' | 'getOwnPropertyDescriptor'>;

/**
 * The work's `tx`: a Proxy that reaches `connection` through every trap (`traps.get` and
 * `traps.getOwnPropertyDescriptor` when given) but whose target is a shell that holds nothing of
 * it. util.inspect looks past a Proxy at its target without running a trap (and with
 * `showProxy`, as `console.log('%o', …)` and the REPL print, shows target and handler), so only a
 * target that is not the connection keeps the password out of every view. The shell is
 * extensible and every descriptor is reported configurable, which keeps the Proxy's invariants
 * whatever the connection holds.
 *
 * @example
 * ```ts
 * const tx = secretFree(connection, () => new MysqlTx(id), { get: (_, key) => (showsItself(key) ? show : Reflect.get(connection, key)) });
 * ```
 */
export function secretFree<C extends object>(connection: C, show: () => object, traps: TxTraps<C> = {}): C {
  const shell = Object.create(null) as C;
  Object.defineProperty(shell, INSPECT, { value: show, configurable: true });
  return new Proxy(shell, new ToConnection(connection, show, traps));
}

/**
 * The traps of {@link secretFree}'s Proxy, as methods (one `tx` per run: closures made per run
 * are work per callback); each reaches the connection, except those `traps` sets.
 */
class ToConnection<C extends object> implements ProxyHandler<C> {
  // Private: `console.log('%o', tx)` shows the Proxy's handler, and must not show the connection.
  readonly #connection: C;
  readonly #show: () => object;
  readonly #traps: TxTraps<C>;

  constructor(connection: C, show: () => object, traps: TxTraps<C>) {
    this.#connection = connection;
    this.#show = show;
    this.#traps = traps;
  }

  get(target: C, key: string | symbol, receiver: unknown): unknown {
    if (this.#traps.get) return this.#traps.get(target, key, receiver);
    return showsItself(key) ? this.#show : Reflect.get(this.#connection, key);
  }

  set(_: C, key: string | symbol, value: unknown): boolean {
    return Reflect.set(this.#connection, key, value);
  }

  has(_: C, key: string | symbol): boolean {
    return Reflect.has(this.#connection, key);
  }

  deleteProperty(_: C, key: string | symbol): boolean {
    return Reflect.deleteProperty(this.#connection, key);
  }

  defineProperty(_: C, key: string | symbol, descriptor: PropertyDescriptor): boolean {
    return Reflect.defineProperty(this.#connection, key, descriptor);
  }

  ownKeys(): ArrayLike<string | symbol> {
    return Reflect.ownKeys(this.#connection);
  }

  getOwnPropertyDescriptor(target: C, key: string | symbol): PropertyDescriptor | undefined {
    const descriptor = this.#traps.getOwnPropertyDescriptor
      ? this.#traps.getOwnPropertyDescriptor(target, key)
      : Reflect.getOwnPropertyDescriptor(this.#connection, key);
    return descriptor && { ...descriptor, configurable: true };
  }

  getPrototypeOf(): object | null {
    return Reflect.getPrototypeOf(this.#connection);
  }
}

/**
 * `value` as the work's `tx`, the same in every use but what a log shows: `show()`.
 *
 * @example
 * ```ts
 * const tx = shownAs(prismaTx, () => new PrismaTx());
 * ```
 */
export function shownAs<T extends object>(value: T, show: () => object): T {
  return secretFree(value, show);
}
