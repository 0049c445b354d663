/**
 * The `myr-gateway` command line: flags, the ready banner, start and clean stop on
 * Ctrl-C / SIGTERM. cli.ts runs it.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import {
  apiKeyProblem,
  createSandbox,
  SANDBOX_KEY_PREFIXES,
  SANDBOX_MERCHANT,
  type Sandbox,
  type SandboxOptions,
} from './server.js';

/** Environment variable the api key may come from instead of `--api-key`. */
export const API_KEY_ENV = 'MYR_SANDBOX_API_KEY';

const USAGE = `Usage: myr-gateway sandbox [options]
       myr-gateway doctor [--help]   check the gateway configured in MYR_GATEWAY_* (moves no money)

Starts a local sandbox of the MYR Payment Gateway Service on 127.0.0.1, with hosted payment
pages, a live dashboard and signed callbacks to your server. Local development only.

Options:
  --port N             port on 127.0.0.1 (default: a free port)
  --merchant-id ID     merchant id (default: ${SANDBOX_MERCHANT.merchantId})
  --api-key KEY        api key; callbacks are signed with the key derived from it
                       (default: ${SANDBOX_MERCHANT.apiKey}). Prefer the environment
                       variable ${API_KEY_ENV}, which other users cannot see in \`ps\`.
                       It must start with ${SANDBOX_KEY_PREFIXES.join(' or ')}.
  --allow-any-key      take an api key that does not start with those prefixes
  --callback-url URL   the merchant's default callback URL (http:// allowed)
  --data FILE          keep payments, withdrawals and deliveries in FILE across restarts
  --latency MS         wait MS milliseconds before every API answer
  --fail-rate R        answer a share R (0..1) of API requests with 502, processing nothing
  --count-delay MS     count each API request against the rate limit MS milliseconds
                       after it arrives (a queue in front of the service's counter)
  --count-jitter MS    add up to MS more milliseconds to that delay, drawn per request
  -h, --help           show this help
`;

/** A flag the user must fix; printed without a stack trace. */
class UsageError extends Error {}

function number(
  name: string,
  value: string | undefined,
  check: (n: number) => boolean,
  what: string,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !check(n)) throw new UsageError(`--${name} must be ${what}, got ${JSON.stringify(value)}`);
  return n;
}

/** Turns the command line (and {@link API_KEY_ENV}) into sandbox options; `help` when usage was asked for. */
export function parseCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): { help: true } | { help: false; options: SandboxOptions } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        'merchant-id': { type: 'string' },
        'api-key': { type: 'string' },
        'allow-any-key': { type: 'boolean' },
        'callback-url': { type: 'string' },
        data: { type: 'string' },
        latency: { type: 'string' },
        'fail-rate': { type: 'string' },
        'count-delay': { type: 'string' },
        'count-jitter': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length !== 1 || positionals[0] !== 'sandbox') {
    throw new UsageError(
      positionals.length === 0 ? 'missing command: sandbox or doctor' : `unknown command: ${positionals.join(' ')}`,
    );
  }
  const nonEmpty = <V extends string | undefined>(name: string, value: V): V => {
    if (value !== undefined && value.trim() === '') throw new UsageError(`--${name} must not be empty`);
    return value;
  };
  const options: SandboxOptions = {};
  const port = number(
    'port',
    values.port,
    (n) => Number.isInteger(n) && n >= 0 && n <= 65535,
    'a port from 0 to 65535',
  );
  const latency = number(
    'latency',
    values.latency,
    (n) => Number.isInteger(n) && n >= 0 && n <= 600_000,
    'whole milliseconds from 0 to 600000',
  );
  const failRate = number('fail-rate', values['fail-rate'], (n) => n >= 0 && n <= 1, 'a number from 0 to 1');
  const countMs = (n: number) => Number.isInteger(n) && n >= 0 && n <= 60_000;
  const countDelay = number('count-delay', values['count-delay'], countMs, 'whole milliseconds from 0 to 60000');
  const countJitter = number('count-jitter', values['count-jitter'], countMs, 'whole milliseconds from 0 to 60000');
  const merchantId = nonEmpty('merchant-id', values['merchant-id']);
  const fromEnv = env[API_KEY_ENV];
  if (values['api-key'] === undefined && fromEnv !== undefined && fromEnv.trim() === '')
    throw new UsageError(`${API_KEY_ENV} must not be empty`);
  const apiKey = nonEmpty('api-key', values['api-key']) ?? fromEnv;
  const keyProblem = apiKey === undefined ? undefined : apiKeyProblem(apiKey, values['allow-any-key']);
  if (keyProblem) throw new UsageError(keyProblem);
  const callbackUrl = values['callback-url'];
  if (callbackUrl !== undefined && !/^https?:\/\//i.test(callbackUrl)) {
    throw new UsageError('--callback-url must be an absolute http:// or https:// URL');
  }
  if (port !== undefined) options.port = port;
  if (latency !== undefined) options.latencyMs = latency;
  if (failRate !== undefined) options.failRate = failRate;
  if (countDelay !== undefined || countJitter !== undefined)
    options.rateLimitCountDelay = { latencyMs: countDelay ?? 0, jitterMs: countJitter ?? 0 };
  if (merchantId !== undefined) options.merchantId = merchantId;
  if (apiKey !== undefined) options.apiKey = apiKey;
  if (values['allow-any-key']) options.allowAnyKey = true;
  if (callbackUrl !== undefined) options.callbackUrl = callbackUrl;
  if (values.data !== undefined) options.dataFile = nonEmpty('data', values.data);
  return { help: false, options };
}

