package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/testwait"
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
	ts, e := newAPI(t, apiOptions{lifetime: 3 * time.Second})
	p := newProject(t, e)
	keys := projectKeys{p.Project.ID, p.SandboxKey}
	shortLateWindow(t, p.Project.ID)
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
	ts, e := newAPI(t, apiOptions{})
	p := newProject(t, e)
	keys := projectKeys{p.Project.ID, p.SandboxKey}
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
