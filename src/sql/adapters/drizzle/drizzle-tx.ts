/**
 * The handler's `tx` on Drizzle: Drizzle's transaction, whose checked-out connection refuses
 * statements once the run has ended, and which a log shows without the connection's config.
 *
 * @module
 */
import { usedAfterRun } from '../../sql-client.js';
import { isRecord } from '../adapter-options.js';
import { secretFree, showsItself } from '../tx/secret-free.js';

const DRIVER_QUERIES = new Set<string | symbol>(['query', 'execute']);

/**
 * What the handler's Drizzle `tx` shows of itself in a log or JSON: nothing of Drizzle's session
 * underneath, whose client (mysql2's connection) holds the database password in its config.
 */
class DrizzleTx {}
const show = () => new DrizzleTx();

/**
 * A Drizzle transaction whose checked-out connection (`session.client`, which every query Drizzle
 * builds from it reads) refuses statements once the transaction ended: back in the pool, a late
 * one would run on its own or in another callback's transaction. A log shows it as `DrizzleTx {}`.
 */
export function guardedDrizzleTx<T>(tx: T, ended: () => boolean): T {
  if (!isRecord(tx)) return tx;
  const guarded = <O extends object>(target: O, wrap: (key: string | symbol, value: unknown) => unknown): O =>
    new Proxy(target, { get: (object, key) => wrap(key, Reflect.get(object, key)) });
  const client = (value: object) =>
    guarded(value, (key, method) =>
      typeof method === 'function' && DRIVER_QUERIES.has(key)
        ? (...args: unknown[]): unknown =>
            ended() ? Promise.reject(usedAfterRun()) : Reflect.apply(method, value, args)
        : method,
    );
  const session = (value: object) =>
    guarded(value, (key, field) => (key === 'client' && isRecord(field) ? client(field) : field));
  return secretFree(tx, show, {
    get: (_, key) => {
      if (showsItself(key)) return show;
      const field: unknown = Reflect.get(tx, key);
      return key === 'session' && isRecord(field) ? session(field) : field;
    },
  });
}
