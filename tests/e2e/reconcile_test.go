package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

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
