package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// MarkInput names the events whose deliveries are all made or started.
type MarkInput struct {
	Events []string
}

// markDispatched runs MarkDispatched as a local activity.
func markDispatched(ctx workflow.Context, in MarkInput) error {
	return workflow.ExecuteLocalActivity(withLocalActivityOptions(ctx), ActivityMarkDispatched, in).Get(ctx, nil)
}
