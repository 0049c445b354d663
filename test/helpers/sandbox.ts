/** In-process sandboxes for tests: started on a free port, closed after each test. */
import { afterEach } from 'vitest';
import { MyrGateway } from '../../src/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';

const open: Array<{ close(): Promise<void> }> = [];

/** Closes, after each test of the calling file, every sandbox `startSandbox` opened. */
export function closeSandboxesAfterEach(): void {
  afterEach(async () => {
    for (const item of open.splice(0)) await item.close();
  });
}

export async function startSandbox(options: Parameters<typeof createSandbox>[0] = {}): Promise<Sandbox> {
  const sandbox = await createSandbox(options);
  open.push(sandbox);
  return sandbox;
}

/** A client of the sandbox's merchant. */
export const sandboxClient = (sandbox: Sandbox) =>
  new MyrGateway({ baseUrl: sandbox.baseUrl, ...sandbox.merchant, allowInsecureLoopback: true });

/** A QR deposit's params under `reference`. */
export const deposit = (reference: string) => ({
  amount: 42.1,
  reference_id: reference,
  customer_name: 'Aisyah',
  customer_phone: '60123456789',
  payment_method: 'QR_PAYMENT' as const,
});
