/**
 * `npx myr-gateway doctor`: checks the gateway configured in the environment without moving
 * money, one printed line per check, and exits non-zero naming the first failing check.
 * Part of the CLI build only (dist/sandbox/cli.js), never of the `myr-gateway` package root.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { ENV, firstFailure, type CheckResult, type Environment } from './checks.js';
import { checkLedgerTable, LEDGER_ENV } from './ledger-check.js';
import { runDoctor } from './run.js';

const USAGE = `Usage: myr-gateway doctor

Checks the MYR Payment Gateway configured in the environment, without moving money:
the configuration, a token request, a status lookup of an unused reference (the spec says
404 NOT_FOUND), the clock against the service's Date header, the rate-limit headers and
the callback URL. Exits 1 naming the first failing check; warnings do not fail.

Environment:
  ${ENV.baseUrl}       e.g. https://api.gateway.example/api/v1 (http only on 127.0.0.1)
  ${ENV.merchantId}
  ${ENV.apiKey}        never printed
  ${ENV.callbackUrl}   optional; must be https://
  ${LEDGER_ENV.databaseUrl}   optional; postgres://, mysql:// or a SQLite file: checks the
                             SQL ledger's table as ensureSchema({ create: false }) does
  ${LEDGER_ENV.table}   optional; default myr_webhook_ledger
`;

/** Where the command writes and what it reads; `process.*` in the bin, fakes in tests. */
export interface DoctorIo {
  env: Environment;
  /** Receives the report, a line at a time (each ends with a newline). */
  write: (text: string) => void;
  /** Receives usage errors. */
  writeError: (text: string) => void;
  /** The local clock compared with the service's. @default Date.now */
  now?: () => number;
}

const LABEL: Record<CheckResult['outcome'], string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' };

/** One check as printed: `ok   token          access token obtained…`. */
export function formatResult(result: CheckResult): string {
  return `${LABEL[result.outcome]}  ${result.name.padEnd(14)} ${result.detail}\n`;
}

/**
 * Runs the doctor; resolves with the exit code: 0 when no check failed (warnings allowed),
 * 1 when one did, 2 for a usage error.
 *
 * @example
 * ```ts
 * process.exitCode = await doctorMain(process.argv.slice(3), {
 *   env: process.env,
 *   write: (text) => process.stdout.write(text),
 *   writeError: (text) => process.stderr.write(text),
 * });
 * ```
 */
export async function doctorMain(argv: string[], io: DoctorIo): Promise<number> {
  let help: boolean | undefined;
  try {
    ({
      values: { help },
    } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    io.writeError(`myr-gateway doctor: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (help) {
    io.write(USAGE);
    return 0;
  }
  io.write('myr-gateway doctor: checking the gateway configured in the environment (no money moves)\n');
  const results = await runDoctor({ env: io.env, ...(io.now ? { now: io.now } : {}) });
  const ledger = await checkLedgerTable(io.env);
  if (ledger) results.push(ledger);
  for (const result of results) io.write(formatResult(result));
  const failed = firstFailure(results);
  const warnings = results.filter((r) => r.outcome === 'warn').length;
  if (failed) {
    io.write(`doctor: failed at "${failed.name}": ${failed.detail}\n`);
    return 1;
  }
  io.write(`doctor: all checks passed${warnings > 0 ? ` (${warnings} warning${warnings > 1 ? 's' : ''})` : ''}\n`);
  return 0;
}
