/** The sandbox's `--data` file: persistence across restarts, and a file that is refused whole and left untouched. */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/sandbox/command.js';
import { createSandbox } from '../../src/sandbox/server.js';
import { closeSandboxesAfterEach, deposit, sandboxClient } from '../helpers/sandbox.js';

closeSandboxesAfterEach();
const client = sandboxClient;

describe('--data', () => {
  it('keeps payments, their QR payload and deliveries across a restart, with pages moved to the new port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'sandbox.json');
    try {
      const first = await createSandbox({ dataFile: file });
      const created = await client(first).payments.create(deposit('KEEP1'));
      const delivery = await first.service.completePayment(created.payment_id, 'FAILED'); // no callback URL: logged, nothing sent
      expect(delivery.url).toBeNull();
      await first.close();

      const second = await createSandbox({ dataFile: file });
      const kept = second.service.getPayment('KEEP1');
      expect(kept?.status).toBe('FAILED');
      expect(kept?.qr_data_string).toBe(created.gateway.qr_data_string);
      expect(kept?.payment_url).toBe(`${second.origin}/pay/${created.payment_id}`);
      const status = await client(second).payments.retrieve('KEEP1');
      expect(status.status).toBe('FAILED');
      const dashboard = await (await fetch(`${second.origin}/`)).text();
      expect(dashboard).toContain(created.payment_id);
      expect(dashboard).toContain('no callback URL');
      await second.close();
      expect(readdirSync(dir)).toEqual(['sandbox.json']); // the temporary file was renamed, not left behind
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a file that is not its own and leaves it untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'orders.json');
    try {
      writeFileSync(file, '{"orders":[1,2,3]}');
      await expect(createSandbox({ dataFile: file })).rejects.toThrow(/not a sandbox data file/);
      writeFileSync(file, '{"version":1,');
      await expect(createSandbox({ dataFile: file })).rejects.toThrow(/not valid JSON/);
      expect(readFileSync(file, 'utf8')).toBe('{"version":1,');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A data file as the sandbox writes it: a deposit, a withdrawal, a token, a delivery. */
function validData() {
  const deposit = {
    payment_id: 'PAY_226B9329B3E217E96E0403EA',
    merchantId: 'MERCHANT_SANDBOX',
    reference_id: 'G1',
    amount: 149.9,
    currency: 'MYR',
    status: 'SUCCESS',
    gateway_reference: 'GW72CB6F5DA73179EE',
    created_at: '2026-11-24T03:00:24.167Z',
    completed_at: '2026-11-24T03:00:24.187Z',
    kind: 'DEPOSIT',
    payment_method: 'BANK_TRANSFER',
    customer_name: 'A',
    customer_phone: '601',
    callback_url: null,
    redirect_url: null,
    metadata: { provider_channel_id: 'MB2U0227' },
    payment_url: 'http://127.0.0.1:43299/pay/PAY_226B9329B3E217E96E0403EA',
    gateway_redirect_url: 'http://127.0.0.1:43299/bank/PAY_226B9329B3E217E96E0403EA',
    qr_data_string: null,
    expires_at: '2026-11-24T03:15:24.167Z',
  };
  const withdrawal = {
    payment_id: 'WD_0D1BE57C25CC1526F889A1C6',
    merchantId: 'MERCHANT_SANDBOX',
    reference_id: 'G2',
    amount: 250,
    currency: 'MYR',
    status: 'PROCESSING',
    gateway_reference: null,
    created_at: '2026-11-24T03:00:24.185Z',
    completed_at: null,
    kind: 'WITHDRAWAL',
    method: 'BANK',
    bank_code: 'PBBEMYKL',
    account_number: '5140123456789',
    account_name: 'S',
  };
  const token = {
    token: 'mock_at_41c16ac8a05570b89ca761d587fb6a5dcae0a7ca60cd510c',
    merchantId: 'MERCHANT_SANDBOX',
    expiresAt: 1795492824152,
    revoked: false,
  };
  const delivery = {
    webhook_id: '060e382b-2683-4d08-8983-21fd4a716f3a',
    payment_id: deposit.payment_id,
    reference_id: 'G1',
    transaction_type: 'DEPOSIT',
    status: 'SUCCESS',
    url: 'http://127.0.0.1:9/cb',
    started_at: 1795489224188,
    attempts: [
      { error: 'TypeError: fetch failed', at: 1795489224189, durationMs: 0 },
      { status: 200, at: 1795489225189, durationMs: 3, responseBody: 'ok' },
    ],
    state: 'delivered',
    body: { webhook_id: '060e382b-2683-4d08-8983-21fd4a716f3a', payment_id: deposit.payment_id, status: 'SUCCESS' },
  };
  return {
    version: 1,
    records: [deposit, withdrawal] as Array<Record<string, unknown> | null>,
    tokens: [token] as unknown[],
    deliveries: [delivery] as unknown[],
  };
}

describe('--data file safety', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a valid file; writes never follow a symlink planted where the temporary file used to go', async () => {
    dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'sandbox.json');
    const victim = join(dir, 'victim.txt');
    writeFileSync(file, JSON.stringify(validData()));
    writeFileSync(victim, 'not yours');
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    const sandbox = await createSandbox({ dataFile: file });
    expect(sandbox.service.getPayment('G1')?.status).toBe('SUCCESS');
    await sandbox.close();
    expect(readFileSync(victim, 'utf8')).toBe('not yours');
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      version: 1,
      records: [{ reference_id: 'G1' }, { reference_id: 'G2' }],
    });
    expect(readdirSync(dir).sort()).toEqual(['sandbox.json', `sandbox.json.${process.pid}.tmp`, 'victim.txt']);
  });

  const broken: Array<[string, (data: ReturnType<typeof validData>) => void, RegExp]> = [
    ['a null record', (d) => (d.records[0] = null), /records\[0\] is not an object/],
    [
      'payment_method "__proto__"',
      (d) => ((d.records[0] as Record<string, unknown>).payment_method = '__proto__'),
      /records\[0\]\.payment_method .*"__proto__"/,
    ],
    ['a string amount', (d) => ((d.records[1] as Record<string, unknown>).amount = '250'), /records\[1\]\.amount/],
    [
      'a record of unknown kind',
      (d) => ((d.records[1] as Record<string, unknown>).kind = 'REFUND'),
      /records\[1\]\.kind/,
    ],
    [
      'a missing field',
      (d) => delete (d.records[0] as Record<string, unknown>).payment_url,
      /records\[0\]\.payment_url/,
    ],
    [
      'a field the sandbox never writes',
      (d) => ((d.records[1] as Record<string, unknown>).isAdmin = true),
      /records\[1\]\.isAdmin/,
    ],
    [
      'a __proto__ key in metadata',
      (d) => ((d.records[0] as Record<string, unknown>).metadata = JSON.parse('{"__proto__":{"polluted":1}}')),
      /records\[0\]\.metadata\.__proto__/,
    ],
    [
      'two records with one payment_id',
      (d) => d.records.push({ ...(d.records[1] as object), reference_id: 'G3' }),
      /records\[2\]\.payment_id .*twice/,
    ],
    ['a token that is a string', (d) => (d.tokens[0] = 'mock_at_x'), /tokens\[0\]/],
    [
      'a delivery in an unknown state',
      (d) => ((d.deliveries[0] as Record<string, unknown>).state = 'lost'),
      /deliveries\[0\]\.state/,
    ],
    [
      'an attempt without a time',
      (d) => ((d.deliveries[0] as { attempts: unknown[] }).attempts[1] = { status: 200 }),
      /deliveries\[0\]\.attempts\[1\]\.at/,
    ],
  ];
  it.each(broken)(
    'refuses a file with %s, naming it, and leaves the file byte-identical',
    async (_, breakIt, problem) => {
      dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
      const file = join(dir, 'sandbox.json');
      const data = validData();
      breakIt(data);
      const bytes = `${JSON.stringify(data, null, 1)}\n`;
      writeFileSync(file, bytes);
      const refusal = createSandbox({ dataFile: file });
      await expect(refusal).rejects.toMatchObject({ name: 'SandboxDataError' });
      await expect(refusal).rejects.toThrow(problem);
      expect(readFileSync(file, 'utf8')).toBe(bytes);
      expect(readdirSync(dir)).toEqual(['sandbox.json']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it('the command exits non-zero with the problem, not a stack trace', async () => {
    dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'sandbox.json');
    const data = validData();
    data.records[0] = null;
    writeFileSync(file, JSON.stringify(data));
    let stderr = '';
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    try {
      expect(await main(['sandbox', '--data', file], {})).toBe(1);
    } finally {
      write.mockRestore();
    }
    expect(stderr).toMatch(/could not start the sandbox: --data .*sandbox\.json: records\[0\] is not an object/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
