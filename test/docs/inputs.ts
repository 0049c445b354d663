/**
 * The values test/docs/run-snippets.test.ts gives the names a snippet declares (`declare const
 * gateway: MyrGateway;`, `declare function onEvent(…)`), chosen by name and declared type:
 * the scene's client and mock, signed callbacks, recorders for the merchant's own code.
 */
import express from 'express';
import Fastify from 'fastify';
import { signCallback, WebhookVerifier } from '../../src/webhooks/index.js';
import { ORDER_TOTAL, SHOP, type Scene } from './scene.js';
import type { DeclaredInput } from './snippet-module.js';

const order = (reference: unknown) => ({ id: `order-${String(reference)}`, total: ORDER_TOTAL });

const lowerCase = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/** The value for one declared input, or throws: a snippet with an input nobody provides is a failure, not a skip. */
export async function inputFor({ name, type }: DeclaredInput, scene: Scene): Promise<unknown> {
  switch (name) {
    case 'gateway':
      return scene.gateway;
    case 'mock':
      return scene.mock;
    case 'config':
      return { baseUrl: scene.mock.baseUrl, merchantId: scene.merchantId, apiKey: SHOP.apiKey };
    case 'baseUrl':
      return scene.mock.baseUrl;
    case 'merchantId':
      return scene.merchantId;
    case 'apiKey':
      return SHOP.apiKey;
    case 'params':
      return type.includes('Withdrawal')
        ? { amount: 250, reference_id: 'PAYOUT7781', bank_code: 'PBBEMYKL', account_number: '5140123456789', account_name: 'Tan Wei Ming' }
        : { amount: ORDER_TOTAL, reference_id: 'ORDER1001', customer_name: 'Aisyah Rahman', customer_phone: '60123456789', payment_method: 'QR_PAYMENT' };
    case 'app':
      return type.includes('Fastify') ? Fastify() : express();
    case 'orders':
      return scene.recorderObject('orders', { get: order, byReference: order });
    case 'res':
    case 'metrics':
    case 'log':
      return scene.recorderObject(name);
    case 'body':
    case 'rawBody':
      return (await scene.signed()).rawBody;
    case 'headers':
      return lowerCase((await scene.signed()).headers);
    case 'req':
      return { headers: lowerCase((await scene.signed()).headers) };
    case 'event': {
      const { rawBody, headers } = await signCallback(SHOP.apiKey, {
        payment_id: 'WD_DOCS1', reference_id: 'PAYOUT7781', amount: 250, status: 'SUCCESS', transaction_type: 'WITHDRAWAL', bank_code: 'PBBEMYKL', account_number: '5140123456789',
      });
      return new WebhookVerifier({ apiKey: SHOP.apiKey }).verify({ body: rawBody, headers });
    }
    case 'myOtherHandlers':
      return [];
    case 'webhookUrl':
      return scene.webhookUrl;
    case 'fields':
      return { payment_id: 'PAY_1', reference_id: 'ORDER1', amount: ORDER_TOTAL, status: 'SUCCESS' };
    default:
      if (type === 'function') return scene.recorder(name);
      throw new Error(`no fixture gives \`${name}: ${type}\`: add one to test/docs/inputs.ts or to the snippet's entry in test/docs/promises.ts`);
  }
}
