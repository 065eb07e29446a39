package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/workflows"
)

// resolve posts a merchant's resolution of a session's exception.
func resolve(t *testing.T, base string, p projectKeys, sessionID, resolution string) response {
	t.Helper()
	return do(t, base, request{method: "POST", path: "/api/v1/projects/" + p.id + "/checkout-sessions/" + sessionID + "/resolve",
		key: p.key, body: map[string]any{"resolution": resolution}})
}

// auditActions lists a project's audit actions on one target, oldest first.
func auditActions(t *testing.T, base string, p projectKeys, targetID string) []string {
	t.Helper()
	r := get(t, base, "/api/v1/projects/"+p.id+"/audit-log?limit=100", p.key)
	var out []string
	for _, item := range r.list() {
		a := item.(map[string]any)
		if a["target"].(map[string]any)["id"] == targetID {
			out = append([]string{str(a["action"])}, out...)
		}
	}
	return out
}

// A merchant accepts an underpaid session as paid while it still waits for
// a top-up: it completes with what it received, with the events and audit
// entry of the change, and a second resolution is refused.
func TestAcceptAnUnderpayment(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "10", "usdc-devnet")
	id := str(cs["id"])
	// Refused before there is anything to resolve.
	if r := resolve(t, ts.URL, keys, id, "underpayment_accepted"); r.Status != http.StatusConflict {
		t.Fatalf("accepting an open session's underpayment = %s", r.Raw)
	}
	payToken(t, 1, str(cs["depositAddress"]), units("9700000")) // 0.30 kept by an exchange
	waitSession(t, ts.URL, str(cs["token"]), "underpaid", func(s map[string]any) bool { return s["exception"] == "underpaid" })
	if r := resolve(t, ts.URL, keys, id, "overpayment_settled"); r.Status != http.StatusConflict {
		t.Fatalf("settling an underpaid session's overpayment = %s", r.Raw)
	}

	r := resolve(t, ts.URL, keys, id, "underpayment_accepted")
	mustStatus(t, r, http.StatusOK)
	s := r.data()
	if s["status"] != "completed" || s["exception"] != nil || s["resolution"] != "underpayment_accepted" ||
		s["amountPaidUsd"] != "9.70" || s["completedAt"] == nil {
		t.Fatalf("accepted session = %s", r.Raw)
	}
	public := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"]), "").data()
	if public["status"] != "completed" || public["exception"] != nil {
		t.Fatalf("the payer's view = %v", public)
	}
	if got := strings.Join(eventTypes(t, id), ","); !strings.HasSuffix(got, "checkout.session.exception,checkout.session.completed,checkout.session.resolved") {
		t.Fatalf("session events = %s", got)
	}
	if got := auditActions(t, ts.URL, keys, id); len(got) != 1 || got[0] != "checkout_session.resolved" {
		t.Fatalf("audit entries = %v", got)
	}
	if again := resolve(t, ts.URL, keys, id, "underpayment_accepted"); again.Status != http.StatusConflict {
		t.Fatalf("a second acceptance = %s", again.Raw)
	}
	// The workflow settles around it: nothing flips back when the session
	// ends.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	desc, err := temporal.DescribeWorkflowExecution(ctx, workflows.CheckoutSessionWorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	if desc.WorkflowExecutionInfo.GetStatus().String() != "Running" {
		t.Fatalf("the session's workflow is %s; the test wants the running case", desc.WorkflowExecutionInfo.GetStatus())
	}
	recordHistory(t, workflows.CheckoutSessionWorkflowID(id), "checkout_session_resolved")
}

// Once a session's workflow has ended (expired underpaid, past its late
// payment window), its underpayment is still accepted, in the records.
func TestAcceptAnUnderpaymentAfterTheSessionEnded(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{lifetime: 4 * time.Second})
	shortLateWindow(t, keys.id)
	cs := openSession(t, ts.URL, keys, "8", "usdc-devnet")
	id := str(cs["id"])
	payToken(t, 2, str(cs["depositAddress"]), units("7500000"))
	waitSession(t, ts.URL, str(cs["token"]), "expired underpaid", func(s map[string]any) bool {
		return s["status"] == "expired" && s["exception"] == "underpaid"
	})
	waitWorkflowEnded(t, id)
	r := resolve(t, ts.URL, keys, id, "underpayment_accepted")
	mustStatus(t, r, http.StatusOK)
	if s := r.data(); s["status"] != "completed" || s["exception"] != nil || s["resolution"] != "underpayment_accepted" || s["amountPaidUsd"] != "7.50" {
		t.Fatalf("accepted session = %s", r.Raw)
	}
	if got := strings.Join(eventTypes(t, id), ","); !strings.HasSuffix(got, "checkout.session.exception,checkout.session.expired,checkout.session.completed,checkout.session.resolved") {
		t.Fatalf("session events = %s", got)
	}
	if again := resolve(t, ts.URL, keys, id, "underpayment_accepted"); again.Status != http.StatusConflict {
		t.Fatalf("a second acceptance = %s", again.Raw)
	}
}

