// The TypeScript client of paymentsd's Connect API.
//
//   const { payments, checkout } = createPaymentsClient({ baseUrl: "https://payments.example.com", apiKey });
//   const { paymentPlan } = await payments.createPaymentPlan({ projectId, title: "T-shirt", amountUsd: "25.00" });
//
// `payments` is the merchant's service (it needs the API key); `checkout`
// is the customer's (opening a session, reading it by its token). With an
// API key, checkout.createCheckoutSession is a server-side creation,
// counted per key and limited to the key's plans.
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { CheckoutService, PaymentsService } from "./gen/paymentsd/v1/payments_pb.js";

export * from "./gen/paymentsd/v1/payments_pb.js";

export interface PaymentsClientOptions {
  /** The API's base URL, without /api/v1. */
  baseUrl: string;
  /** The project's API key (svc_live_… or svc_test_…); omit for a public client. */
  apiKey?: string;
  /**
   * A transport of your own (e.g. one with HTTP/2 or your own agent): baseUrl and apiKey are then
   * unused, so give it `apiKeyInterceptor(apiKey)` among its interceptors.
   */
  transport?: Transport;
}

export interface PaymentsClient {
  payments: Client<typeof PaymentsService>;
  checkout: Client<typeof CheckoutService>;
}

/** An interceptor that sends the API key (`Authorization: Bearer …`) on every call. */
export function apiKeyInterceptor(apiKey: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("Authorization", `Bearer ${apiKey}`);
    return next(req);
  };
}

/** Returns the two services' clients, the API key set on every call. */
export function createPaymentsClient(opts: PaymentsClientOptions): PaymentsClient {
  const interceptors = opts.apiKey ? [apiKeyInterceptor(opts.apiKey)] : [];
  const transport =
    opts.transport ??
    createConnectTransport({ baseUrl: opts.baseUrl.replace(/\/+$/, ""), httpVersion: "1.1", interceptors });
  return { payments: createClient(PaymentsService, transport), checkout: createClient(CheckoutService, transport) };
}
