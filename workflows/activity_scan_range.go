package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ScanRangeInput asks to scan blocks From..To (inclusive) of a network.
type ScanRangeInput struct {
	Network  string
	From, To uint64
}

// scanRange runs ScanRange as a heartbeating activity.
func scanRange(ctx workflow.Context, in ScanRangeInput) (ScanOutput, error) {
	ctx = workflow.WithHeartbeatTimeout(ctx, 10*time.Second)
	var out ScanOutput
	err := workflow.ExecuteActivity(ctx, ActivityScanRange, in).Get(ctx, &out)
	return out, err
}
