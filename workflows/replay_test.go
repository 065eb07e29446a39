package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/paymentsd/paymentsd/workflows"
)

// The workflows replay the histories recorded from real runs (see
// tests/e2e/record_test.go), one at least for every registered workflow type: a
// change that would break running executions fails here, and must go
// through workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata")
	}
	r := worker.NewWorkflowReplayer()
	workflows.Register(r)
	replayed := map[string]bool{}
	for _, f := range files {
		b, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := client.HistoryFromJSON(b, client.HistoryJSONOptions{})
		b.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		replayed[h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()] = true
		if err := r.ReplayWorkflowHistory(nil, h); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, d := range workflows.Definitions() {
		if !replayed[d.Name] {
			t.Errorf("no recorded history of %s in testdata", d.Name)
		}
	}
}
