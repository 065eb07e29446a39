package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// DispatchOutput is one dispatch: the events it took and left undispatched,
// and their deliveries whose first attempt failed (or was not made in
// time), for the dispatcher to start their workflows and then mark the
// events. (The events whose deliveries all ended the dispatch marks
// itself.)
type DispatchOutput struct {
	Events  []string
	Retries []DeliveryStart
}

// DeliveryStart is a delivery's workflow to start, for the project and
// environment its event belongs to.
type DeliveryStart struct {
	Input     DeliveryInput
	ProjectID string
	IsLive    bool
}

// dispatchEvents runs DispatchEvents as a (normal) activity: it waits for
// events for a few seconds, longer than a local activity should hold a
// workflow task.
func dispatchEvents(ctx workflow.Context) (DispatchOutput, error) {
	var out DispatchOutput
	err := workflow.ExecuteActivity(ctx, ActivityDispatchEvents).Get(ctx, &out)
	return out, err
}
