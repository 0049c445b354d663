/**
 * `npx myr-gateway sandbox` end to end in a real browser: the real bin on 127.0.0.1, a
 * merchant's Express app verifying callbacks with the sandbox's api key, the SDK client
 * creating payments, and headless Chromium pressing the buttons a customer and an
 * operator press. Set SANDBOX_SCREENSHOTS=dir to keep screenshots of the pages.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import jsQRModule from 'jsqr';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MyrGateway, type PaymentCreateParams } from '../../src/index.js';
import {
  buildCli,
  launchChromium,
  runCliToExit,
  startCli,
  startMerchant,
  until,
  type CliSandbox,
  type MerchantApp,
} from './sandbox-helpers.js';

let cli: string;
let sandbox: CliSandbox;
let merchant: MerchantApp;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let gateway: MyrGateway;
let page: Page;
let serial = 0;
// jsqr is CommonJS whose exports are the function, with itself as `.default`: the types see the latter.
const jsQR = jsQRModule.default;
const reference = (prefix: string) => `${prefix}${Date.now()}${++serial}`;

/** A payment through the client: a fresh reference, a Malaysian phone, what the test varies. */
function createPayment(prefix: string, fields: Omit<PaymentCreateParams, 'reference_id' | 'customer_phone'>) {
  return gateway.payments.create({
    reference_id: reference(prefix),
    customer_phone: '60123456789',
    ...fields,
  } as PaymentCreateParams);
}
const shots = process.env.SANDBOX_SCREENSHOTS;

beforeAll(async () => {
  cli = await buildCli();
  merchant = await startMerchant(() => sandbox.apiKey);
  sandbox = await startCli(cli, ['--port', '0', '--callback-url', merchant.url]);
  gateway = new MyrGateway({
    baseUrl: sandbox.baseUrl,
    merchantId: sandbox.merchantId,
    apiKey: sandbox.apiKey,
    allowInsecureLoopback: true,
  });
  browser = await launchChromium();
}, 60_000);

// A page per test: a hosted page follows redirect_url on its own after an outcome, and that late
// navigation must not land in the next test's page.goto.
beforeEach(async () => {
  page = await browser.context.newPage();
});
afterEach(async () => {
  await page.close();
});

afterAll(async () => {
  await browser?.close();
  await merchant?.close();
  if (sandbox && sandbox.child.exitCode === null) sandbox.child.kill('SIGTERM');
});

const eventsFor = (paymentId: string) => merchant.events.filter((e) => e.signed.payment_id === paymentId);

/** The dashboard, reloaded until it shows `count` delivered callbacks of the payment. */
async function deliveredRow(paymentId: string, count = 1) {
  await page.goto(`${sandbox.origin}/`);
  const rows = page.locator(`tr[data-payment-id="${paymentId}"][data-state="delivered"]`);
  await expect
    .poll(async () => {
      const seen = await rows.count();
      if (seen < count) await page.reload();
      return seen;
    }, POLL)
    .toBe(count);
  return rows;
}

// Generous: this file shares 2 cores with the rest of the suite; the assertions are about what arrives, not when.
const POLL = { timeout: 15_000, interval: 50 };

describe('the real bin', () => {
  it('refuses a key that is not a test key with exit code 2; takes one from MYR_SANDBOX_API_KEY and prints neither it nor its signing key', async () => {
    const refused = await runCliToExit(cli, ['--port', '0', '--api-key', 'sk_live_4f1b2c9d']);
    expect(refused.code).toBe(2);
    expect(refused.output).toContain('must start with sk_sandbox_ or sk_test_');
    expect(refused.output).not.toContain('Press Ctrl-C');

    const own = await startCli(cli, ['--port', '0'], { MYR_SANDBOX_API_KEY: 'sk_test_merchant_owned_7731' });
    try {
      expect(own.apiKey).toBe('sk_test_…7731');
      expect(own.signingKey).toBeUndefined();
      expect(own.output()).not.toContain('sk_test_merchant_owned_7731');
      // The key works: the sandbox signs in with the key it was given.
      const client = new MyrGateway({
        baseUrl: own.baseUrl,
        merchantId: own.merchantId,
        apiKey: 'sk_test_merchant_owned_7731',
        allowInsecureLoopback: true,
      });
      expect(
        (
          await client.payments.create({
            amount: 10,
            reference_id: reference('ENVKEY'),
            customer_name: 'Nur',
            customer_phone: '60123456789',
            payment_method: 'QR_PAYMENT',
          })
        ).status,
      ).toBe('PROCESSING');
    } finally {
      own.child.kill('SIGTERM');
      await own.exited;
    }
  });

  it('prints the base URL, sandbox credentials and the signing key, and has no msw in its import graph', () => {
    expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(sandbox.output()).toContain('sandbox credentials');
    expect(sandbox.output()).toContain('local development only');
    expect(sandbox.signingKey).toMatch(/^[0-9a-f]{64}$/);
    const code = readFileSync(cli, 'utf8');
    expect(code.startsWith('#!/usr/bin/env node')).toBe(true);
    expect(code).not.toMatch(/from\s*["']msw|import\(\s*["']msw|require\(\s*["']msw/);
  });
});

