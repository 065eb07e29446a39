package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

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
