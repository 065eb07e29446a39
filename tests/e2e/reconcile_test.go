package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/internal/postgres"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/workflows"
)

// findings reconciles a project and returns what it found of one kind
// (its prefix: "refund-", "payout-").
func findings(t *testing.T, e *service.Service, projectID, kind string) []service.Finding {
	t.Helper()
	found, err := e.Chains().Reconcile(context.Background(), service.ReconcileOptions{ProjectID: projectID})
	if err != nil {
		t.Fatal(err)
	}
	var out []service.Finding
	for _, f := range found {
		if strings.HasPrefix(f.Kind, kind) {
			out = append(out, f)
		}
	}
	return out
}

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
	ts, e, keys := sandboxAPI(t, apiOptions{})
	pk := keys
	ctx := context.Background()

	// The database restored behind Temporal: two sessions it lost, one
	// paid.
	lostOpen := openSession(t, ts.URL, pk, "3", "usdc-devnet")
	lostPaid := openSession(t, ts.URL, pk, "5", "usdc-devnet")
	payToken(t, 3, str(lostPaid["depositAddress"]), units("5000000"))
	waitSession(t, ts.URL, str(lostPaid["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	waitStarted(t, str(lostOpen["id"]))
	forget(t, str(lostOpen["id"]))
	forget(t, str(lostPaid["id"]))

	// Temporal restored behind the database: an open session's workflow
	// and a confirming transaction's (a payer's claim's) are gone.
	orphan := openSession(t, ts.URL, pk, "2", "usdc-devnet")
	waitStarted(t, str(orphan["id"]))
	if err := temporal.TerminateWorkflow(ctx, workflows.CheckoutSessionWorkflowID(str(orphan["id"])), "", "restore test"); err != nil {
		t.Fatal(err)
	}
	confirming := openSession(t, ts.URL, pk, "4", "usdc-devnet")
	hash := claimInOneBlock(t, ts.URL, confirming, 4, units("4000000"))
	tx := waitTx(t, ts.URL, pk, hash, "confirmed")
	if err := temporal.TerminateWorkflow(ctx, workflows.TransactionWorkflowID(1337, hash.Hex()), "", "restore test"); err != nil {
		t.Fatal(err)
	}

	found, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: keys.id})
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

	repaired, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: keys.id, Repair: true})
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
	paid := get(t, ts.URL, "/api/v1/projects/"+pk.id+"/checkout-sessions/"+str(lostPaid["id"]), pk.key).data()
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

	testwait.Until(t, 30*time.Second, func() (bool, string) {
		again, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: keys.id})
		if err != nil {
			t.Fatal(err)
		}
		return len(again) == 0, fmt.Sprintf("findings after the repair: %+v", again)
	})
}

