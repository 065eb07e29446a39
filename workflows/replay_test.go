package workflows_test

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/workflows"
)

// The workflows replay the histories recorded from a real payment (see
// e2e/record_test.go): a change that would break running executions fails
// here, and must go through workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata")
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.CheckoutSession, workflow.RegisterOptions{Name: "CheckoutSession"})
	r.RegisterWorkflowWithOptions(workflows.Transaction, workflow.RegisterOptions{Name: "Transaction"})
	r.RegisterWorkflowWithOptions(workflows.Chainwatch, workflow.RegisterOptions{Name: "Chainwatch"})
	for _, f := range files {
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
