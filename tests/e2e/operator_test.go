package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/sdk/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/workflows"
)

// currentDetails reads a workflow's current details as the Temporal UI
// does, through its metadata query.
func currentDetails(t *testing.T, workflowID string) string {
	t.Helper()
	v, err := temporal.QueryWorkflow(context.Background(), workflowID, "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatalf("metadata of %s: %v", workflowID, err)
	}
	var md sdk.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		t.Fatal(err)
	}
	return md.GetCurrentDetails()
}

func staticSummary(t *testing.T, workflowID string) string {
	t.Helper()
	d, err := temporal.DescribeWorkflow(context.Background(), workflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.GetStaticSummary()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An operator reads in the Temporal UI's list what a payment's workflows
// are about, and in their details where they stand, without opening a
// history: the session's plan, amount and assets, then "completed" and
// until when it still records late payments; the transaction's status and
// confirmations (a payment to one session alone is followed in the
// session's workflow).
func TestOperatorsReadWorkflowsAtAGlance(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "4.20", "usdc-devnet")
	sessionWF := workflows.CheckoutSessionWorkflowID(str(cs["id"]))
	waitStarted(t, str(cs["id"])) // in the background, right after the answer

	summary := staticSummary(t, sessionWF)
	for _, want := range []string{str(cs["id"]), `"Order"`, "4.20 USD", "USDC on devnet", keys.id, "sandbox"} {
		if !strings.Contains(summary, want) {
			t.Fatalf("session summary %q lacks %q", summary, want)
		}
	}
	if d := currentDetails(t, sessionWF); !strings.Contains(d, "**open** · paid 0.00 of 4.20 USD") || !strings.Contains(d, "takes payments until") {
		t.Fatalf("open session's details = %q", d)
	}

	hash := payToken(t, 0, str(cs["depositAddress"]), units("4200000"))
	waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	var details string
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		details = currentDetails(t, sessionWF)
		return strings.Contains(details, "**completed** · paid 4.20 of 4.20 USD"), fmt.Sprintf("completed session's details = %q", details)
	})
	for _, want := range []string{"**completed** · paid 4.20 of 4.20 USD", "payments: 1 finalized", "still records late payments until"} {
		if !strings.Contains(details, want) {
			t.Fatalf("completed session's details = %q; want %q", details, want)
		}
	}

	// The payment paid this session alone: its workflow followed it, and
	// no transaction workflow ran.
	txWF := workflows.TransactionWorkflowID(chain.ChainID.Int64(), hash.Hex())
	var missing *serviceerror.NotFound
	if _, err := temporal.DescribeWorkflowExecution(context.Background(), txWF, ""); !errors.As(err, &missing) {
		t.Fatalf("a transaction workflow for a payment to one session: %v", err)
	}
	if d := currentDetails(t, workflows.ChainwatchWorkflowID("devnet")); !strings.Contains(d, "**scanning devnet** · through block") {
		t.Fatalf("scanner details = %q", d)
	}
}