/** Hours and minutes of `iso` in Malaysia (UTC+8 all year, no daylight saving), and its day and month. */
function malaysiaClock(iso: string) {
  const shifted = new Date(Date.parse(iso) + 8 * 3_600_000);
  return {
    time: shifted.toISOString().slice(11, 19),
    day: `${shifted.getUTCDate()} ${shifted.toLocaleString('en', { month: 'short', timeZone: 'UTC' })}`,
  };
}

describe("the dashboard at a laptop's and a phone's width", () => {
  it.each([1440, 390])(
    "at %i px: nothing scrolls sideways, key columns and the merchant's answer show, RM amounts, Malaysia time, the body opens full width",
    async (width) => {
      const created = await createPayment('WIDE', {
        amount: 149.9,
        customer_name: 'Aisyah Rahman',
        payment_method: 'MOBILE_WALLET',
      });
      await page.goto(created.customer_redirect_url);
      await page.click('button[data-outcome="pay"]');
      await until(() => eventsFor(created.payment_id).length === 1, 'the SUCCESS callback');
      await page.setViewportSize({ width, height: 900 });
      const delivery = (await deliveredRow(created.payment_id)).first();

      const overflow = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        cards: Math.max(...[...document.querySelectorAll('.card')].map((card) => card.scrollWidth - card.clientWidth)),
      }));
      expect(overflow).toEqual({ page: 0, cards: 0 });

      /** The cell is rendered and lies wholly inside the window's width. */
      const onScreen = async (cell: ReturnType<Page['locator']>) => {
        const box = await cell.boundingBox();
        return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= width;
      };
      const payment = page.locator(`tr[data-payment="${created.payment_id}"]`);
      expect(await payment.locator('[data-label="Amount"]').textContent()).toBe('RM 149.90');
      for (const label of ['Payment', 'Amount', 'Status'])
        expect(await onScreen(payment.locator(`[data-label="${label}"]`)), label).toBe(true);
      const answer = delivery.locator('[data-label="Merchant\'s answer"]');
      expect(await answer.textContent()).toMatch(/HTTP 200 in \d+ ms/);
      expect(await answer.textContent()).toContain('"outcome"');
      for (const label of ['Started', 'Payment', 'Status', "Merchant's answer"])
        expect(await onScreen(delivery.locator(`[data-label="${label}"]`)), label).toBe(true);

      // Malaysia time on screen, the ISO value the service sent on hover.
      const createdAt = payment.locator('[data-label="Created"] time');
      const iso = (await gateway.payments.retrieve(created.payment_id)).created_at as string;
      expect(await createdAt.getAttribute('title')).toBe(iso);
      const clock = malaysiaClock(iso);
      expect(await createdAt.textContent()).toContain(clock.time);
      expect(await createdAt.textContent()).toContain(clock.day);
      expect(await page.locator('th', { hasText: 'MYT' }).count()).toBeGreaterThan(0);

      // The body opens in a row of its own, as wide as the table.
      const webhookId = await delivery.getAttribute('data-webhook');
      await delivery.locator('button.body-toggle').click();
      const body = page.locator(`tr.delivery-body[data-body-of="${webhookId}"]`);
      await body.waitFor();
      expect(await body.textContent()).toContain('"signature"');
      const [rowBox, tableBox] = [await body.boundingBox(), await body.locator('xpath=ancestor::table').boundingBox()];
      expect(rowBox?.width).toBeGreaterThanOrEqual((tableBox?.width ?? Infinity) - 1);
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
      ).toBe(0);
      if (shots) await page.screenshot({ path: join(shots, `dashboard-${width}.png`), fullPage: true });
    },
  );
});

