// Runs against a running paymentsd (PAYMENTSD_URL, PAYMENTSD_API_KEY,
// PAYMENTSD_PROJECT): tests/tsclient starts one and runs this.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConnectError, Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { apiKeyInterceptor, createPaymentsClient } from "@paymentsd/client";
import { PaymentsService } from "@paymentsd/client/gen";

const baseUrl = process.env.PAYMENTSD_URL;
const apiKey = process.env.PAYMENTSD_API_KEY;
const projectId = process.env.PAYMENTSD_PROJECT;
const skip = !baseUrl && "PAYMENTSD_URL is not set: tests/tsclient sets it";

test("a plan, a session opened for it, read back by the merchant and by its token", { skip }, async () => {
  const { payments, checkout } = createPaymentsClient({ baseUrl, apiKey });
  const { paymentPlan } = await payments.createPaymentPlan({ projectId, title: "TypeScript plan", amountUsd: "12.34" });
  assert.equal(paymentPlan.title, "TypeScript plan");
  assert.equal(paymentPlan.amountUsd, "12.34");

  const { checkoutSession: created } = await checkout.createCheckoutSession({
    paymentPlanId: paymentPlan.id,
    metadataJson: JSON.stringify({ orderId: "ts-1", items: [1, 2] }),
  });
  assert.equal(created.status, "open");
  assert.ok(created.token, "a session created by its merchant's server carries its token");

  const { checkoutSession: merchant } = await payments.getProjectCheckoutSession({ projectId, sessionId: created.id });
  assert.equal(merchant.amountUsd, "12.34");
  assert.deepEqual(JSON.parse(merchant.metadataJson), { orderId: "ts-1", items: [1, 2] });

  const publicClient = createPaymentsClient({ baseUrl });
  const { checkoutSession: byToken } = await publicClient.checkout.getCheckoutSession({ token: created.token });
  assert.equal(byToken.id, created.id);
  assert.ok(byToken.paymentOptions.length > 0, "the hosted page's options are there");

  await assert.rejects(publicClient.payments.getProject({ projectId }), (err) => {
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.Unauthenticated);
    return true;
  });
});

test("the descriptors alone (@paymentsd/client/gen) on a transport of one's own", { skip }, async () => {
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    useBinaryFormat: true,
    interceptors: [apiKeyInterceptor(apiKey)],
  });
  const { project } = await createClient(PaymentsService, transport).getProject({ projectId });
  assert.equal(project.id, projectId);
});
