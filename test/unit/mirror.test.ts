/**
 * test/unit mirrors src: every src module with logic of its own (a function, method or class
 * body) has its unit test at `test/unit/<same path>.test.ts`, or `<same path>-<topic>.test.ts`
 * when one module's tests are split by topic (webhooks/run-once-on-error.test.ts). A test counts
 * for one module only, the longest name it fits: `claim-and-run.test.ts` is claim-and-run.ts's,
 * never claim.ts's (whose topic test is claim-lost.test.ts). Modules of
 * declarations only (types, constants, re-exports) need none. The few tested only through the
 * public API are listed below, each with why and where; a module that gains a unit test, or
 * disappears, must leave the list, so neither the mirror nor the list can rot unnoticed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Modules tested only through the public API, by module path under src, with the reason. Each
 * reason names the test files that show the behaviour; those files must exist.
 */
const TESTED_THROUGH_INTEGRATION: Readonly<Record<string, string>> = {
  // Behaviour that only shows through the client or the handler as a whole.
  'core/node-crypto.ts':
    'a runtime lookup: both paths through test/unit/core/tokens/seal.test.ts and test/unit/webhooks/vectors.test.ts',
  'client-config.ts':
    'settings from options and MYR_GATEWAY_*, read again at each call until there: test/integration/client-config-env.test.ts, test/integration/client-nextjs-build.test.ts',
  'schemas/payment-params.ts':
    'the request schemas, through every rule and message: test/unit/core/validate.test.ts, test/integration/client-validation.test.ts, test/types/hover.test.ts',
  'webhooks/log.ts':
    'one line per refused or failed callback, through every adapter: test/integration/webhook-logger.test.ts',

  // Framework adapters are only worth testing against the real frameworks.
  'webhooks/adapters/express.ts': 'against real Express: test/integration/webhook-adapters.test.ts',
  'webhooks/adapters/fastify.ts': 'against real Fastify: test/integration/webhook-adapters.test.ts',
  'webhooks/adapters/hono.ts': 'against real Hono: test/integration/webhook-adapters.test.ts',
  'webhooks/adapters/koa.ts': 'against real Koa: test/integration/webhook-adapters.test.ts',
  'webhooks/adapters/node.ts': 'against node:http: test/integration/webhook-adapters.test.ts',
  'webhooks/adapters/web.ts':
    'against Request/Response in every runtime: test/integration/webhook-adapters.test.ts, test/runtimes/conformance.test.ts',

  // A dialect's statements: their shapes in one table over the dialects, their meaning on the real databases.
  'sql/dialects/postgres/ledger-statements.ts':
    'test/unit/sql/dialects/ledger-statements-of.test.ts, test/integration/sql/pg/scenarios.test.ts',
  'sql/dialects/mysql/ledger-statements.ts':
    'test/unit/sql/dialects/ledger-statements-of.test.ts, test/integration/sql/mysql2/scenarios.test.ts',
  'sql/dialects/sqlite/ledger-statements.ts':
    'test/unit/sql/dialects/ledger-statements-of.test.ts, test/integration/sql/sqlite/scenarios.test.ts',
  'sql/adapters/sqlite/sqlite-tx.ts':
    "SQLite's tx refusing after its run, through fromSqlite: test/unit/sql/adapters/sqlite/from-sqlite.test.ts, test/integration/sql/sqlite/one-writer.test.ts",
  'sql/adapters/sqlite/sqlite-run.ts':
    "a run's part of fromSqlite's transaction, committed (with a COMMIT it may share) or rolled back to its own SAVEPOINT: test/unit/sql/adapters/sqlite/from-sqlite.test.ts, test/integration/sql/sqlite/shared-commit.test.ts",
  'sql/adapters/sqlite/turns.ts':
    "runs taking turns on fromSqlite's one connection, each turned away at its own lockTimeoutMs: test/unit/sql/adapters/sqlite/from-sqlite.test.ts, test/integration/sql/sqlite/scenarios.test.ts",
  'sql/dialects/positional-reads.ts':
    'the MySQL and SQLite reads in test/unit/sql/dialects/ledger-statements-of.test.ts, on real databases in test/integration/sql/mysql2/scenarios.test.ts, test/integration/sql/sqlite/scenarios.test.ts',
  'sql/dialects/postgres/ledger-schema.ts':
    'its columns in test/unit/sql/schema-check.test.ts, the check on real Postgres in test/integration/sql/schema-owned.test.ts',
  'sql/dialects/mysql/ledger-schema.ts':
    'its columns in test/unit/sql/schema-check.test.ts and test/unit/sql/ensure-schema.test.ts, the check on real MariaDB in test/integration/sql/schema-owned.test.ts',
  'sql/dialects/sqlite/ledger-schema.ts':
    'the check on a real SQLite file in test/integration/sql/schema-owned.test.ts',
  'sql/dialects/postgres/table-check.ts':
    'the description read and the fixes run on real Postgres in test/integration/sql/schema-owned.test.ts',
  'sql/dialects/mysql/table-check.ts':
    'its fixes in test/unit/sql/ensure-schema.test.ts, the description read and the fixes run on real MariaDB in test/integration/sql/schema-owned.test.ts',
  'sql/dialects/sqlite/table-check.ts':
    'the description read on a real SQLite file in test/integration/sql/schema-owned.test.ts',

  // Redis stores: their logic is Lua run by the server, so a fake client would test nothing.
  'redis/rate-limiter.ts':
    'Lua on a real redis-server, both clients: test/integration/redis-rate-limiter.test.ts (the answers it checks: test/unit/redis/rate-scripts.test.ts)',
  'redis/token-store.ts': 'Lua on a real redis-server, both clients: test/integration/tokens/redis-token-store.test.ts',
  'redis/webhook-store.ts': 'Lua on a real redis-server, both clients: test/integration/redis-webhook-store.test.ts',
  'redis/server-check.ts': 'INFO answers of fake and real servers: test/integration/redis-topologies.test.ts',
  'redis/errors.ts': 'codes and messages: test/integration/redis-topologies.test.ts, test/unit/redis/client.test.ts',

  // The doctor command: its pure checks have test/unit/doctor/checks.test.ts; these run them.
  'doctor/run.ts': 'runs the checks against a live sandbox: test/integration/doctor.test.ts',
  'doctor/ledger-check.ts':
    'the ledger table of real PostgreSQL, MariaDB and SQLite, through the CLI: test/integration/doctor-ledger.test.ts',
  'doctor/command.ts': 'the CLI, its output and exit codes: test/integration/doctor.test.ts',

  // The sandbox server and its pages: HTTP and a browser are what they are for.
  'sandbox/app.ts': 'routes over HTTP: test/integration/sandbox.test.ts',
  'sandbox/cli.ts': 'the npx entry in a child process: test/integration/sandbox.test.ts',
  'sandbox/command.ts':
    'argument handling and exit codes: test/integration/sandbox.test.ts, test/integration/sandbox-data.test.ts',
  'sandbox/dashboard.ts': 'pages in a real browser: test/browser/sandbox.test.ts',
  'sandbox/data-shape.ts':
    'a table of broken --data files through createSandbox: test/integration/sandbox-data.test.ts',
  'sandbox/delivery-log.ts':
    'the log of callback deliveries to a real server: test/integration/sandbox.test.ts, test/browser/sandbox.test.ts',
  'sandbox/http.ts': 'request handling over HTTP: test/integration/sandbox.test.ts',
  'sandbox/pages/layout.ts': 'pages in a real browser: test/browser/sandbox.test.ts',
  'sandbox/pages/payment.ts': 'the payment page in a real browser: test/browser/sandbox.test.ts',
  'sandbox/persistence.ts': 'files, symlinks and restarts on a real disk: test/integration/sandbox-data.test.ts',
  'sandbox/server.ts': 'a listening sandbox: test/integration/sandbox.test.ts, test/integration/sandbox-data.test.ts',

  // The mock is itself a test tool; its contract is the service's, tested over HTTP.
  'testing/callback-sender.ts': 'callbacks the mock (and the sandbox) sends: test/integration/mock-callbacks.test.ts',
  'testing/dispatcher.ts':
    'every route over HTTP: test/integration/mock-payments.test.ts, test/integration/mock-withdrawals.test.ts',
  'testing/faults.ts':
    'every fault through the client: test/integration/mock-faults.test.ts, test/integration/fault-matrix.test.ts',
  'testing/mock-gateway.ts':
    'in Node and other runtimes: test/integration/mock-serve.test.ts, test/runtimes/conformance.test.ts',
  'testing/money-endpoints.ts': 'test/integration/mock-payments.test.ts, test/integration/mock-withdrawals.test.ts',
  'testing/responses.ts':
    "answers in the spec's shapes: test/integration/mock-payments.test.ts, test/integration/mock-auth.test.ts",
  'testing/server.ts': 'a listening mock: test/integration/mock-serve.test.ts',
  'testing/service.ts':
    'service state through its routes: test/integration/mock-payments.test.ts, test/integration/mock-reset.test.ts',
  'testing/state.ts': 'test/integration/mock-reset.test.ts',
  'testing/validation.ts':
    "the spec's error answers: test/integration/mock-payments.test.ts, test/integration/mock-withdrawals.test.ts",
};

