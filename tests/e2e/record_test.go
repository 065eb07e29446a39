package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// recordHistory writes a workflow's history as JSON to the folder named by
// RECORD_HISTORIES, for the workflows package's replay tests. Without the
// variable it does nothing. A running workflow's history is recorded as far
// as it goes: the replay test replays it that far.
func recordHistory(t *testing.T, workflowID, name string) {
	dir := os.Getenv("RECORD_HISTORIES")
	if dir == "" {
		return
	}
	it := temporal.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordClosedHistory waits for a workflow to close, then records its
// history as recordHistory does.
func recordClosedHistory(t *testing.T, workflowID, name string) {
	if os.Getenv("RECORD_HISTORIES") == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := temporal.GetWorkflow(ctx, workflowID, "").Get(ctx, nil); err != nil {
		t.Fatalf("wait for %s: %v", workflowID, err)
	}
	recordHistory(t, workflowID, name)
}
