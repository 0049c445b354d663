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

/**
 * The target for a `tx` Proxy of `connection`: util.inspect looks past a Proxy at its target
 * without running a trap, so the target itself must show `show()`. Everything else reaches
 * `connection` as it would (the `tx` Proxy's own traps should read `connection`, not this).
 *
 * @example
 * ```ts
 * const tx = new Proxy(secretFree(connection, show), { get: (_, key) => (showsItself(key) ? show : Reflect.get(connection, key)) });
 * ```
 */
export function secretFree<C extends object>(connection: C, show: () => object): C {
  return new Proxy(connection, { get: (target, key) => (key === INSPECT ? show : Reflect.get(target, key)) });
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
  return new Proxy(secretFree(value, show), { get: (_, key) => (showsItself(key) ? show : Reflect.get(value, key)) });
}
