/**
 * `npm run demo`: the whole flow of a shop on the MYR Payment Gateway, one step at a time:
 * one payment per method (paid, declined, expired), signed callbacks verified and fulfilled
 * once (a duplicate ignored, a forgery refused), a withdrawal and its callback, a lost
 * withdrawal answer recovered, a 429 waited out and the status query as the fallback.
 *
 * Where it runs:
 *   npm run demo                  the in-process mock: no account, no network (the default)
 *   npm run demo -- --sandbox     a local sandbox process (`npx myr-gateway sandbox`)
 *   MYR_GATEWAY_BASE_URL=… MYR_GATEWAY_MERCHANT_ID=… MYR_GATEWAY_API_KEY=… npm run demo
 *                                 your gateway; steps that need the mock's control are skipped
 *
 * Exit code: 0 when every step behaved, 1 when one did not, 2 when the demo could not start.
 */
import { MyrGatewayError, type MyrGateway } from 'myr-gateway';
import {
  mockGateway,
  remoteGateway,
  remoteSettingsFromEnv,
  SandboxUnavailableError,
  startSandboxProcess,
  type DemoGateway,
} from './demo/gateways.js';
import { startMerchant, type MerchantBackend } from './demo/merchant.js';
import { lostWithdrawalAnswer, statusFallback, withdrawal } from './demo/money.js';
import { bankDeclines, createPayments, customerPays, forgedCallback, paymentExpires } from './demo/payments.js';
import { failedChecks, say, step } from './demo/transcript.js';

const started = performance.now();

/** Picks the gateway: --sandbox, the three environment variables, or the in-process mock. */
async function openGateway(callbackUrl: string): Promise<DemoGateway> {
  if (process.argv.includes('--sandbox')) return startSandboxProcess(callbackUrl);
  const remote = remoteSettingsFromEnv(process.env);
  if (remote) return remoteGateway(remote, `the gateway at ${remote.baseUrl} (from MYR_GATEWAY_BASE_URL)`, false);
  return mockGateway(callbackUrl);
}

async function run(): Promise<number> {
  let gateway: DemoGateway | undefined;
  let merchant: MerchantBackend | undefined;
  console.log('myr-gateway demo: a shop takes payments and pays out, step by step');
  try {
    // The callback URL must exist before the gateway does (it is the merchant's default).
    step('The shop starts its backend: Express on 127.0.0.1 with the myr-gateway/webhooks middleware');
    const shop = await startMerchant(
      () => gateway?.apiKey ?? '',
      () => gateway?.client as MyrGateway,
    );
    merchant = shop;
    say(`callbacks to ${shop.callbackUrl}`);
    gateway = await openGateway(shop.callbackUrl);
    say(`gateway: ${gateway.description}`);

    const runId = String(Date.now());
    const payments = await createPayments(gateway, shop, runId);
    const genuine = await customerPays(gateway, shop, payments);
    await bankDeclines(gateway, shop, payments);
    await paymentExpires(gateway, shop, payments);
    await forgedCallback(shop, payments, genuine);
    await withdrawal(gateway, shop, runId);
    await lostWithdrawalAnswer(gateway, runId);
    await statusFallback(gateway, shop, runId);
  } catch (error) {
    if (error instanceof SandboxUnavailableError) {
      console.log(`\n--sandbox: ${error.message}`);
      return 2;
    }
    // No stack trace: the code and message say what went wrong.
    const what = error instanceof MyrGatewayError ? `${error.name} ${error.code}: ${error.message}` : String(error);
    console.log(`   ✗ unexpected error: ${what}`);
    return 1;
  } finally {
    await gateway?.close();
    await merchant?.close();
  }
  const ms = Math.round(performance.now() - started);
  if (failedChecks() > 0) {
    console.log(`\nDemo FAILED: ${failedChecks()} check(s) did not hold (${ms} ms).`);
    return 1;
  }
  console.log(`\nDemo finished in ${ms} ms: every step behaved as described.`);
  return 0;
}

process.exitCode = await run();
