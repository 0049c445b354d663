/** Your code under test: the checkout that starts a payment and the order book it fills. */
import type { MyrGateway } from 'myr-gateway';

/** Paid orders, by reference. */
export const paidOrders = new Set<string>();

/** Starts a QR payment for an order and returns the URL to send the customer to. */
export async function checkout(gateway: MyrGateway, orderId: string, total: string): Promise<string> {
  const payment = await gateway.payments.create({
    amount: total,
    reference_id: orderId,
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
    payment_method: 'QR_PAYMENT',
  });
  return payment.customer_redirect_url;
}