describe('hosted pages, callbacks and the dashboard', () => {
  it('QR payment: the page shows a QR code of qr_data_string; Pay delivers a verified SUCCESS callback and follows redirect_url', async () => {
    const created = await createPayment('QR', {
      amount: 120.5,
      customer_name: '<img src=x onerror="window.pwned=1"> Aisyah',
      payment_method: 'QR_PAYMENT',
      redirect_url: 'https://shop.example/thanks',
    });
    expect(created.customer_redirect_url.startsWith(`${sandbox.origin}/pay/`)).toBe(true);
    expect(created.gateway.qr_data_string).toMatch(/^000201010212.*5303458.*5406120\.50.*6304[0-9A-F]{4}$/);

    await page.goto(created.customer_redirect_url);
    await expect.poll(() => page.locator('#qr svg path').count(), POLL).toBeGreaterThan(0);
    expect(await page.locator('#qr-payload').textContent()).toBe(created.gateway.qr_data_string);
    // Scannable: the QR as Chromium drew it decodes back to qr_data_string.
    const png = PNG.sync.read(await page.locator('#qr svg').screenshot());
    expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(created.gateway.qr_data_string);
    expect(await page.locator('img').count()).toBe(0); // the hostile name is text, not markup
    if (shots) await page.screenshot({ path: join(shots, 'qr-page.png'), fullPage: true });

    // Playwright cannot fulfil the target of a redirect, so the shop itself is not served:
    // seeing the browser request redirect_url is the proof that the page followed it.
    const toShop = page.waitForRequest('https://shop.example/thanks');
    await page.click('button[data-outcome="pay"]');
    expect((await toShop).isNavigationRequest()).toBe(true);
    // That navigation fails (no network here) and ends on Chromium's error page: let it land
    // before this page is sent anywhere else.
    await page.waitForURL((url) => url.protocol === 'chrome-error:' || url.hostname === 'shop.example');
    await page.waitForLoadState();
    await until(() => eventsFor(created.payment_id).length === 1, 'the SUCCESS callback');
    const [event] = eventsFor(created.payment_id);
    expect(event?.signed).toMatchObject({ status: 'SUCCESS', amount: 120.5, reference_id: created.reference_id });
    expect((await gateway.payments.retrieve(created.payment_id)).status).toBe('SUCCESS');

    const rows = await deliveredRow(created.payment_id);
    expect(await rows.first().textContent()).toMatch(/HTTP 200 in \d+ ms/);
    expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
  });

  it('bank transfer: the bank page of the provider channel; Decline delivers a verified FAILED callback', async () => {
    const created = await createPayment('BANK', {
      amount: 75,
      customer_name: 'Tan Wei Ming',
      payment_method: 'BANK_TRANSFER',
      metadata: { provider_channel_id: 'MB2U0227' },
    });
    expect(created.customer_redirect_url).toBe(`${sandbox.origin}/bank/${created.payment_id}`);
    await page.goto(created.customer_redirect_url);
    expect(await page.locator('h1').textContent()).toContain('Maybank2u');
    await page.click('button[data-outcome="decline"]');
    expect(await page.locator('#payment-status').textContent()).toBe('FAILED');
    await until(() => eventsFor(created.payment_id).length === 1, 'the FAILED callback');
    expect(eventsFor(created.payment_id)[0]?.signed.status).toBe('FAILED');
    await deliveredRow(created.payment_id);
  });

  it('resend from the dashboard: a second signed callback arrives, verified, and the handler fulfils once', async () => {
    const created = await createPayment('WALLET', {
      amount: 30,
      customer_name: 'Nur',
      payment_method: 'MOBILE_WALLET',
    });
    await page.goto(created.customer_redirect_url);
    await page.click('button[data-outcome="pay"]');
    await until(() => eventsFor(created.payment_id).length === 1, 'the first callback');
    const postsBefore = merchant.posts;

    await deliveredRow(created.payment_id);
    await page.click(`form[action="/actions/resend"] button[data-id="${created.payment_id}"]`);
    await page.waitForURL(`${sandbox.origin}/`);
    // The resend is delivered after the form's redirect: read the dashboard until it shows both.
    const rows = await deliveredRow(created.payment_id, 2);
    expect(merchant.posts).toBe(postsBefore + 1);
    const webhookIds = await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.webhook));
    expect(new Set(webhookIds).size).toBe(2);
    // The merchant's handler saw one fulfilment; its middleware answered the resend as a duplicate.
    expect(eventsFor(created.payment_id)).toHaveLength(1);
    expect(await rows.first().textContent()).toContain('duplicate');
  });

  it('withdrawal: appears live on the open dashboard, account masked; Complete delivers a verified WITHDRAWAL callback', async () => {
    await page.goto(`${sandbox.origin}/`);
    await page.waitForFunction(() => document.body.dataset.live === 'connected');
    const created = await gateway.withdrawals.create({
      amount: 250,
      reference_id: reference('PAYOUT'),
      bank_code: 'PBBEMYKL',
      account_number: '5140123456789',
      account_name: 'Siti Binti Ahmad',
    });
    const id = created.payment_id as string;
    expect(id).toMatch(/^WD_/);
    const row = page.locator(`tr[data-withdrawal="${id}"]`);
    await row.waitFor(); // arrived by server-sent event, no reload
    expect(await row.textContent()).toContain('****6789');
    expect(await page.content()).not.toContain('5140123456789');

    await row.locator('button', { hasText: 'Complete' }).click();
    await until(() => eventsFor(id).length === 1, 'the withdrawal callback');
    const event = eventsFor(id)[0];
    expect(event?.transaction_type).toBe('WITHDRAWAL');
    expect(event?.signed.status).toBe('SUCCESS');
    expect(event?.transaction_type === 'WITHDRAWAL' ? event.unsigned.account_number : null).toBe('****6789');
    await deliveredRow(id);
    if (shots) await page.screenshot({ path: join(shots, 'dashboard.png'), fullPage: true });
  });

  it('stops cleanly on SIGTERM', async () => {
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exited).toBe(0);
    expect(sandbox.output()).toContain('SIGTERM: stopping the sandbox');
  });
});