// A merchant who refunded an overpayment marks it settled: the exception
// is cleared, the session stays completed.
func TestSettleAnOverpayment(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "10", "usdc-devnet")
	id := str(cs["id"])
	payToken(t, 3, str(cs["depositAddress"]), units("12000000"))
	waitSession(t, ts.URL, str(cs["token"]), "overpaid", func(s map[string]any) bool { return s["exception"] == "overpaid" })
	if r := resolve(t, ts.URL, keys, id, "underpayment_accepted"); r.Status != http.StatusConflict {
		t.Fatalf("accepting an overpaid session's underpayment = %s", r.Raw)
	}
	r := resolve(t, ts.URL, keys, id, "overpayment_settled")
	mustStatus(t, r, http.StatusOK)
	if s := r.data(); s["status"] != "completed" || s["exception"] != nil || s["resolution"] != "overpayment_settled" || s["amountPaidUsd"] != "12.00" {
		t.Fatalf("settled session = %s", r.Raw)
	}
	if got := strings.Join(eventTypes(t, id), ","); !strings.HasSuffix(got, "checkout.session.resolved") || strings.Count(got, "checkout.session.completed") != 1 {
		t.Fatalf("session events = %s", got)
	}
	bad := resolve(t, ts.URL, keys, id, "refunded")
	mustStatus(t, bad, http.StatusUnprocessableEntity)
	if !strings.Contains(string(bad.Raw), "resolution") {
		t.Fatalf("unknown resolution = %s", bad.Raw)
	}
	other := newProject(t, e)
	if r := resolve(t, ts.URL, projectKeys{other.Project.ID, other.SandboxKey}, id, "overpayment_settled"); r.Status != http.StatusNotFound {
		t.Fatalf("another project's key = %s", r.Raw)
	}
}

// assign posts a merchant's assignment of a transfer to a session.
func assign(t *testing.T, base string, p projectKeys, txID, sessionID string) response {
	t.Helper()
	return do(t, base, request{method: "POST", path: "/api/v1/projects/" + p.id + "/transactions/" + txID + "/assign",
		key: p.key, body: map[string]any{"checkoutSessionId": sessionID}})
}

// A customer pays to the address of a session that has ended: the transfer
// is unexpected and counts for no session until the merchant assigns it,
// to a new session (whose workflow counts it and completes) or back to the
// ended one (whose records are settled again, the payment late).
func TestAssignAnUnexpectedTransfer(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{lifetime: 2 * time.Second})
	shortLateWindow(t, keys.id)
	ended := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	waitWorkflowEnded(t, str(ended["id"]))
	first := waitTx(t, ts.URL, keys, payToken(t, 4, str(ended["depositAddress"]), units("5000000")), "finalized")
	second := waitTx(t, ts.URL, keys, payToken(t, 4, str(ended["depositAddress"]), units("5000000")), "finalized")
	if first["unexpected"] != true || second["unexpected"] != true {
		t.Fatalf("transfers to the ended session = %v, %v", first, second)
	}

	// To a new session, still open (a long lifetime: its own API).
	open, _ := newAPI(t, apiOptions{})
	fresh := openSession(t, open.URL, keys, "5", "usdc-devnet")
	r := assign(t, ts.URL, keys, str(first["id"]), str(fresh["id"]))
	mustStatus(t, r, http.StatusOK)
	if r.data()["assignedSessionId"] != fresh["id"] || r.data()["checkoutSessionId"] != ended["id"] {
		t.Fatalf("assigned = %s", r.Raw)
	}
	done := waitSession(t, ts.URL, str(fresh["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "5.00" || done["exception"] != nil || len(done["transactions"].([]any)) != 1 {
		t.Fatalf("the session the transfer was assigned to = %v", done)
	}
	recordHistory(t, workflows.CheckoutSessionWorkflowID(str(fresh["id"])), "checkout_session_assigned")
	again := assign(t, ts.URL, keys, str(first["id"]), str(fresh["id"]))
	mustStatus(t, again, http.StatusOK)
	if got := strings.Join(eventTypes(t, str(first["id"])), ","); got != "transaction.confirmed,transaction.finalized,transaction.assigned" {
		t.Fatalf("transaction events = %s: one assignment", got)
	}
	if r := assign(t, ts.URL, keys, str(first["id"]), str(ended["id"])); r.Status != http.StatusConflict {
		t.Fatalf("assigning it to another session = %s", r.Raw)
	}

	// Back to the ended session: its records count it, late.
	r = assign(t, ts.URL, keys, str(second["id"]), str(ended["id"]))
	mustStatus(t, r, http.StatusOK)
	s := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/checkout-sessions/"+str(ended["id"]), keys.key).data()
	if s["status"] != "expired" || s["amountPaidUsd"] != "5.00" || s["exception"] != "paid_late" {
		t.Fatalf("the ended session after the assignment = %v", s)
	}
	if got := auditActions(t, ts.URL, keys, str(second["id"])); len(got) != 1 || got[0] != "transaction.assigned" {
		t.Fatalf("audit entries = %v", got)
	}

	// Refusals.
	if r := assign(t, ts.URL, keys, str(second["id"]), "cs_01m80h0jzc3psaavehj57fnh3h"); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("an unknown session = %s", r.Raw)
	}
	other := newProject(t, e)
	if r := assign(t, ts.URL, projectKeys{other.Project.ID, other.SandboxKey}, str(second["id"]), str(fresh["id"])); r.Status != http.StatusNotFound {
		t.Fatalf("another project's key = %s", r.Raw)
	}
}

// shortLateWindow makes a project's late-payment window one second, so its
// sessions' workflows end soon after expiry.
func shortLateWindow(t *testing.T, projectID string) {
	t.Helper()
	if _, err := st.Pool().Exec(context.Background(), `UPDATE projects SET late_payment_window_seconds = 1 WHERE id = $1`, projectID); err != nil {
		t.Fatal(err)
	}
}

// waitWorkflowEnded waits until a session's workflow has ended.
func waitWorkflowEnded(t *testing.T, sessionID string) {
	t.Helper()
	waitStarted(t, sessionID)
	wait, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := temporal.GetWorkflow(wait, workflows.CheckoutSessionWorkflowID(sessionID), "").Get(wait, nil); err != nil {
		t.Fatalf("the session's workflow did not end: %v", err)
	}
}
