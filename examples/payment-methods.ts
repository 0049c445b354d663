/**
 * Taking a payment with each method, and where to send the customer (the spec's table):
 *
 * | payment_method | send the customer to   | what they see                       |
 * |----------------|------------------------|-------------------------------------|
 * | QR_PAYMENT     | `payment_url`          | the gateway's page with the QR code |
 * | BANK_TRANSFER  | `gateway.redirect_url` | their bank's approval page          |
 * | MOBILE_WALLET  | `gateway.redirect_url` | the wallet's page                   |
 *
 * `customer_redirect_url` is that URL, computed by the SDK. Amounts are numbers or decimal
 * strings ('120.50'), checked exactly: 5 to 50,000 MYR, at most 2 decimals.
 */
import type { MyrGateway, PaymentCreated, ProviderChannelId } from 'myr-gateway';

/** Who pays and for which order; yours come from your checkout. */
export interface Checkout {
  orderId: string;
  total: string | number;
  customerName: string;
  customerPhone: string;
}

/** QR: the customer scans the code on the payment page with any banking or wallet app. */
export function payByQr(gateway: MyrGateway, checkout: Checkout): Promise<PaymentCreated> {
  return gateway.payments.create({
    amount: checkout.total,
    reference_id: checkout.orderId,
    customer_name: checkout.customerName,
    customer_phone: checkout.customerPhone,
    payment_method: 'QR_PAYMENT',
  });
}

/**
 * Online banking: the customer chose their bank at checkout; its code goes in
 * `metadata.provider_channel_id` (one of PROVIDER_CHANNELS_GROUP_A or _B, e.g. MB2U0227; check
 * a code from a form with isProviderChannelId).
 */
export function payByBankTransfer(
  gateway: MyrGateway,
  checkout: Checkout,
  bank: ProviderChannelId,
): Promise<PaymentCreated> {
  return gateway.payments.create({
    amount: checkout.total,
    reference_id: checkout.orderId,
    customer_name: checkout.customerName,
    customer_phone: checkout.customerPhone,
    payment_method: 'BANK_TRANSFER',
    metadata: { provider_channel_id: bank },
    redirect_url: `https://shop.example/orders/${checkout.orderId}`, // where the bank sends them back
  });
}

/** E-wallet: the customer approves the payment in their wallet. */
export function payByWallet(gateway: MyrGateway, checkout: Checkout): Promise<PaymentCreated> {
  return gateway.payments.create({
    amount: checkout.total,
    reference_id: checkout.orderId,
    customer_name: checkout.customerName,
    customer_phone: checkout.customerPhone,
    payment_method: 'MOBILE_WALLET',
  });
}