/** A key the user supplied, as the banner shows it: its test prefix and last four characters. */
function maskKey(apiKey: string): string {
  const prefix = SANDBOX_KEY_PREFIXES.find((p) => apiKey.startsWith(p)) ?? '';
  return apiKey.length - prefix.length >= 8 ? `${prefix}…${apiKey.slice(-4)}` : `${prefix}…`;
}

/**
 * What the sandbox prints when it is ready. A key the user supplied may be a real merchant's
 * test key: terminals are logged and shared, so neither it nor the signing key derived from
 * it is printed. The sandbox's own well-known key is printed in full, with its signing key.
 */
export function banner(sandbox: Sandbox, options: SandboxOptions): string {
  const supplied = options.apiKey !== undefined;
  const faults = [
    options.latencyMs ? `${options.latencyMs} ms latency` : '',
    options.failRate ? `${options.failRate * 100}% of API requests fail with 502` : '',
  ].filter(Boolean);
  return [
    'MYR Gateway sandbox: local development only (listening on 127.0.0.1, no real money)',
    '',
    `  Dashboard     ${sandbox.origin}/`,
    `  Base URL      ${sandbox.baseUrl}`,
    `  Merchant id   ${sandbox.merchant.merchantId}`,
    ...(supplied
      ? [
          `  API key       ${maskKey(sandbox.merchant.apiKey)} (yours, not printed; callbacks are signed with the key derived from it)`,
        ]
      : [`  API key       ${sandbox.merchant.apiKey}`, `  Signing key   ${sandbox.signingKeyHex}`]),
    `  Callbacks to  ${sandbox.callbackUrl ?? '(none by default: pass --callback-url or send callback_url)'}`,
    ...(options.dataFile ? [`  Data file     ${options.dataFile}`] : []),
    ...(faults.length ? [`  Faults        ${faults.join(', ')}`] : []),
    '',
    supplied
      ? 'The sandbox keeps your key to itself: it signs callbacks with it and talks to no gateway.'
      : 'These are sandbox credentials: they work only here, never against a real gateway.',
    `  new MyrGateway({ baseUrl: '${sandbox.baseUrl}', merchantId: '${sandbox.merchant.merchantId}', apiKey: '…', allowInsecureLoopback: true })`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

/** Runs the command; resolves with the exit code once the sandbox has stopped. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let command;
  try {
    command = parseCommand(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`myr-gateway: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let sandbox: Sandbox;
  try {
    sandbox = await createSandbox(command.options);
  } catch (error) {
    process.stderr.write(
      `myr-gateway: could not start the sandbox: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
  process.stdout.write(banner(sandbox, command.options));
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stdout.write(`\n${signal}: stopping the sandbox\n`);
      sandbox.close().then(resolve, (error: unknown) => {
        process.stderr.write(
          `myr-gateway: error while stopping: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        resolve();
      });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  return 0;
}
