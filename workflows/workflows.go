// Package workflows holds the engine's deterministic Temporal workflows.
// They own every status change; every read and write of the outside world
// happens in an activity, declared here (one file per activity: its name,
// input, output and the typed call the workflows use) and implemented in
// package activities, so this package imports nothing that does I/O.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// TaskQueue is the task queue of the engine's workflows and activities.
const TaskQueue = "paymentsd"

// withLocalActivityOptions sets the options of the engine's short
// activities (one database write, or one receipt read), which run as local
// activities: in the worker that runs the workflow, without a round trip
// through the server, so a payment moves through its statuses quickly.
func withLocalActivityOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 15 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
}

// withActivityOptions sets the options every activity of the engine runs
// with: short attempts, retried with backoff until they succeed or fail for
// a reason that retrying cannot fix (those are non-retryable errors).
func withActivityOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
}
