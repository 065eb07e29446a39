package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// sessionTransaction is the merchant's view of a session's one payment.
func sessionTransaction(t *testing.T, base string, keys projectKeys, sessionID string) map[string]any {
	t.Helper()
	var id string
	err := st.Pool().QueryRow(context.Background(), `SELECT id FROM transactions WHERE checkout_session_id = $1`, sessionID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return map[string]any{} // not recorded yet
	}
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, base, "/api/v1/projects/"+keys.id+"/transactions/"+id, keys.key)
	mustStatus(t, r, http.StatusOK)
	return r.data()
}

// waitTransaction polls a session's payment until ok says so.
func waitTransaction(t *testing.T, base string, keys projectKeys, sessionID, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var tx map[string]any
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		tx = sessionTransaction(t, base, keys, sessionID)
		return ok(tx), fmt.Sprintf("the payment never became %s: %v", what, tx)
	})
	return tx
}

// forkBelow reorgs the dev chain from the parent of the block that mined
// receipt's transaction, deeper than the network's finality (3 blocks):
// mined again unless dropped, and the new branch grows past the old head.
func forkBelow(t *testing.T, receipt *types.Receipt, dropped bool) {
	t.Helper()
	ctx := context.Background()
	block, err := chain.Client().HeaderByNumber(ctx, receipt.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	head, err := chain.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := chain.Fork(block.ParentHash); err != nil {
		t.Fatal(err)
	}
	if dropped {
		chain.Rollback()
	}
	for range head - block.Number.Uint64() + 3 {
		chain.Commit()
	}
}

// A finalized payment whose block a reorg deeper than finality takes away
// is never silent: the transaction becomes reversed, with its event; its
// session, whose workflow has long ended, keeps completed but flags
// payment_reversed with nothing paid, with its event; the metric counts it.
func TestAPaymentReorgedOutPastFinalityIsReversed(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{lifetime: 3 * time.Second})
	shortLateWindow(t, keys.id)
	cs := openSession(t, ts.URL, keys, "6", "usdc-devnet")
	id := str(cs["id"])
	_, receipt := payInOneBlock(t, 1, str(cs["depositAddress"]), units("6000000"))
	for range 4 {
		chain.Commit()
	}
	waitTransaction(t, ts.URL, keys, id, "finalized", func(tx map[string]any) bool { return tx["status"] == "finalized" })
	waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	waitWorkflowEnded(t, id)
	before := testutil.ToFloat64(observability.PaymentsReversed.WithLabelValues("devnet", "in"))

	forkBelow(t, receipt, true)
	tx := waitTransaction(t, ts.URL, keys, id, "reversed", func(tx map[string]any) bool { return tx["status"] == "reversed" })
	history := fmt.Sprint(tx["statusHistory"])
	if !strings.Contains(history, "left the canonical chain after it was final") {
		t.Fatalf("the reversal's reason is not in the history: %s", history)
	}
	s := waitSession(t, ts.URL, str(cs["token"]), "payment_reversed", func(s map[string]any) bool { return s["exception"] == "payment_reversed" })
	if s["status"] != "completed" || s["amountPaidUsd"] != "0.00" {
		t.Fatalf("the session after its finalized payment was reorged out = %v", s)
	}
	if got := eventTypes(t, str(tx["id"])); strings.Count(strings.Join(got, ","), "transaction.reversed") != 1 {
		t.Fatalf("the transaction's events = %v", got)
	}
	if got := eventTypes(t, id); got[len(got)-1] != "checkout.session.exception" {
		t.Fatalf("the session's events = %v", got)
	}
	if after := testutil.ToFloat64(observability.PaymentsReversed.WithLabelValues("devnet", "in")); after != before+1 {
		t.Fatalf("paymentsd_payments_reversed_total went from %v to %v", before, after)
	}
}

// A finalized payment reorged out past finality and mined again on the
// new branch returns to the normal path once: reversed, then confirmed
// and finalized again, the same record, each event once; its session's
// flag clears and it counts once.
func TestAPaymentMinedAgainAfterAReorgPastFinalityReturnsOnce(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "4", "usdc-devnet")
	id := str(cs["id"])
	_, receipt := payInOneBlock(t, 1, str(cs["depositAddress"]), units("4000000"))
	for range 4 {
		chain.Commit()
	}
	first := waitTransaction(t, ts.URL, keys, id, "finalized", func(tx map[string]any) bool { return tx["status"] == "finalized" })
	waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })

	forkBelow(t, receipt, false)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the new branch grows, so that the payment finalizes again
		for {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
				chain.Commit()
			}
		}
	}()
	tx := waitTransaction(t, ts.URL, keys, id, "reversed and back", func(tx map[string]any) bool {
		return tx["status"] == "finalized" && strings.Contains(fmt.Sprint(tx["statusHistory"]), "reversed")
	})
	if tx["id"] != first["id"] || tx["blockHash"] == first["blockHash"] {
		t.Fatalf("the payment mined again = %v (first %v)", tx, first)
	}
	var statuses []string
	for _, h := range tx["statusHistory"].([]any) {
		statuses = append(statuses, str(h.(map[string]any)["status"]))
	}
	if got := strings.Join(statuses, ","); got != "confirmed,finalized,reversed,confirmed,finalized" {
		t.Fatalf("status history = %s", got)
	}
	if got := eventTypes(t, str(tx["id"])); !slices.Equal(got, []string{"transaction.confirmed", "transaction.finalized",
		"transaction.reversed", "transaction.confirmed", "transaction.finalized"}) {
		t.Fatalf("the transaction's events = %v", got)
	}
	s := waitSession(t, ts.URL, str(cs["token"]), "paid again", func(s map[string]any) bool {
		return s["exception"] == nil && s["amountPaidUsd"] == "4.00"
	})
	if s["status"] != "completed" {
		t.Fatalf("the session = %v", s)
	}
	if got := strings.Join(eventTypes(t, id), ","); !strings.Contains(got, "checkout.session.exception") {
		t.Fatalf("the session's events never flagged the reversal: %s", got)
	}
}