// The database restored behind the chain has its deposit counter set
// back: the next session would get an address already paid to.
// Reconciliation finds the indexes in use — a session recorded again from
// its workflow, and past it an address paid on chain whose session both
// stores lost — and moves the counter past them, so the next session's
// address is a fresh one.
func TestReconcileMovesADepositCounterRestoredBehind(t *testing.T) {
	ts, e, p := projectAPI(t, apiOptions{})
	pk := projectKeys{p.Project.ID, p.SandboxKey}
	ctx := context.Background()

	kept := openSession(t, ts.URL, pk, "1", "usdc-devnet") // index 0
	lost := openSession(t, ts.URL, pk, "2", "usdc-devnet") // index 1
	gone := openSession(t, ts.URL, pk, "3", "usdc-devnet") // index 2
	payToken(t, 3, str(lost["depositAddress"]), units("2000000"))
	waitSession(t, ts.URL, str(lost["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	waitStarted(t, str(gone["id"]))
	// The backup was taken after the first session was opened: the
	// others are gone from the records, the third from Temporal too, and
	// then its address was paid (a late payer): only the chain knows it.
	forget(t, str(lost["id"]))
	forget(t, str(gone["id"]))
	id := workflows.CheckoutSessionWorkflowID(str(gone["id"]))
	if _, err := temporal.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: stack.Server.Namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id}}); err != nil {
		t.Fatal(err)
	}
	waitDeleted(t, id)
	if _, err := chain.WaitMined(ctx, payToken(t, 3, str(gone["depositAddress"]), units("3000000"))); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE project_deposit_keys SET next_index = 1 WHERE project_id = $1 AND NOT is_live`, pk.id); err != nil {
		t.Fatal(err)
	}

	found, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: pk.id})
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

	repaired, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: pk.id, Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range repaired {
		if !f.Repaired {
			t.Fatalf("not repaired: %+v", f)
		}
	}
	next := openSession(t, ts.URL, pk, "4", "usdc-devnet")
	_, xpub := walletOf(t, pk.id, false)
	key, err := keys.ParseKey(xpub)
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
	if again, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: pk.id}); err != nil || len(again) != 0 {
		t.Fatalf("findings after the repair: %+v, %v", again, err)
	}
}

// waitDeleted waits until a deleted workflow is gone from the server and
// from its visibility records (deletion runs in the background).
func waitDeleted(t *testing.T, workflowID string) {
	t.Helper()
	ctx := context.Background()
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		_, err := temporal.DescribeWorkflowExecution(ctx, workflowID, "")
		listed, lerr := temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = '" + workflowID + "'"})
		return err != nil && lerr == nil && len(listed.GetExecutions()) == 0,
			fmt.Sprintf("workflow %s not deleted: describe %v, listed %d (%v)", workflowID, err, len(listed.GetExecutions()), lerr)
	})
}

// pgTool runs a PostgreSQL client tool.
func pgTool(t *testing.T, name string, args ...string) {
	t.Helper()
	bin, err := postgres.Tool(name)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// The engine's database backed up with pg_dump and restored with
// pg_restore behind Temporal, as docs/operations.md says: the worker
// stopped, the dump restored, the worker started, then admin reconcile
// --repair and a rescan from the backup's block. The sessions opened
// after the backup are recorded again from their workflows (their plans
// as archived stand-ins), the deposit counter is moved past them, the
// rescan has the paid one's workflow record its transaction again and
// counts nothing twice, and a second reconciliation finds nothing.
func TestEngineDatabaseRestoredFromABackup(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	pk := keys
	ctx := context.Background()

	before := openSession(t, ts.URL, pk, "5", "usdc-devnet")
	payToken(t, 3, str(before["depositAddress"]), units("5000000"))
	waitSession(t, ts.URL, str(before["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	dump := filepath.Join(t.TempDir(), "engine.dump")
	backupBlock, err := chain.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pgTool(t, "pg_dump", "--format=custom", "--file="+dump, dbURL)

	paid := openSession(t, ts.URL, pk, "2", "usdc-devnet")
	hash := payToken(t, 3, str(paid["depositAddress"]), units("2000000"))
	waitSession(t, ts.URL, str(paid["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	open := openSession(t, ts.URL, pk, "3", "usdc-devnet")
	waitStarted(t, str(open["id"]))

	stack.Worker.Stop()
	pgTool(t, "pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction", "--dbname="+dbURL, dump)
	if err := stack.StartWorker(); err != nil {
		t.Fatal(err)
	}
	if r := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(paid["token"]), ""); r.Status != 404 {
		t.Fatalf("the restore kept a session opened after the backup: %s", r.Raw)
	}

	repaired, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: pk.id, Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{str(paid["id"]): service.FindingWorkflowWithoutRecord,
		str(open["id"]): service.FindingWorkflowWithoutRecord, pk.id: service.FindingDepositIndexBehind} {
		if got := kinds(repaired, id); !slices.Equal(got, []string{want}) {
			t.Fatalf("findings on %s = %v, want %s; all: %+v", id, got, want, repaired)
		}
	}
	for _, f := range repaired {
		if !f.Repaired {
			t.Fatalf("not repaired: %+v", f)
		}
	}
	if s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(open["token"]), "").data(); s["status"] != "open" {
		t.Fatalf("the open session recorded again = %v", s)
	}
	// Their plans, made after the backup, were lost too: each is recorded
	// again as an archived stand-in at the session's amount.
	lostPlan := get(t, ts.URL, "/api/v1/projects/"+pk.id+"/checkout-sessions/"+str(paid["id"]), pk.key).data()["paymentPlanId"]
	plan := get(t, ts.URL, "/api/v1/projects/"+pk.id+"/payment-plans/"+str(lostPlan), pk.key).data()
	if plan["status"] != "archived" || plan["amountUsd"] != "2.00" || !strings.Contains(str(plan["title"]), "after a restore") {
		t.Fatalf("the paid session's lost plan, recorded again = %v", plan)
	}
	// A rescan from the backup's block (the runbook's last step) finds the
	// transfers again and counts none twice: the paid session's workflow,
	// which followed its payment itself, looks at it once more and records
	// it again.
	head, err := chain.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Chains().Rescan(ctx, "devnet", backupBlock, head); err != nil {
		t.Fatal(err)
	}
	tx := waitTx(t, ts.URL, pk, hash, "finalized")
	if tx["checkoutSessionId"] != paid["id"] || tx["amountBaseUnits"] != "2000000" {
		t.Fatalf("the paid session's transaction recorded again = %v", tx)
	}
	// The session's record follows its transaction's: the workflow
	// records the transaction, then settles the session on the news.
	s := waitSession(t, ts.URL, str(paid["token"]), "paid again", func(s map[string]any) bool { return s["amountPaidUsd"] == "2.00" })
	if s["status"] != "completed" || s["exception"] != nil {
		t.Fatalf("the paid session recorded again = %v", s)
	}
	recordHistory(t, workflows.CheckoutSessionWorkflowID(str(paid["id"])), "checkout_session_transfer_recorded_again")
	next := openSession(t, ts.URL, pk, "1", "usdc-devnet")
	for _, cs := range []map[string]any{before, paid, open} {
		if next["depositAddress"] == cs["depositAddress"] {
			t.Fatalf("a session after the restore got the address of %s", cs["id"])
		}
	}
	waitStarted(t, str(next["id"]))
	if again, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: pk.id}); err != nil || len(again) != 0 {
		t.Fatalf("findings after the repair: %+v, %v", again, err)
	}
}
