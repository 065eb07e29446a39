package e2e

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/workflows"
	"go.temporal.io/api/workflowservice/v1"
)

// openSession creates a plan accepting assets and a session for it, and
// returns the session's data.
func openSession(t *testing.T, base string, p projectKeys, amountUSD string, assets ...string) map[string]any {
	t.Helper()
	policies := []any{}
	for _, a := range assets {
		policies = append(policies, map[string]any{"policyType": "asset_definition", "assetDefinitionId": a})
	}
	plan := post(t, base, "/api/v1/projects/"+p.id+"/payment-plans", p.key, map[string]any{
		"title": "Order", "amountUsd": amountUSD, "acceptedAssetPolicies": policies})
	mustStatus(t, plan, http.StatusCreated)
	r := post(t, base, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan.data()["id"]})
	mustStatus(t, r, http.StatusCreated)
	return r.data()
}

type projectKeys struct{ id, key string }

// waitSession polls the public session until ok says so.
func waitSession(t *testing.T, base, token string, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	return waitData(t, base, "/api/v1/checkout/sessions/"+token, "", "session never became "+what, ok)
}

// waitData polls GET path, with key, until ok says its data is as wanted;
// a test that waits in vain fails saying never.
func waitData(t *testing.T, base, path, key, never string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var r response
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		r = get(t, base, path, key)
		return ok(r.data()), fmt.Sprintf("%s: %s", never, r.Raw)
	})
	return r.data()
}

func option(t *testing.T, cs map[string]any, asset string) map[string]any {
	t.Helper()
	for _, o := range cs["paymentOptions"].([]any) {
		if o.(map[string]any)["assetDefinitionId"] == asset {
			return o.(map[string]any)
		}
	}
	t.Fatalf("no %s option in %v", asset, cs["paymentOptions"])
	return nil
}

func units(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return n
}

func payToken(t *testing.T, from int, to string, amount *big.Int) common.Hash {
	t.Helper()
	h, err := chain.TransferToken(context.Background(), chain.Accounts[from], common.HexToAddress(to), amount)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// payInOneBlock pays with the interval miner paused (until the test ends,
// or resumes it) and mines exactly the block that holds the payment, which
// then stays at one confirmation until the test mines more.
func payInOneBlock(t *testing.T, from int, to string, amount *big.Int) (common.Hash, *types.Receipt) {
	t.Helper()
	chain.Pause()
	t.Cleanup(chain.Resume)
	hash := payToken(t, from, to, amount)
	receipt, err := chain.Mine(context.Background(), hash)
	if err != nil {
		t.Fatal(err)
	}
	return hash, receipt
}

// claimInOneBlock has the payer submit a token payment's hash to the
// session before sending it (a claim: the session's workflow starts the
// transaction's), then mines it alone in a block and pauses the chain.
func claimInOneBlock(t *testing.T, base string, cs map[string]any, from int, amount *big.Int) common.Hash {
	t.Helper()
	ctx := context.Background()
	chain.Pause()
	t.Cleanup(chain.Resume)
	signed, err := chain.SignTransact(ctx, chain.Accounts[from], chain.Token, nil,
		usdcABI.PackTransfer(common.HexToAddress(str(cs["depositAddress"])), amount))
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, submit(t, base, cs, signed.Hash()), http.StatusCreated)
	if err := chain.SendSigned(ctx, signed); err != nil {
		t.Fatal(err)
	}
	if _, err := chain.Mine(ctx, signed.Hash()); err != nil {
		t.Fatal(err)
	}
	return signed.Hash()
}

func statuses(tx map[string]any) []string {
	var out []string
	for _, h := range tx["statusHistory"].([]any) {
		out = append(out, h.(map[string]any)["status"].(string))
	}
	return out
}

