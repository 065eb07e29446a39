// Runs against a running paymentsd (PAYMENTSD_URL, PAYMENTSD_API_KEY,
// PAYMENTSD_PROJECT): tests/tsclient starts one and runs this.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConnectError, Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { apiKeyInterceptor, createPaymentsClient, ValidationErrorSchema } from "@paymentsd/client";
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

test("refunds: a session that received nothing final has nothing to refund, and the field is named", { skip }, async () => {
  const { payments, checkout } = createPaymentsClient({ baseUrl, apiKey });
  const { paymentPlan } = await payments.createPaymentPlan({ projectId, title: "Refunded plan", amountUsd: "3.00" });
  const { checkoutSession } = await checkout.createCheckoutSession({ paymentPlanId: paymentPlan.id });
  await assert.rejects(payments.createRefund({ projectId, checkoutSessionId: checkoutSession.id, amount: "1" }), (err) => {
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.InvalidArgument);
    assert.match(err.rawMessage, /Validation failed/);
    return true;
  });
  const { refunds, pagination } = await payments.listRefunds({ projectId, checkoutSessionId: checkoutSession.id });
  assert.deepEqual(refunds, []);
  assert.equal(pagination.total, 0);
});

test("payouts: a batch with a bad line is refused whole, every line named; a good one is read back and canceled", { skip }, async () => {
  const { payments } = createPaymentsClient({ baseUrl, apiKey });
  const fromAddress = "0x00000000000000000000000000000000000000aa";
  const payee = "0x000000000000000000000000000000000000bEEF";
  await assert.rejects(
    payments.createPayoutBatch({
      projectId,
      fromAddress,
      payouts: [
        { address: payee, asset: "usdc-devnet", amount: "1" },
        { address: payee, asset: "usdc-devnet", amount: "1.1234567" },
      ],
    }),
    (err) => {
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.InvalidArgument);
      const [detail] = err.findDetails(ValidationErrorSchema);
      assert.deepEqual(detail.violations.map((v) => v.field), ["payouts[1].amount"]);
      return true;
    },
  );

  const { payoutBatch: created } = await payments.createPayoutBatch({
    projectId,
    fromAddress,
    reference: "TypeScript",
    payouts: [{ address: payee, asset: "usdc-devnet", amount: "2.5", reference: "ts-1" }],
  });
  assert.equal(created.status, "awaiting_approval");
  assert.equal(created.payoutCount, 1);

  const { payoutBatch } = await payments.getPayoutBatch({ projectId, batchId: created.id });
  assert.equal(payoutBatch.reference, "TypeScript");
  assert.equal(payoutBatch.report.statuses.awaiting_approval, 1);
  assert.equal(payoutBatch.report.totals[0].toSign, "2.5");
  assert.equal(payoutBatch.payouts.length, 1);
  assert.equal(payoutBatch.payouts[0].amount, "2.5");
  assert.equal(payoutBatch.payouts[0].reference, "ts-1");
  assert.equal(payoutBatch.payouts[0].transfer, undefined, "no prepared transfer before approval");

  const { payout } = await payments.getPayout({ projectId, payoutId: payoutBatch.payouts[0].id });
  assert.equal(payout.batchId, created.id);

  const { payoutBatches } = await payments.listPayoutBatches({ projectId, query: { status: "awaiting_approval" } });
  assert.ok(payoutBatches.some((b) => b.id === created.id));

  const { payoutBatch: canceled } = await payments.cancelPayoutBatch({ projectId, batchId: created.id });
  assert.equal(canceled.status, "canceled");
  assert.equal(canceled.payouts[0].status, "canceled");
});
