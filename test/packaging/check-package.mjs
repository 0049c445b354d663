// Checks the package the way a merchant meets it: packed, checked by publint and
// @arethetypeswrong/cli, installed into an empty project, and imported from ESM and CJS.
// Run with `npm run check:package` after `npm run build`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const node = process.execPath;
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
const bin = (name) => join(root, 'node_modules', '.bin', name);

const work = mkdtempSync(join(tmpdir(), 'myr-gateway-pack-'));
try {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  console.log(`packed ${packed[0].filename}: ${files.length} files, ${packed[0].size} bytes`);
  for (const forbidden of ['src/', 'test/', '.ci/', 'node_modules/']) {
    if (files.some((f) => f.startsWith(forbidden))) throw new Error(`the tarball contains ${forbidden}`);
  }

  console.log(run(bin('publint'), ['run', tarball, '--strict'], root));
  // attw: every entry point must resolve for node10, node16 (CJS and ESM) and bundlers.
  // node10 cannot see subpath exports at all; that is expected for an exports-only package.
  console.log(run(bin('attw'), [tarball, '--profile', 'node16', '--format', 'table-flipped'], root));

  const app = join(work, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'merchant-app', private: true, version: '1.0.0' }));
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarball, 'msw@^3'], app);

  writeFileSync(
    join(app, 'esm.mjs'),
    `import { MyrGateway, MyrGatewayError } from 'myr-gateway';
import { WebhookVerifier, WebhookVerificationError } from 'myr-gateway/webhooks';
import { createMockGateway } from 'myr-gateway/testing';
// Installed without ioredis or redis: the subpath must load on the client object alone.
import { RedisTokenStore, RedisWebhookStore, RedisStoreError } from 'myr-gateway/redis';
if (typeof RedisTokenStore !== 'function' || typeof RedisWebhookStore !== 'function') throw new Error('missing redis export');
if (!(new RedisStoreError('x', 'timeout') instanceof MyrGatewayError)) throw new Error('redis error outside the error tree');
if (typeof MyrGateway !== 'function' || typeof WebhookVerifier !== 'function' || typeof createMockGateway !== 'function') throw new Error('missing export');
if (!(new WebhookVerificationError('malformed', 'x') instanceof MyrGatewayError)) throw new Error('error tree broken');
const mock = createMockGateway();
mock.listen();
const gateway = new MyrGateway({ baseUrl: mock.baseUrl, merchantId: mock.merchant.merchantId, apiKey: mock.merchant.apiKey });
const payment = await gateway.payments.create({ amount: 10, reference_id: 'PACK1', customer_name: 'A', customer_phone: '60123', payment_method: 'QR_PAYMENT' });
mock.close();
console.log('esm ok', payment.payment_id);
`,
  );
  writeFileSync(
    join(app, 'cjs.cjs'),
    `const { MyrGateway, MyrGatewayError } = require('myr-gateway');
const { WebhookVerifier } = require('myr-gateway/webhooks');
const { RedisWebhookStore } = require('myr-gateway/redis');
if (typeof RedisWebhookStore !== 'function') throw new Error('missing redis export (CJS)');
if (typeof MyrGateway !== 'function' || typeof WebhookVerifier !== 'function') throw new Error('missing export');
try { new MyrGateway({ baseUrl: 'http://example.com', merchantId: 'm', apiKey: 'k' }); throw new Error('accepted http'); }
catch (e) { if (!(e instanceof MyrGatewayError)) throw e; }
console.log('cjs ok');
`,
  );
  console.log(run(node, ['esm.mjs'], app).trim());
  console.log(run(node, ['cjs.cjs'], app).trim());
  const installed = JSON.parse(readFileSync(join(app, 'node_modules', 'myr-gateway', 'package.json'), 'utf8'));
  console.log(`installed myr-gateway@${installed.version} into an empty project: ESM and CJS imports work`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
