// Package worker runs the engine's Temporal worker: it registers every
// workflow and activity on the engine's task queue.
package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/workflows"
)

// New returns a worker with the engine's workflows and activities
// registered; the caller starts and stops it.
func New(c client.Client, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{})
	Register(w, acts)
	return w
}

// Register registers the engine's workflows and activities on r.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.CheckoutSession, workflow.RegisterOptions{Name: "CheckoutSession"})
	acts.Register(r)
}
