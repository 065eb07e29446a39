package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// dispatchEvents runs DispatchEvents as a (normal) activity: it waits for
// events for a few seconds, longer than a local activity should hold a
// workflow task.
func dispatchEvents(ctx workflow.Context) error {
	return workflow.ExecuteActivity(ctx, ActivityDispatchEvents).Get(ctx, nil)
}