func TestPayInDevToken(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "12.50", "usdc-devnet")
	opt := option(t, cs, "usdc-devnet")
	if opt["amountBaseUnits"] != "12500000" || opt["paymentUri"] == "" {
		t.Fatalf("option = %v", opt)
	}
	hash := payToken(t, 0, str(cs["depositAddress"]), units("12500000"))

	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "12.50" || done["exception"] != nil || done["completedAt"] == nil {
		t.Fatalf("completed session = %v", done)
	}
	txs := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/transactions", keys.key)
	if len(txs.list()) != 1 {
		t.Fatalf("transactions = %s", txs.Raw)
	}
	tx := txs.list()[0].(map[string]any)
	if tx["txHash"] != hash.Hex() || tx["status"] != "finalized" || tx["amountUsd"] != "12.50" || tx["amount"] != "12.5" ||
		tx["fromAddress"] != chain.Accounts[0].Address.Hex() || tx["checkoutSessionId"] != cs["id"] || tx["symbol"] != "USDC" {
		t.Fatalf("transaction = %v", tx)
	}
	if got := statuses(tx); len(got) != 2 || got[0] != "confirmed" || got[1] != "finalized" {
		t.Fatalf("status history = %v", got)
	}
	if tx["confirmations"].(float64) < 3 || tx["finalizedAt"] == nil || tx["blockNumber"] == nil {
		t.Fatalf("confirmations = %v", tx)
	}
	var events int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE object_id = $1`, tx["id"]).Scan(&events); err != nil || events != 2 {
		t.Fatalf("events for the transaction = %d (%v), want 2", events, err)
	}
	// One workflow per payment: the session's followed its payment to
	// finalized itself. An operator finds it in the Temporal UI by its
	// search attributes.
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		q := fmt.Sprintf("CheckoutSessionId = '%s' AND ProjectId = '%s' AND IsLive = false", cs["id"], keys.id)
		runs, err := temporal.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		paid, err := temporal.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: q + " AND PaymentStatus = 'completed' AND WorkflowType = 'CheckoutSession'"})
		if err != nil {
			t.Fatal(err)
		}
		return len(runs.Executions) == 1 && len(paid.Executions) == 1,
			fmt.Sprintf("workflows by search attributes: %d (the completed session's: %d), want 1 (1)", len(runs.Executions), len(paid.Executions))
	})
	recordHistory(t, "checkout-session/"+str(cs["id"]), "checkout_session_paid")
}

func TestPayInNativeCoinAtFeedRate(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "30", "eth-devnet")
	opt := option(t, cs, "eth-devnet")
	// 30 USD at the dev feed's 3000 USD/ETH is 0.01 ETH.
	if opt["amount"] != "0.01" || opt["amountBaseUnits"] != "10000000000000000" {
		t.Fatalf("option = %v", opt)
	}
	if _, err := chain.TransferNative(context.Background(), chain.Accounts[1], common.HexToAddress(str(cs["depositAddress"])), units("10000000000000000")); err != nil {
		t.Fatal(err)
	}
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "30.00" {
		t.Fatalf("session = %v", done)
	}
}

func TestUnderpayThenTopUp(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "20", "usdc-devnet")
	payToken(t, 2, str(cs["depositAddress"]), units("15000000"))
	under := waitSession(t, ts.URL, str(cs["token"]), "underpaid", func(s map[string]any) bool { return s["exception"] == "underpaid" })
	if under["status"] != "processing" || under["amountPaidUsd"] != "15.00" {
		t.Fatalf("underpaid session = %v", under)
	}
	payToken(t, 2, str(cs["depositAddress"]), units("5000000"))
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "20.00" || done["exception"] != nil || len(done["transactions"].([]any)) != 2 {
		t.Fatalf("topped-up session = %v", done)
	}
}

func TestOverpay(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "10", "usdc-devnet")
	payToken(t, 3, str(cs["depositAddress"]), units("15000000"))
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["exception"] != "overpaid" || done["amountPaidUsd"] != "15.00" {
		t.Fatalf("overpaid session = %v", done)
	}
}

func TestPaidAfterExpiryInsideLateWindow(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{lifetime: 2 * time.Second})
	cs := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	waitSession(t, ts.URL, str(cs["token"]), "expired", func(s map[string]any) bool { return s["status"] == "expired" })
	payToken(t, 0, str(cs["depositAddress"]), units("5000000"))
	late := waitSession(t, ts.URL, str(cs["token"]), "paid late", func(s map[string]any) bool { return s["amountPaidUsd"] == "5.00" })
	if late["status"] != "expired" || late["exception"] != "paid_late" {
		t.Fatalf("late session = %v", late)
	}
}

func TestSubmittedRevertedTransferFails(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "7", "usdc-devnet")
	// More than the account holds: the transfer reverts on-chain.
	hash, err := chain.TransferTokenUnchecked(context.Background(), chain.Accounts[4], common.HexToAddress(str(cs["depositAddress"])), units("5000000000000"))
	if err != nil {
		t.Fatal(err)
	}
	r := post(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"])+"/payments", "", map[string]any{"network": "devnet", "txHash": hash.Hex()})
	if r.Status != http.StatusCreated && r.Status != http.StatusAccepted {
		t.Fatalf("submit = %s", r.Raw)
	}
	var txs response
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		txs = get(t, ts.URL, "/api/v1/projects/"+keys.id+"/transactions?status=failed", keys.key)
		return len(txs.list()) == 1, fmt.Sprintf("no failed transaction: %s", txs.Raw)
	})
	tx := txs.list()[0].(map[string]any)
	if tx["failureReason"] != "reverted" || tx["txHash"] != hash.Hex() {
		t.Fatalf("failed transaction = %v", tx)
	}
	if got := statuses(tx); len(got) != 2 || got[0] != "pending" || got[1] != "failed" {
		t.Fatalf("status history = %v", got)
	}
	s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"]), "")
	if s.data()["status"] == "completed" || s.data()["amountPaidUsd"] != "0.00" {
		t.Fatalf("a reverted payment counted: %s", s.Raw)
	}

	bad := post(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"])+"/payments", "", map[string]any{"network": "mars", "txHash": "0x12"})
	if bad.Status != 422 || len(bad.detailFields()) != 2 {
		t.Fatalf("bad submission = %s", bad.Raw)
	}
}

// waitTx polls the project's transactions until the one with hash is in
// status, and returns it.
func waitTx(t *testing.T, base string, p projectKeys, hash common.Hash, status string) map[string]any {
	t.Helper()
	var found map[string]any
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		txs := get(t, base, "/api/v1/projects/"+p.id+"/transactions", p.key)
		for _, it := range txs.list() {
			if tx := it.(map[string]any); tx["txHash"] == hash.Hex() && tx["status"] == status {
				found = tx
				return true, ""
			}
		}
		return false, fmt.Sprintf("transaction %s never became %s: %s", hash.Hex(), status, txs.Raw)
	})
	return found
}

// A reorg that drops the payment's block sends the transaction back to
// pending; re-included in the new branch it is confirmed again, then
// finalized, and the session completes once.
func TestReorgSendsPaymentBackToPending(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "9", "usdc-devnet")
	ctx := context.Background()

	hash, receipt := payInOneBlock(t, 1, str(cs["depositAddress"]), units("9000000"))
	confirmed := waitTx(t, ts.URL, keys, hash, "confirmed")
	if confirmed["blockHash"] != receipt.BlockHash.Hex() {
		t.Fatalf("confirmed in %v, mined in %s", confirmed["blockHash"], receipt.BlockHash.Hex())
	}
	block, err := chain.Client().HeaderByNumber(ctx, receipt.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	// Drop the block: the payment goes back to the pool and is mined again
	// on the new branch, in a block with another hash.
	if err := chain.Fork(block.ParentHash); err != nil {
		t.Fatal(err)
	}
	chain.Commit()
	chain.Commit()
	chain.Resume()

	final := waitTx(t, ts.URL, keys, hash, "finalized")
	if got := statuses(final); len(got) != 4 || got[0] != "confirmed" || got[1] != "pending" || got[2] != "confirmed" || got[3] != "finalized" {
		t.Fatalf("status history = %v", got)
	}
	if final["blockHash"] == receipt.BlockHash.Hex() {
		t.Fatal("the finalized transaction still names the dropped block")
	}
	var reorged int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE object_id = $1 AND type = 'transaction.reorged'`, final["id"]).Scan(&reorged); err != nil || reorged != 1 {
		t.Fatalf("transaction.reorged events = %d (%v)", reorged, err)
	}
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "9.00" || len(done["transactions"].([]any)) != 1 {
		t.Fatalf("session = %v", done)
	}
}

