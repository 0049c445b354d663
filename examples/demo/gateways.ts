/**
 * The gateway the demo talks to, behind one small interface with two implementations:
 *
 * - the in-process mock (`myr-gateway/testing`): no account, no network, and `controls` to
 *   play the customer (pay, decline, let expire), inject faults and move the clock;
 * - a remote gateway over HTTP: the one named by MYR_GATEWAY_BASE_URL / _MERCHANT_ID /
 *   _API_KEY, or a sandbox process started by `--sandbox`. No controls: the steps that need
 *   them are skipped with a note.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { MyrGateway } from 'myr-gateway';
import {
  createMockGateway,
  type CallbackDelivery,
  type CallbackOptions,
  type Endpoint,
  type Fault,
  type MockTerminalStatus,
  type RecordedRequest,
} from 'myr-gateway/testing';

/** What only a gateway the demo runs itself can do. */
export interface GatewayControls {
  /** The customer finishes (or abandons) a payment; the gateway sends the signed callback. */
  completePayment(
    referenceId: string,
    status: MockTerminalStatus,
    options?: CallbackOptions,
  ): Promise<CallbackDelivery>;
  /** The bank settles a withdrawal; the gateway sends the signed callback. */
  completeWithdrawal(
    referenceId: string,
    status: MockTerminalStatus,
    options?: CallbackOptions,
  ): Promise<CallbackDelivery>;
  /** Queues a fault for the next matching request. */
  fault(fault: Fault): void;
  /** Moves the gateway's clock by `ms` (0 puts it back to real time). */
  setClockOffset(ms: number): void;
  /** The requests the gateway received for one endpoint, in order. */
  requests(endpoint: Endpoint): RecordedRequest[];
  /** How many withdrawals the gateway holds under a reference. */
  withdrawalsUnder(referenceId: string): number;
}

/** What a person clicks in the sandbox's pages and dashboard, done over HTTP by the demo. */
export interface SandboxButtons {
  /** An outcome button on a payment's hosted page (the gateway then sends the callback). */
  press(paymentId: string, outcome: 'pay' | 'decline' | 'expire'): Promise<void>;
  /** The dashboard's "Resend callback". */
  resend(paymentId: string): Promise<void>;
  /** The dashboard's "Complete" on a withdrawal. */
  completeWithdrawal(withdrawalId: string): Promise<void>;
}

/** The gateway of one demo run. */
export interface DemoGateway {
  /** One line for the transcript's header. */
  readonly description: string;
  readonly client: MyrGateway;
  readonly apiKey: string;
  /** Present for the in-process mock only. */
  readonly controls: GatewayControls | undefined;
  /** Present for the sandbox only. */
  readonly buttons: SandboxButtons | undefined;
  /** False where a withdrawal could move real money: the demo then does not create one. */
  readonly safeToPayOut: boolean;
  close(): Promise<void>;
}

const DEMO_MERCHANT = { merchantId: 'MERCHANT_DEMO', apiKey: 'sk_demo_7f3a9c21b84e4d0f' };

/** The in-process mock: callbacks go over real HTTP to `callbackUrl`. */
export function mockGateway(callbackUrl: string): DemoGateway {
  let offsetMs = 0;
  const mock = createMockGateway({
    merchants: [{ ...DEMO_MERCHANT, defaultCallbackUrl: callbackUrl }],
    now: () => Date.now() + offsetMs,
  });
  mock.listen();
  return {
    description: 'the in-process mock gateway (myr-gateway/testing): no account, no network',
    client: new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant }),
    apiKey: mock.merchant.apiKey,
    safeToPayOut: true,
    buttons: undefined,
    controls: {
      completePayment: (ref, status, options) => mock.completePayment(ref, status, options),
      completeWithdrawal: (ref, status, options) => mock.completeWithdrawal(ref, status, options),
      fault: (fault) => mock.fault(fault),
      setClockOffset: (ms) => {
        offsetMs = ms;
      },
      requests: (endpoint) => mock.requests.filter((r) => r.endpoint === endpoint),
      withdrawalsUnder: (ref) => mock.withdrawals.filter((w) => w.reference_id === ref).length,
    },
    close: async () => mock.close(),
  };
}

/** Where a remote gateway is and who the merchant is. */
export interface RemoteSettings {
  baseUrl: string;
  merchantId: string;
  apiKey: string;
}

