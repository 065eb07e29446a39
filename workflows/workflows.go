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

// localActivityPatience is how long a local activity is retried before its
// workflow gives up: for ever, in effect. A local activity's retries are
// otherwise capped by its start-to-close timeout, so a node or a database
// unreachable for a minute would fail the workflow and strand its payment;
// errors no retry can fix are non-retryable and end it at once.
const localActivityPatience = 10 * 365 * 24 * time.Hour

// withLocalActivityOptions sets the options of the engine's short
// activities (one database write, or one receipt read), which run as local
// activities: in the worker that runs the workflow, without a round trip
// through the server, so a payment moves through its statuses quickly.
func withLocalActivityOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: localActivityPatience,
		StartToCloseTimeout:    15 * time.Second,
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
