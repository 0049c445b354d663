/**
 * Next.js App Router route handler: app/api/checkout/route.ts. Creates the payment for an
 * order and answers with the URL to send the customer to.
 *
 * `new MyrGateway()` at module scope reads MYR_GATEWAY_BASE_URL, MYR_GATEWAY_MERCHANT_ID and
 * MYR_GATEWAY_API_KEY. `next build` imports this module without them: construction never throws
 * for a missing one; the first call does, with a ConfigurationError that names it.
 */
import { MyrGateway, MyrGatewayError } from 'myr-gateway';

const gateway = new MyrGateway();

export async function POST(request: Request): Promise<Response> {
  const order = (await request.json()) as { id: string; total: string; name: string; phone: string };
  try {
    const payment = await gateway.payments.create({
      amount: order.total, // a decimal string such as '149.90', checked exactly
      reference_id: order.id,
      customer_name: order.name,
      customer_phone: order.phone,
      payment_method: 'QR_PAYMENT',
    });
    return Response.json({ redirectTo: payment.customer_redirect_url });
  } catch (error) {
    if (!(error instanceof MyrGatewayError)) throw error;
    // Typed and secret-free: safe to log; answer the shop's own front end with the code only.
    console.error(error.toJSON());
    return Response.json(
      { error: error.code, field: error.field },
      { status: error.code === 'INVALID_CONFIGURATION' ? 500 : 400 },
    );
  }
}