/** Settings from MYR_GATEWAY_BASE_URL, MYR_GATEWAY_MERCHANT_ID and MYR_GATEWAY_API_KEY, when all are set. */
export function remoteSettingsFromEnv(env: NodeJS.ProcessEnv): RemoteSettings | undefined {
  const baseUrl = env.MYR_GATEWAY_BASE_URL;
  const merchantId = env.MYR_GATEWAY_MERCHANT_ID;
  const apiKey = env.MYR_GATEWAY_API_KEY;
  if (!baseUrl && !merchantId && !apiKey) return undefined;
  if (!baseUrl || !merchantId || !apiKey) {
    throw new Error('set all three of MYR_GATEWAY_BASE_URL, MYR_GATEWAY_MERCHANT_ID and MYR_GATEWAY_API_KEY, or none');
  }
  return { baseUrl, merchantId, apiKey };
}

/** A gateway reached over HTTP. Plain http is accepted for a loopback address only. */
export function remoteGateway(
  settings: RemoteSettings,
  description: string,
  safeToPayOut: boolean,
  extra: { close?: () => Promise<void>; buttons?: SandboxButtons } = {},
): DemoGateway {
  return {
    description,
    client: new MyrGateway({ ...settings, allowInsecureLoopback: true }),
    apiKey: settings.apiKey,
    controls: undefined,
    buttons: extra.buttons,
    safeToPayOut,
    close: extra.close ?? (async () => {}),
  };
}

/** The sandbox's buttons: form posts to its pages, as the browser sends them. */
function sandboxButtons(origin: string): SandboxButtons {
  async function post(path: string, form: Record<string, string>): Promise<void> {
    const response = await fetch(`${origin}${path}`, {
      method: 'POST',
      body: new URLSearchParams(form),
      redirect: 'manual',
    });
    await response.body?.cancel();
    if (response.status !== 302 && response.status !== 303)
      throw new Error(`sandbox ${path} answered HTTP ${response.status}`);
  }
  return {
    press: (paymentId, outcome) => post(`/pay/${encodeURIComponent(paymentId)}/outcome`, { outcome }),
    resend: (paymentId) => post('/actions/resend', { id: paymentId }),
    completeWithdrawal: (withdrawalId) => post('/actions/withdrawal', { id: withdrawalId, status: 'SUCCESS' }),
  };
}

/** The sandbox's entry point in a built checkout (`npm run build`), and its source (run through tsx). */
export const SANDBOX_CLI = { built: 'dist/sandbox/cli.js', source: 'src/sandbox/cli.ts' } as const;

/** Thrown when `--sandbox` cannot work in this checkout. */
export class SandboxUnavailableError extends Error {}

/** The command that starts the sandbox: the built bin when there is one, else its source through tsx. */
function sandboxCommand(): string[] {
  if (existsSync(SANDBOX_CLI.built)) return [SANDBOX_CLI.built];
  if (existsSync(SANDBOX_CLI.source)) return ['--import', 'tsx', SANDBOX_CLI.source];
  throw new SandboxUnavailableError(
    `the sandbox is not available in this checkout (neither ${SANDBOX_CLI.built} nor ${SANDBOX_CLI.source})`,
  );
}

/**
 * `--sandbox`: starts `node dist/sandbox/cli.js sandbox --port 0` (what `npx myr-gateway
 * sandbox` runs), reads the base URL and credentials from its banner, and stops it on close.
 */
export async function startSandboxProcess(callbackUrl: string): Promise<DemoGateway> {
  const child = spawn(
    process.execPath,
    [...sandboxCommand(), 'sandbox', '--port', '0', '--callback-url', callbackUrl],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const settings = await new Promise<RemoteSettings>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM'); // never leave it running behind a demo that gave up
      reject(new SandboxUnavailableError('the sandbox printed no base URL within 15 s'));
    }, 15_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const field = (label: string) => new RegExp(`^\\s*${label}\\s+(\\S+)`, 'm').exec(output)?.[1];
      const baseUrl = field('Base URL');
      const merchantId = field('Merchant id');
      const apiKey = field('API key');
      if (baseUrl && merchantId && apiKey) {
        clearTimeout(timer);
        resolve({ baseUrl, merchantId, apiKey });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new SandboxUnavailableError(`the sandbox exited with code ${code} before it was ready`));
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const buttons = sandboxButtons(new URL(settings.baseUrl).origin);
  return remoteGateway(settings, `the local sandbox process at ${settings.baseUrl}`, true, { close: stop, buttons });
}
