package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// FinishInput records a delivery's final status.
type FinishInput struct {
	DeliveryID string
	Status     string
}

// finishDelivery runs FinishDelivery as a local activity.
func finishDelivery(ctx workflow.Context, in FinishInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityFinishDelivery, in).Get(ctx, nil)
}
