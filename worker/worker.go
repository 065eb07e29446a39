// Package worker runs the engine's Temporal worker: it registers every
// workflow and activity on the engine's task queue, and keeps one scanner
// workflow per network running.
package worker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/workflows"
)

// New returns a worker with the engine's workflows and activities
// registered; the caller starts and stops it. It is a version of the
// engine's worker deployment, named by buildID (BuildID when empty): a
// new execution is pinned to the version that starts it or moves up to
// each new current one, by its type (workflows.Definitions). Stopped, it
// takes no new task and gives its running activities stopTimeout to
// finish before cancelling them (a cancelled activity is retried on
// another worker of its version).
func New(c client.Client, acts *activities.Activities, stopTimeout time.Duration, buildID string) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{
		WorkflowTaskPollerBehavior: sdkworker.NewPollerBehaviorAutoscaling(sdkworker.PollerBehaviorAutoscalingOptions{}),
		WorkerStopTimeout:          stopTimeout,
		DeploymentOptions: sdkworker.DeploymentOptions{UseVersioning: true, Version: deploymentVersion(buildID),
			DefaultVersioningBehavior: workflow.VersioningBehaviorPinned},
	})
	Register(w, acts)
	return w
}

// Register registers the engine's workflows and activities on r.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	workflows.Register(r)
	acts.Register(r)
}

// StartChainwatch starts the chainwatch workflow and the finality watch of
// each network unless they are running already.
func StartChainwatch(ctx context.Context, c client.Client, networks []string) error {
	sort.Strings(networks)
	for _, n := range networks {
		err := retryTransient(ctx, func() error {
			_, err := c.ExecuteWorkflow(ctx, workflows.ChainwatchStartOptions(n), workflows.Chainwatch, workflows.ScanInput{Network: n})
			return err
		})
		if err != nil {
			return fmt.Errorf("start chainwatch of %s: %w", n, err)
		}
		err = retryTransient(ctx, func() error {
			_, err := c.ExecuteWorkflow(ctx, workflows.FinalityWatchStartOptions(n), workflows.FinalityWatch, workflows.FinalityWatchInput{Network: n})
			return err
		})
		if err != nil {
			return fmt.Errorf("start the finality watch of %s: %w", n, err)
		}
	}
	return nil
}

// StartDispatcher starts the webhook dispatcher unless it is running.
func StartDispatcher(ctx context.Context, c client.Client) error {
	err := retryTransient(ctx, func() error {
		_, err := c.ExecuteWorkflow(ctx, workflows.WebhookDispatcherStartOptions(), workflows.WebhookDispatcher)
		return err
	})
	if err != nil {
		return fmt.Errorf("start webhook dispatcher: %w", err)
	}
	return nil
}

// startRetries bounds how long a worker starting retries a call Temporal
// failed for a passing reason (a server still starting, two workers
// starting the same workflow at once).
const startRetries = 30 * time.Second

// retryTransient calls f until it succeeds, fails for good, ctx ends or
// startRetries has passed.
func retryTransient(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(startRetries)
	for {
		err := f()
		if err == nil || !transient(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// transient tells whether Temporal's answer may change on a retry.
func transient(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		canceled    *serviceerror.Canceled
		deadline    *serviceerror.DeadlineExceeded
		exhausted   *serviceerror.ResourceExhausted
	)
	return errors.As(err, &unavailable) || errors.As(err, &canceled) || errors.As(err, &deadline) || errors.As(err, &exhausted)
}

// RegisterSearchAttributes adds the engine's custom search attributes to
// the namespace; attributes that exist already are fine.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace,
		SearchAttributes: map[string]enumspb.IndexedValueType{
			workflows.ProjectID.GetName():         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			workflows.CheckoutSessionID.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			workflows.PaymentStatus.GetName():     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			workflows.Network.GetName():           enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			workflows.IsLive.GetName():            enumspb.INDEXED_VALUE_TYPE_BOOL,
		},
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("register search attributes: %w", err)
	}
	return nil
}
