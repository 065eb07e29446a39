package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/deposit"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/workflows"
)

// forget deletes a session and everything recorded of it from the
// database, as a restore from a backup taken before it was opened would.
func forget(t *testing.T, sessionID string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`DELETE FROM events WHERE object_id IN (SELECT id FROM transactions WHERE checkout_session_id = $1)`,
		`DELETE FROM transactions WHERE checkout_session_id = $1`,
		`DELETE FROM events WHERE object_id = $1`,
		`DELETE FROM checkout_sessions WHERE id = $1`,
	} {
		if _, err := st.Pool().Exec(ctx, q, sessionID); err != nil {
			t.Fatal(err)
		}
	}
}

// kinds lists the findings on one object.
func kinds(findings []service.Finding, objectID string) []string {
	var out []string
	for _, f := range findings {
		if f.ObjectID == objectID {
			out = append(out, f.Kind)
		}
	}
	return out
}

// After one store is restored behind the other, reconciliation finds what
// differs between the records and the workflows, changes nothing without
// --repair, repairs what it safely can with it, and finds nothing the
// second time: a session the database lost is recorded again from its
// workflow (with the state the workflow knows), an open session whose
// workflow Temporal lost gets one again, a transaction whose workflow
// Temporal lost is resumed and completes its session.
func TestReconcileAfterARestore(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	p := newProject(t, e)
	keys := projectKeys{p.Project.ID, p.SandboxKey}
	ctx := context.Background()

	// The database restored behind Temporal: two sessions it lost, one
	// paid.
	lostOpen := openSession(t, ts.URL, keys, "3", "usdc-devnet")
	lostPaid := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	payToken(t, 3, str(lostPaid["depositAddress"]), units("5000000"))
	waitSession(t, ts.URL, str(lostPaid["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	waitStarted(t, str(lostOpen["id"]))
	forget(t, str(lostOpen["id"]))
	forget(t, str(lostPaid["id"]))

	// Temporal restored behind the database: an open session's workflow
	// and a confirming transaction's are gone.
	orphan := openSession(t, ts.URL, keys, "2", "usdc-devnet")
	waitStarted(t, str(orphan["id"]))
	if err := temporal.TerminateWorkflow(ctx, workflows.CheckoutSessionWorkflowID(str(orphan["id"])), "", "restore test"); err != nil {
		t.Fatal(err)
	}
	confirming := openSession(t, ts.URL, keys, "4", "usdc-devnet")
	hash, _ := payInOneBlock(t, 4, str(confirming["depositAddress"]), units("4000000"))
	tx := waitTx(t, ts.URL, keys, hash, "confirmed")
	if err := temporal.TerminateWorkflow(ctx, workflows.TransactionWorkflowID(1337, hash.Hex()), "", "restore test"); err != nil {
		t.Fatal(err)
	}

	found, err := e.Reconcile(ctx, service.ReconcileOptions{ProjectID: p.Project.ID})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{str(lostOpen["id"]): service.FindingWorkflowWithoutRecord,
		str(lostPaid["id"]): service.FindingWorkflowWithoutRecord, str(orphan["id"]): service.FindingSessionWithoutWorkflow,
		str(tx["id"]): service.FindingTransactionWithoutWorkflow} {
		if got := kinds(found, id); !slices.Equal(got, []string{want}) {
			t.Fatalf("findings on %s = %v, want %s; all: %+v", id, got, want, found)
		}
	}
	for _, f := range found {
		if f.Repaired {
			t.Fatalf("a dry run repaired %+v", f)
		}
	}
	if r := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(lostOpen["token"]), ""); r.Status != 404 {
		t.Fatalf("a dry run recorded the lost session: %s", r.Raw)
	}

	repaired, err := e.Reconcile(ctx, service.ReconcileOptions{ProjectID: p.Project.ID, Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range repaired {
		if !f.Repaired {
			t.Fatalf("not repaired: %+v", f)
		}
	}
	chain.Resume()
	if s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(lostOpen["token"]), "").data(); s["status"] != "open" {
		t.Fatalf("the lost open session, recorded again = %v", s)
	}
	paid := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/checkout-sessions/"+str(lostPaid["id"]), keys.key).data()
	if paid["status"] != "completed" || paid["amountPaidUsd"] != "5.00" || paid["completedAt"] == nil {
		t.Fatalf("the lost paid session, recorded again from its workflow = %v", paid)
	}
	desc, err := temporal.DescribeWorkflowExecution(ctx, workflows.CheckoutSessionWorkflowID(str(orphan["id"])), "")
	if err != nil || desc.WorkflowExecutionInfo.GetStatus().String() != "Running" {
		t.Fatalf("the orphan session's workflow: %v, %v", desc, err)
	}
	done := waitSession(t, ts.URL, str(confirming["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "4.00" {
		t.Fatalf("the session of the resumed transaction = %v", done)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		again, err := e.Reconcile(ctx, service.ReconcileOptions{ProjectID: p.Project.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(again) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("findings after the repair: %+v", again)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The database restored behind the chain has its deposit counter set
// back: the next session would get an address already paid to.
// Reconciliation finds the indexes in use — a session recorded again from
// its workflow, and past it an address paid on chain whose session both
// stores lost — and moves the counter past them, so the next session's
// address is a fresh one.
func TestReconcileMovesADepositCounterRestoredBehind(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	p := newProject(t, e)
	keys := projectKeys{p.Project.ID, p.SandboxKey}
	ctx := context.Background()

	kept := openSession(t, ts.URL, keys, "1", "usdc-devnet") // index 0
	lost := openSession(t, ts.URL, keys, "2", "usdc-devnet") // index 1
	gone := openSession(t, ts.URL, keys, "3", "usdc-devnet") // index 2
	payToken(t, 3, str(lost["depositAddress"]), units("2000000"))
	payToken(t, 3, str(gone["depositAddress"]), units("3000000"))
	for _, cs := range []map[string]any{lost, gone} {
		waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	}
	// The backup was taken after the first session was opened: the
	// others are gone from the records, the third from Temporal too.
	forget(t, str(lost["id"]))
	forget(t, str(gone["id"]))
	if err := temporal.TerminateWorkflow(ctx, workflows.CheckoutSessionWorkflowID(str(gone["id"])), "", "restore test"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE project_deposit_keys SET next_index = 1 WHERE project_id = $1 AND NOT is_live`, keys.id); err != nil {
		t.Fatal(err)
	}

	found, err := e.Reconcile(ctx, service.ReconcileOptions{ProjectID: keys.id})
	if err != nil {
		t.Fatal(err)
	}
	var behind *service.Finding
	for i, f := range found {
		if f.Kind == service.FindingDepositIndexBehind {
			behind = &found[i]
		}
	}
	if behind == nil || behind.Repaired || !strings.Contains(behind.Detail, "index 2 is used on chain") {
		t.Fatalf("findings %+v; want the sandbox counter behind index 2, used on chain", found)
	}

	repaired, err := e.Reconcile(ctx, service.ReconcileOptions{ProjectID: keys.id, Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range repaired {
		if !f.Repaired {
			t.Fatalf("not repaired: %+v", f)
		}
	}
	next := openSession(t, ts.URL, keys, "4", "usdc-devnet")
	_, xpub := walletOf(t, keys.id, false)
	key, err := deposit.ParseKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	for i, cs := range []map[string]any{kept, lost, gone} {
		if str(next["depositAddress"]) == str(cs["depositAddress"]) {
			t.Fatalf("the next session got index %d's address again", i)
		}
	}
	if want, _ := key.DeriveAddress(3); str(next["depositAddress"]) != want.Hex() {
		t.Fatalf("the next session's address %s; want index 3's, %s", next["depositAddress"], want.Hex())
	}
	waitStarted(t, str(next["id"]))
	if again, err := e.Reconcile(ctx, service.ReconcileOptions{ProjectID: keys.id}); err != nil || len(again) != 0 {
		t.Fatalf("findings after the repair: %+v, %v", again, err)
	}
}
