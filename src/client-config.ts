/**
 * The three settings every client needs (`baseUrl`, `merchantId`, `apiKey`): from the options,
 * else from `MYR_GATEWAY_*` environment variables. A value given and wrong fails the
 * construction; a value missing fails the first call instead, so a client created at module
 * scope never breaks a build (`next build` imports route modules without secrets).
 *
 * @module
 */
import { ConfigurationError } from './core/errors/base.js';
import { hasUnsafeUrlCharacter, LOOPBACK_HOST } from './core/urls.js';

/** One of the three settings every client needs. */
export type Setting = 'baseUrl' | 'merchantId' | 'apiKey';
const SETTINGS: readonly Setting[] = ['baseUrl', 'merchantId', 'apiKey'];

/** The environment variable read for a setting the options leave out: `apiKey` → `MYR_GATEWAY_API_KEY`. */
export function environmentVariable(setting: Setting): string {
  return `MYR_GATEWAY_${setting.replace(/[A-Z]/g, '_$&').toUpperCase()}`;
}

/** What the holder of `process` looks like where there is one (Node, Bun, Deno's compat layer). */
interface ProcessHolder {
  process?: { env?: Record<string, string | undefined> } | undefined;
}

/**
 * `name` from the environment, or undefined. Read through `globalThis` so runtimes without
 * `process` (edge runtimes, workerd) do not crash, and guarded because Deno throws when the
 * permission to read the environment is missing.
 */
function readEnvironment(name: string): string | undefined {
  try {
    const holder: ProcessHolder = globalThis;
    const value = holder.process?.env?.[name];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The three settings, all present. */
export interface Connection {
  baseUrl: string;
  merchantId: string;
  apiKey: string;
}

/**
 * The settings as resolved: all three (`connection`), or the error every call gets while some
 * are missing. `baseUrl` and `merchantId` (never the key) for the client's log description.
 */
export type RequiredSettings = { baseUrl: string | undefined; merchantId: string | undefined } & (
  | { connection: Connection; missing?: undefined }
  | { connection?: undefined; missing: ConfigurationError; absent: readonly Setting[] }
);

function checkBaseUrl(baseUrl: string, allowInsecureLoopback: boolean, where: string): string {
  const refuse = (problem: string) => new ConfigurationError(`baseUrl${where} ${problem}`, 'baseUrl');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw refuse('must be an absolute URL such as https://host/api/v1');
  }
  // Checked on the raw text: the parsed URL has already dropped tabs and line breaks.
  if (hasUnsafeUrlCharacter(baseUrl)) throw refuse('must not contain spaces, control or invisible characters');
  if (url.username || url.password) throw refuse('must not contain credentials');
  // Paths are appended to it: a query or fragment would end up before them (`/api/v1?x/auth/token`).
  if (/[?#]/.test(baseUrl))
    throw refuse('must not contain a query or a fragment: it is the API prefix, such as https://host/api/v1');
  if (url.protocol === 'http:') {
    if (!LOOPBACK_HOST.test(url.hostname)) {
      throw refuse('must use https:// (the api_key must not travel unencrypted)');
    }
    if (!allowInsecureLoopback) {
      throw refuse('uses http:// on a loopback host: pass allowInsecureLoopback: true for a local mock');
    }
  } else if (url.protocol !== 'https:') {
    throw refuse('must use https://');
  }
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

/**
 * A credential with whitespace around it (a trailing newline from a secret file or a `.env`,
 * a space pasted along) is refused as what it is: the service would answer INVALID_CREDENTIALS,
 * and a webhook verifier built on it would refuse every callback. The value is never echoed.
 */
function checkCredential(setting: Setting, value: string, where: string): string {
  const start = /^\s/.test(value);
  const end = /\s$/.test(value);
  if (!start && !end) return value;
  const at = start && end ? 'at its start and end' : start ? 'at its start' : 'at its end';
  const newline = /[\r\n]$/.test(value) ? ' (a line break, as a file or `echo` leaves one)' : '';
  throw new ConfigurationError(
    `${setting}${where} has whitespace ${at}${newline}: remove it; the service would refuse the value as it is`,
    setting,
  );
}

/**
 * Resolves the three settings from `options`, else from the environment (`env`, by default
 * `process.env` where there is one). Throws {@link ConfigurationError} for a value that is
 * present and wrong (a non-string option, an `http://` or malformed `baseUrl`, a merchant id or
 * api key with whitespace around it); a blank or absent one is reported through `missing`, at
 * the first call. The doctor resolves its settings here too, so both read the same values.
 */
export function requiredSettings(
  options: Partial<Record<Setting, unknown>>,
  allowInsecureLoopback: boolean,
  env: (name: string) => string | undefined = readEnvironment,
): RequiredSettings {
  const found: Partial<Record<Setting, string>> = {};
  const absent: Setting[] = [];
  for (const setting of SETTINGS) {
    const given = options[setting];
    if (given !== undefined && typeof given !== 'string')
      throw new ConfigurationError(`${setting} must be a string`, setting);
    const variable = environmentVariable(setting);
    const value = given ?? env(variable);
    if (value === undefined || value.trim() === '') {
      absent.push(setting);
      continue;
    }
    const where = given === undefined ? ` (from ${variable})` : '';
    found[setting] =
      setting === 'baseUrl'
        ? checkBaseUrl(value, allowInsecureLoopback, where)
        : checkCredential(setting, value, where);
  }
  const { baseUrl, merchantId, apiKey } = found;
  if (baseUrl !== undefined && merchantId !== undefined && apiKey !== undefined)
    return { baseUrl, merchantId, connection: { baseUrl, merchantId, apiKey } };
  const missing = new ConfigurationError(
    `MyrGateway is not configured: ${absent.map((s) => `${s} is missing (pass { ${s} } or set ${environmentVariable(s)})`).join('; ')}. Nothing was sent.`,
    absent[0],
  );
  return { baseUrl, merchantId, missing, absent };
}