// The worker stopped in the middle of a confirmation wait and started again:
// the payment completes exactly once.
func TestWorkerRestartDuringConfirmationWait(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "11", "usdc-devnet")

	hash, _ := payInOneBlock(t, 2, str(cs["depositAddress"]), units("11000000"))
	waitTx(t, ts.URL, keys, hash, "confirmed")

	stack.Worker.Stop()
	for range 5 {
		chain.Commit() // the confirmations arrive while no worker runs
	}
	if err := stack.StartWorker(); err != nil {
		t.Fatal(err)
	}
	chain.Resume()

	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "11.00" || len(done["transactions"].([]any)) != 1 {
		t.Fatalf("session = %v", done)
	}
	tx := waitTx(t, ts.URL, keys, hash, "finalized")
	if got := statuses(tx); len(got) != 2 || got[0] != "confirmed" || got[1] != "finalized" {
		t.Fatalf("status history = %v", got)
	}
	var rows, events int
	ctx := context.Background()
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM transactions WHERE tx_hash = lower($1)`, hash.Hex()).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("transaction rows = %d (%v)", rows, err)
	}
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE object_id = $1`, tx["id"]).Scan(&events); err != nil || events != 2 {
		t.Fatalf("events = %d (%v)", events, err)
	}
}

// A payment seen before expiresAt that is still confirming then completes
// the session when it reaches completeOn: a session never ends expired
// with the amount due received in time.
func TestPaymentConfirmingAtExpiryCompletesTheSession(t *testing.T) {
	// Long enough that the payment's block is before the expiry on a
	// loaded machine too (the block's time decides).
	ts, _, keys := sandboxAPI(t, apiOptions{lifetime: 15 * time.Second})
	cs := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	// One block for the payment, then nothing until the expiry has passed.
	payInOneBlock(t, 0, str(cs["depositAddress"]), units("5000000"))
	waitSession(t, ts.URL, str(cs["token"]), "processing", func(s map[string]any) bool { return s["status"] == "processing" })
	expires, err := time.Parse(time.RFC3339, str(cs["expiresAt"]))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(expires) + time.Second) // not a wait: the expiry has to pass
	if s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"]), "").data(); s["status"] != "processing" {
		t.Fatalf("at expiry, with its payment confirming, the session is %v", s["status"])
	}
	chain.Resume()
	done := waitSession(t, ts.URL, str(cs["token"]), "completed or expired", func(s map[string]any) bool {
		return s["status"] == "completed" || s["status"] == "expired"
	})
	if done["status"] != "completed" || done["amountPaidUsd"] != "5.00" || done["exception"] != nil {
		t.Fatalf("session paid before expiry, final after = %v", done)
	}
}