// The reorg of a Bitcoin payment deeper than finality, with the payment
// double-spent on the longer branch: the payment finalized in the
// orphaned block is reversed, then fails naming the double-spend, and its
// completed session flags payment_reversed with nothing paid.
func TestABitcoinPaymentDoubleSpentInADeepReorgIsReversed(t *testing.T) {
	ctx := context.Background()
	keys, base := bitcoinProject(t, 0x44)
	node := stack.Bitcoin
	cs := openSession(t, base, keys, "5", devstack.BitcoinAsset)
	opt := option(t, cs, devstack.BitcoinAsset)
	addr, err := btcutil.DecodeAddress(str(opt["depositAddress"]), btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	sats, err := strconv.ParseInt(str(opt["amountBaseUnits"]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := node.Pay(ctx, addr, sats, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	paid, err := node.Mine(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	sessionTx(t, base, str(cs["token"]), hash.String(), "finalized")
	waitSession(t, base, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if _, err := node.Mine(ctx, 2); err != nil { // three blocks deep: past regtest's finality of one
		t.Fatal(err)
	}

	raw, err := node.Client.GetRawTransaction(hash)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Client.InvalidateBlock(paid[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Replace(ctx, raw.MsgTx(), []btcnode.Out{{To: node.Wallet(), Sats: 10_000}}, 50_000); err != nil {
		t.Fatalf("double-spend the payment: %v", err)
	}
	if _, err := node.Mine(ctx, 4); err != nil {
		t.Fatal(err)
	}
	sessionTx(t, base, str(cs["token"]), hash.String(), "failed")
	tx := sessionTransaction(t, base, keys, str(cs["id"]))
	if got := fmt.Sprint(tx["statusHistory"]); !strings.Contains(got, "reversed") || !strings.Contains(str(tx["failureReason"]), "replaced") &&
		!strings.Contains(str(tx["failureReason"]), "spent") {
		t.Fatalf("the double-spent payment = %v", tx)
	}
	s := waitSession(t, base, str(cs["token"]), "payment_reversed", func(s map[string]any) bool { return s["exception"] == "payment_reversed" })
	if s["status"] != "completed" || s["amountPaidUsd"] != "0.00" {
		t.Fatalf("the session after its finalized payment was double-spent = %v", s)
	}
}

// A refund finalized on chain whose block a reorg deeper than finality
// takes away is reversed, with its event: the customer was not paid. The
// merchant cancels it and may refund again; the session's books no
// longer count it as refunded.
func TestARefundReorgedOutPastFinalityIsReversed(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	proj := "/api/v1/projects/" + keys.id
	cs := openSession(t, ts.URL, keys, "3", "usdc-devnet")
	waitTx(t, ts.URL, keys, payToken(t, 1, str(cs["depositAddress"]), units("3000000")), "finalized")
	customer := common.HexToAddress("0xc0ffee00000000000000000000000000000000e8")
	created := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": cs["id"], "address": customer.Hex()})
	mustStatus(t, created, http.StatusCreated)
	id := str(created.data()["id"])
	approveRefund(t, e, keys.id, id)
	verifyRecipient(t, e, keys.id, chain.Accounts[5].Key) // the treasury, an account of this test's alone
	sent, receipt := payInOneBlock(t, 5, customer.Hex(), units("3000000"))
	mustStatus(t, post(t, ts.URL, proj+"/refunds/"+id+"/transaction", keys.key, map[string]any{"txHash": sent.Hex()}), http.StatusOK)
	for range 4 {
		chain.Commit()
	}
	waitRefund(t, ts.URL, keys, id, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	before := testutil.ToFloat64(observability.PaymentsReversed.WithLabelValues("devnet", "out"))

	forkBelow(t, receipt, true)
	r := waitRefund(t, ts.URL, keys, id, "reversed", func(r map[string]any) bool { return r["status"] == "reversed" })
	if !strings.Contains(str(r["failureReason"]), "left the canonical chain after it was final") {
		t.Fatalf("the reversed refund = %v", r)
	}
	if got := eventTypes(t, id); got[len(got)-1] != "refund.reversed" || strings.Count(strings.Join(got, ","), "refund.reversed") != 1 {
		t.Fatalf("the refund's events = %v", got)
	}
	if after := testutil.ToFloat64(observability.PaymentsReversed.WithLabelValues("devnet", "out")); after != before+1 {
		t.Fatalf("paymentsd_payments_reversed_total{direction=out} went from %v to %v", before, after)
	}
	books := get(t, ts.URL, proj+"/checkout-sessions/"+str(cs["id"]), keys.key).data()["refunds"].(map[string]any)
	if balance := books["assets"].([]any)[0].(map[string]any); books["status"] == "refunded" || balance["refunded"] != "0" {
		t.Fatalf("the session's books after the refund was reversed: %v", books)
	}
	mustStatus(t, post(t, ts.URL, proj+"/refunds/"+id+"/cancel", keys.key, map[string]any{}), http.StatusOK)
}
