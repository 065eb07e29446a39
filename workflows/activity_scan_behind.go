package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ActivityScanBehind returns the networks whose scanner has not yet
// reported to their sessions the transfers mined before a time.
const ActivityScanBehind = "ScanBehind"

// ScanBehindInput asks which of the networks are not scanned up to Before.
type ScanBehindInput struct {
	Networks []string
	Before   time.Time
}

// scanBehind runs ScanBehind as a local activity.
func scanBehind(ctx workflow.Context, in ScanBehindInput) ([]string, error) {
	var out []string
	err := workflow.ExecuteLocalActivity(ctx, ActivityScanBehind, in).Get(ctx, &out)
	return out, err
}