// A session completed on its payment's first confirmation (completeOn
// confirmed) whose payment a reorg then takes away raises the
// payment_reversed exception, with its event, instead of staying silently
// completed.
func TestCompletedSessionWhosePaymentIsReorgedOutRaisesAnException(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	ctx := context.Background()
	if _, err := st.Pool().Exec(ctx, `UPDATE projects SET complete_on = 'confirmed' WHERE id = $1`, p.Project.ID); err != nil {
		t.Fatal(err)
	}
	keys := projectKeys{p.Project.ID, p.SandboxKey}
	cs := openSession(t, ts.URL, keys, "7", "usdc-devnet")
	_, receipt := payInOneBlock(t, 1, str(cs["depositAddress"]), units("7000000"))
	waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	block, err := chain.Client().HeaderByNumber(ctx, receipt.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	if err := chain.Fork(block.ParentHash); err != nil {
		t.Fatal(err)
	}
	chain.Rollback() // the payment is not mined again
	chain.Commit()
	chain.Commit()
	reversed := waitSession(t, ts.URL, str(cs["token"]), "payment_reversed", func(s map[string]any) bool { return s["exception"] == "payment_reversed" })
	if reversed["status"] != "completed" || reversed["amountPaidUsd"] != "0.00" {
		t.Fatalf("session after its payment was reorged out = %v", reversed)
	}
	var events int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE object_id = $1 AND type = 'checkout.session.exception'`,
		cs["id"]).Scan(&events); err != nil || events != 1 {
		t.Fatalf("checkout.session.exception events = %d (%v)", events, err)
	}
}

// A node that stops answering for 20 s while a payment confirms (every
// RPC call the engine makes refused, as a stopped node's are) delays the
// payment and loses nothing: once the node is back the transaction
// finalizes and the session completes. The outage shows in the metrics.
func TestNodeOutageWhileConfirmingLosesNothing(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "11", "usdc-devnet")
	hash, _ := payInOneBlock(t, 2, str(cs["depositAddress"]), units("11000000"))
	waitTx(t, ts.URL, keys, hash, "confirmed")
	if err := node.Down(); err != nil {
		t.Fatal(err)
	}
	outageEnds := time.Now().Add(20 * time.Second)
	chain.Resume()
	testwait.Until(t, 15*time.Second, func() (bool, string) {
		m := metricsText(t, ts.URL)
		return strings.Contains(m, `paymentsd_network_up{network="devnet"} 0`) &&
				strings.Contains(m, `paymentsd_rpc_requests_total{network="devnet",outcome="error"}`),
			fmt.Sprintf("during the outage, /metrics shows:\n%s", grepLines(m, "devnet"))
	})
	time.Sleep(time.Until(outageEnds)) // not a wait: the outage lasts its 20 s
	if err := node.Up(); err != nil {
		t.Fatal(err)
	}
	final := waitTx(t, ts.URL, keys, hash, "finalized")
	// The gauge turns back with the next call that reaches the node, which
	// the transaction's own look need not have been.
	testwait.Until(t, 15*time.Second, func() (bool, string) {
		m := metricsText(t, ts.URL)
		return strings.Contains(m, `paymentsd_network_up{network="devnet"} 1`),
			fmt.Sprintf("after the outage, /metrics shows:\n%s", grepLines(m, "devnet"))
	})
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if final["status"] != "finalized" || done["amountPaidUsd"] != "11.00" {
		t.Fatalf("after the outage: transaction %v, session %v", final["status"], done)
	}
}

// A transaction's workflow (here one a payer's claim started) that ends
// abnormally while its payment confirms (an operator terminates it)
// strands nothing: an operator resumes it from its records (paymentsd
// admin resume-transaction), and the session, which notices its child's
// end, starts it again too. The payment finalizes once, the session
// completes.
func TestATerminatedTransactionWorkflowIsResumed(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "7", "usdc-devnet")
	hash := claimInOneBlock(t, ts.URL, cs, 0, units("7000000"))
	waitTx(t, ts.URL, keys, hash, "confirmed")
	ctx := context.Background()
	id := workflows.TransactionWorkflowID(1337, hash.Hex())
	if err := temporal.TerminateWorkflow(ctx, id, "", "operator test"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Payments().ResumeTransaction(ctx, 1337, "0x"+strings.Repeat("ab", 32)); err == nil {
		t.Fatal("resumed a transaction that is not recorded")
	}
	resumed, err := e.Payments().ResumeTransaction(ctx, 1337, hash.Hex())
	if err != nil || resumed != id {
		t.Fatalf("resume = %q, %v", resumed, err)
	}
	chain.Resume()
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	tx := waitTx(t, ts.URL, keys, hash, "finalized")
	if done["amountPaidUsd"] != "7.00" || strings.Join(statuses(tx), ",") != "pending,confirmed,finalized" {
		t.Fatalf("session %v, transaction %v", done, statuses(tx))
	}

	// Terminated again after it ended: the session starts it again by
	// itself (after 10 s), and the new run changes nothing.
	cs2 := openSession(t, ts.URL, keys, "2", "usdc-devnet")
	hash2 := claimInOneBlock(t, ts.URL, cs2, 1, units("2000000"))
	waitTx(t, ts.URL, keys, hash2, "confirmed")
	if err := temporal.TerminateWorkflow(ctx, workflows.TransactionWorkflowID(1337, hash2.Hex()), "", "operator test"); err != nil {
		t.Fatal(err)
	}
	chain.Resume()
	done2 := waitSession(t, ts.URL, str(cs2["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	tx2 := waitTx(t, ts.URL, keys, hash2, "finalized")
	if done2["amountPaidUsd"] != "2.00" || strings.Join(statuses(tx2), ",") != "pending,confirmed,finalized" {
		t.Fatalf("session %v, transaction %v", done2, statuses(tx2))
	}
	var events int
	// The claim's, then confirmed and finalized: once each.
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE object_id = $1`, tx2["id"]).Scan(&events); err != nil || events != 3 {
		t.Fatalf("events = %d (%v)", events, err)
	}
}

// metricsText reads the API's /metrics.
func metricsText(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
