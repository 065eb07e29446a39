package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ActivityScanRange scans a range of a network's blocks for transfers to
// deposit addresses, apart from the network's scanner (an operator's
// rescan).
const ActivityScanRange = "ScanRange"

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
