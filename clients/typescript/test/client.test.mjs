// Runs against a running paymentsd (PAYMENTSD_URL, PAYMENTSD_API_KEY,
// PAYMENTSD_PROJECT): tests/tsclient starts one and runs this.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConnectError, Code } from "@connectrpc/connect";
import { createPaymentsClient } from "../dist/index.js";

const baseUrl = process.env.PAYMENTSD_URL;
const apiKey = process.env.PAYMENTSD_API_KEY;
const projectId = process.env.PAYMENTSD_PROJECT;

test("a plan, a session opened for it, read back by the merchant and by its token", { skip: !baseUrl && "PAYMENTSD_URL is not set: tests/tsclient sets it" }, async () => {
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
