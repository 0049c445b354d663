/**
 * Issue 15: what a merchant sees when hovering a field of the public params and result types,
 * read from the emitted declarations (as a merchant's editor reads dist/*.d.ts), not from src:
 * every request field carries its rule and an example, result types say what is always there,
 * statuses are unions.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
let out = '';
let consumer = '';
let service: ts.LanguageService;

const CONSUMER = `import { MyrGateway, type PaymentCreateParams, type Withdrawal, type PaymentStatus } from './dts/index.js';
declare const gateway: MyrGateway;
void gateway.payments.create({ amount: '149.90', reference_id: 'ORDER1001', customer_name: 'Aisyah Rahman', customer_phone: '60123456789', payment_method: 'QR_PAYMENT', currency: 'MYR', callback_url: 'https://shop.example/cb', redirect_url: 'https://shop.example/r', metadata: {} });
export const bank: PaymentCreateParams = { amount: 10, reference_id: 'R', customer_name: 'A', customer_phone: '6', payment_method: 'BANK_TRANSFER', metadata: { provider_channel_id: 'MB2U0227' } };
void gateway.withdrawals.create({ amount: '250.00', reference_id: 'PAYOUT1', bank_code: 'PBBEMYKL', account_number: '5140123456789', account_name: 'Tan Wei Ming', method: 'BANK' });
declare const w: Withdrawal;
export const withdrawalStatus = w.status, withdrawalAmount = w.amount;
declare const s: PaymentStatus;
export const paymentStatus = s.status;
`;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'myr-gateway-hover-'));
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!config) throw new Error('tsconfig.json did not parse');
  const { paths: _paths, ...base } = config.options;
  const options: ts.CompilerOptions = {
    ...base,
    declaration: true,
    emitDeclarationOnly: true,
    noEmit: false,
    outDir: join(out, 'dts'),
    rootDir: join(root, 'src'),
    incremental: false,
    composite: false,
  };
  const { outDir: _outDir, rootDir: _rootDir, ...checkOptions } = options;
  const program = ts.createProgram({ rootNames: [join(root, 'src', 'index.ts')], options });
  const emitted = program.emit();
  if (emitted.emitSkipped) throw new Error('declaration emit skipped');
  consumer = join(out, 'consumer.ts');
  writeFileSync(consumer, CONSUMER);
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
  // The declarations import zod's types, as a merchant's node_modules provides them.
  symlinkSync(realpathSync(join(root, 'node_modules')), join(out, 'node_modules'), 'dir');
  const files = [consumer];
  service = ts.createLanguageService({
    getScriptFileNames: () => files,
    getScriptVersion: () => '1',
    getScriptSnapshot: (file) =>
      existsSync(file) ? ts.ScriptSnapshot.fromString(readFileSync(file, 'utf8')) : undefined,
    getCurrentDirectory: () => out,
    getCompilationSettings: () => ({ ...checkOptions, noEmit: true, declaration: false, emitDeclarationOnly: false }),
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (path) => ts.sys.fileExists(path),
    readFile: (path, encoding) => ts.sys.readFile(path, encoding),
    readDirectory: (...args) => ts.sys.readDirectory(...args),
    directoryExists: (path) => ts.sys.directoryExists(path),
    getDirectories: (path) => ts.sys.getDirectories(path),
  });
}, 60_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

/** The hover of the `occurrence`-th match of `needle` in the consumer: type line, documentation and tags. */
function hover(needle: string, occurrence = 0): { type: string; doc: string; example: string | undefined } {
  let at = -1;
  for (let i = 0; i <= occurrence; i++) at = CONSUMER.indexOf(needle, at + 1);
  if (at < 0) throw new Error(`${needle} is not in the consumer`);
  const info = service.getQuickInfoAtPosition(consumer, at);
  const example = info?.tags?.find((tag) => tag.name === 'example');
  return {
    type: ts.displayPartsToString(info?.displayParts),
    doc: ts.displayPartsToString(info?.documentation),
    example: example ? ts.displayPartsToString(example.text) : undefined,
  };
}

describe('hover over the emitted declarations', () => {
  it('the consumer type-checks against them', () => {
    expect(
      service.getSemanticDiagnostics(consumer).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    ).toEqual([]);
  });

  it.each([
    ["amount: '149.90'", /5 to 50,000/, "'149.90'"],
    ["reference_id: 'ORDER1001'", /1 to 100 characters of a-z, A-Z, 0-9/, "'ORDER1001'"],
    ['customer_name:', /not blank/, "'Aisyah Rahman'"],
    ['customer_phone:', /country code and no leading `\+`/, "'60123456789'"],
    ["payment_method: 'QR", /QR_PAYMENT/, "'QR_PAYMENT'"],
    ['currency:', /MYR/, "'MYR'"],
    ['callback_url:', /https:\/\//, "'https://shop.example/webhooks/myr'"],
    ['redirect_url:', /https:\/\//, "'https://shop.example/orders/ORDER1001'"],
    ['metadata: {}', /never echoed in callbacks/i, "{ cart: 'C-77' }"],
    ['provider_channel_id', /group A or group B/, "'MB2U0227'"],
  ])('payment params: %s shows its rule and an example', (needle, rule, example) => {
    const shown = hover(needle);
    expect(shown.doc).toMatch(rule);
    expect(shown.example).toBe(example);
  });

  it.each([
    ["amount: '250.00'", /50\.00 to 50,000\.00/, "'250.00'"],
    ["reference_id: 'PAYOUT1'", /1 to 100 characters/, "'PAYOUT7781'"],
    ['bank_code:', /INVALID_BANK_CODE/, "'PBBEMYKL'"],
    ['account_number:', /masked/, "'5140123456789'"],
    ['account_name:', /holder's name/, "'Tan Wei Ming'"],
    ["method: 'BANK'", /only method for MYR/, "'BANK'"],
  ])('withdrawal params: %s shows its rule and an example', (needle, rule, example) => {
    const shown = hover(needle);
    expect(shown.doc).toMatch(rule);
    expect(shown.example).toBe(example);
  });

  it("statuses are unions of the spec's values, and a withdrawal result says what is always present", () => {
    expect(hover('status, withdrawalAmount').type).toContain('"PROCESSING" | "SUCCESS" | "FAILED"');
    expect(hover('status;\n').type).toContain('"PENDING" | "PROCESSING" | "SUCCESS"');
    expect(hover('status;\n').doc).toMatch(/Always present/);
    const amount = hover('amount;\ndeclare const s');
    expect(amount.type).toMatch(/amount: number$/);
    expect(amount.doc).toMatch(/Always present/);
  });
});