/** Every .ts file under `dir`, as a path relative to `base`. */
function files(dir: string, base: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(base, join(entry.parentPath, entry.name)))
    .sort();
}

/** Whether a module runs code of its own: any function, method, accessor or constructor with a body. */
function hasLogic(path: string): boolean {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  let found = false;
  const visit = (node: ts.Node) => {
    if (found) return;
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) found = true;
    else ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const src = join(root, 'src');
const unitTests = new Set(files(join(root, 'test/unit'), join(root, 'test/unit')));
const modules = files(src, src);
const stems = modules.map((module) => module.replace(/\.ts$/, ''));

/** The module a test file is the unit test of: the longest module stem it is named for (`<stem>.test.ts`, `<stem>-<topic>.test.ts`). */
function moduleOf(test: string): string | undefined {
  const named = stems.filter(
    (stem) => test === `${stem}.test.ts` || (test.startsWith(`${stem}-`) && test.endsWith('.test.ts')),
  );
  return named.sort((a, b) => b.length - a.length)[0];
}

const hasUnitTest = (module: string) => [...unitTests].some((test) => moduleOf(test) === module.replace(/\.ts$/, ''));

describe('test/unit mirrors src', () => {
  it('finds the modules and tells logic from declarations', () => {
    expect(modules).toEqual(
      expect.arrayContaining(['core/call/retry-policy.ts', 'index.ts', 'testing/types/records.ts']),
    );
    expect(hasLogic(join(src, 'core/call/retry-policy.ts'))).toBe(true);
    expect(hasLogic(join(src, 'core/tokens/store.ts'))).toBe(true);
    expect(hasLogic(join(src, 'index.ts'))).toBe(false);
    expect(hasLogic(join(src, 'testing/types/records.ts'))).toBe(false);
  });

  it('counts a test for the one module with the longest name it fits', () => {
    expect(moduleOf('webhooks/claim-and-run.test.ts')).toBe('webhooks/claim-and-run');
    expect(moduleOf('webhooks/claim-lost.test.ts')).toBe('webhooks/claim');
    expect(moduleOf('webhooks/run-once-on-error.test.ts')).toBe('webhooks/run-once');
    expect(moduleOf('core/pacing/memory-limiter-edge-probe.test.ts')).toBe('core/pacing/memory-limiter');
    expect(moduleOf('webhooks/properties.test.ts')).toBeUndefined();
    expect(moduleOf('webhooks/signature-match.test.ts')).toBe('webhooks/signature-match');
  });

  it('every module with logic has its unit test, or is listed as tested through integration', () => {
    const missing = modules.filter(
      (module) => hasLogic(join(src, module)) && !hasUnitTest(module) && !(module in TESTED_THROUGH_INTEGRATION),
    );
    expect(missing.map((module) => `src/${module} has no test/unit/${module.replace(/\.ts$/, '.test.ts')}`)).toEqual(
      [],
    );
  });

  it('the list names only modules that exist, have logic and still have no unit test', () => {
    const stale = Object.keys(TESTED_THROUGH_INTEGRATION).filter(
      (module) => !modules.includes(module) || !hasLogic(join(src, module)) || hasUnitTest(module),
    );
    expect(stale).toEqual([]);
  });

  it('every test file a reason names exists', () => {
    const named = Object.values(TESTED_THROUGH_INTEGRATION).flatMap(
      (reason) => reason.match(/test\/[\w/.-]+\.test\.ts/g) ?? [],
    );
    expect(named.length).toBeGreaterThanOrEqual(Object.keys(TESTED_THROUGH_INTEGRATION).length);
    expect(named.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });
});
