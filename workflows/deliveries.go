package workflows

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// WebhookDispatcherWorkflowID is the workflow ID of the event dispatcher.
const WebhookDispatcherWorkflowID = "webhook-dispatcher"

// WebhookDeliveryWorkflowID is the workflow ID of one event's delivery to
// one endpoint.
func WebhookDeliveryWorkflowID(eventID, endpointID string) string {
	return "webhook-delivery/" + eventID + "/" + endpointID
}

// RetrySchedule is the wait before each retry of a failed delivery; each
// wait takes up to 10% jitter either way.
var RetrySchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// DeliveryInput starts an event's delivery to an endpoint.
type DeliveryInput struct {
	DeliveryID string
	EventID    string
	EndpointID string
	// FirstAttempt numbers the first attempt (a redelivery goes on from
	// the attempts made before).
	FirstAttempt int
	// Wait, for a delivery whose first attempt the dispatcher made and
	// failed, is the wait before the workflow's first attempt, and Retried
	// the retries of the schedule it stands for: the schedule goes on
	// from there.
	Wait    time.Duration `json:",omitempty"`
	Retried int           `json:",omitempty"`
}

// WebhookDeliveryStartOptions are the options an event's delivery to an
// endpoint starts with, for the project and environment the event belongs
// to. Its ID names the event and the endpoint: a start while the delivery
// runs finds the running one; a start after it ended (a redelivery) runs it
// again.
func WebhookDeliveryStartOptions(in DeliveryInput, projectID string, isLive bool) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       WebhookDeliveryWorkflowID(in.EventID, in.EndpointID),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes:    deliverySearchAttributes(projectID, isLive),
		StaticSummary:            DeliverySummary(in, projectID),
	}
}

// WebhookDeliveryChildOptions are the options the dispatcher starts a
// delivery's workflow with: the same ID as WebhookDeliveryStartOptions, so
// a start while the delivery runs is refused (and taken as done), and one
// after it ended runs it again. The delivery outlives the dispatcher's run.
func WebhookDeliveryChildOptions(d DeliveryStart) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID:            WebhookDeliveryWorkflowID(d.Input.EventID, d.Input.EndpointID),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: deliverySearchAttributes(d.ProjectID, d.IsLive),
		StaticSummary:         DeliverySummary(d.Input, d.ProjectID),
	}
}

// WebhookDispatcherStartOptions are the options the event dispatcher starts
// with: there is one, so starting it again finds the running one.
func WebhookDispatcherStartOptions() client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       WebhookDispatcherWorkflowID,
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		StaticSummary:            WebhookDispatcherSummary,
	}
}

// AttemptNowResult is the outcome of the attempt an UpdateAttemptNow got.
type AttemptNowResult struct {
	Attempt int
	DeliverResult
	// NextAttempt is when the next attempt is due, when this one failed
	// and the schedule goes on.
	NextAttempt *time.Time `json:",omitempty"`
}

// AttemptNowOptions are a redelivery's: start the delivery if it has ended
// (its first attempt is then the one answered), or join the running one.
func AttemptNowOptions(start client.WithStartWorkflowOperation) client.UpdateWithStartWorkflowOptions {
	return client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName:   UpdateAttemptNow,
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	}
}

// WebhookDelivery delivers one event to one endpoint: an attempt now, then
// retries on the schedule, honouring a receiver's Retry-After, until one
// attempt gets a 2xx or the endpoint is gone. Each attempt signs the same
// event with the same webhook-id, so receivers can deduplicate. A
// redelivery (UpdateAttemptNow) makes the next attempt at once.
func WebhookDelivery(ctx workflow.Context, in DeliveryInput) error {
	// Attempts run as local activities, in the worker that runs the
	// workflow: a delivery then costs no activity round trip through the
	// server. The HTTP call itself times out at 15 s.
	ctx = workflow.WithLocalActivityOptions(withLocalActivityOptions(ctx), workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: localActivityPatience,
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	attempt := max(in.FirstAttempt, 1)
	// The outcome of each attempt made, for the updates waiting on it, and
	// whether one asked to end the wait.
	outcomes := map[int]AttemptNowResult{}
	inFlight, wake := false, false
	if err := workflow.SetUpdateHandler(ctx, UpdateAttemptNow, func(ctx workflow.Context) (AttemptNowResult, error) {
		want := attempt // the attempt under way, or the next one
		if !inFlight {
			wake = true
		}
		err := workflow.Await(ctx, func() bool { _, done := outcomes[want]; return done })
		return outcomes[want], err
	}); err != nil {
		return err
	}
	// finish ends the delivery once the updates waiting on its last
	// attempt have their answer.
	finish := func(err error) error {
		if err == nil {
			err = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		}
		return err
	}
	if in.Wait > 0 {
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("The first attempt failed; attempt %d is due at %s", attempt,
			workflow.Now(ctx).Add(in.Wait).UTC().Format(time.RFC3339)))
		if _, err := workflow.AwaitWithTimeout(ctx, in.Wait, func() bool { return wake }); err != nil {
			return err
		}
	}
	for i := in.Retried; ; i++ {
		inFlight = true
		r, err := deliverWebhook(ctx, DeliverInput{DeliveryInput: in, Attempt: attempt, At: workflow.Now(ctx)})
		inFlight, wake = false, false
		if err != nil {
			return err
		}
		outcome := AttemptNowResult{Attempt: cmp.Or(r.Recorded, attempt), DeliverResult: r}
		if r.Delivered || r.Stop {
			outcomes[attempt] = outcome
			return finish(nil)
		}
		if i >= len(RetrySchedule) {
			outcomes[attempt] = outcome
			return finish(finishDelivery(ctx, FinishInput{DeliveryID: in.DeliveryID, Status: payment.DeliveryFailed}))
		}
		wait := jitter(ctx, RetrySchedule[i])
		if r.RetryAfter > wait {
			wait = min(r.RetryAfter, RetrySchedule[len(RetrySchedule)-1])
		}
		next := workflow.Now(ctx).Add(wait)
		outcome.NextAttempt = &next
		outcomes[attempt] = outcome
		workflow.SetCurrentDetails(ctx, deliveryDetails(attempt, r, next))
		attempt++
		if _, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return wake }); err != nil {
			return err
		}
	}
}

// jitter spreads a wait by up to 10% either way, so that many deliveries
// failing together do not retry together. The random draw is recorded, so
// replays wait the same.
func jitter(ctx workflow.Context, d time.Duration) time.Duration {
	var f float64
	_ = workflow.SideEffect(ctx, func(workflow.Context) any { return 0.9 + 0.2*rand.Float64() }).Get(&f)
	return time.Duration(float64(d) * f)
}

// dispatchesPerRun and dispatcherHistory bound the dispatcher's history:
// a run continues as new after that many dispatches, or sooner once its
// history has that many events (many deliveries' workflows started).
const (
	dispatchesPerRun  = 500
	dispatcherHistory = 10_000
)

// WebhookDispatcher delivers every recorded event to every endpoint that
// wants it, in the order the events were recorded: a dispatch records the
// deliveries, makes their first attempts and marks the events whose
// deliveries all ended; the dispatcher starts a workflow for each delivery
// whose first attempt failed, and then marks those events dispatched. A
// crash before the mark dispatches them again (first attempts are at
// least once; receivers tell repeats by webhook-id), and a delivery's
// workflow is started once: its ID names the event and the endpoint.
func WebhookDispatcher(ctx workflow.Context) error {
	ctx = withActivityOptions(ctx)
	for range dispatchesPerRun {
		out, err := dispatchEvents(ctx)
		if err != nil {
			return err
		}
		if err := startDeliveries(ctx, out.Retries); err != nil {
			return err
		}
		if len(out.Events) > 0 {
			if err := markDispatched(ctx, MarkInput{Events: out.Events}); err != nil {
				return err
			}
		}
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() >= dispatcherHistory {
			break
		}
	}
	return workflow.NewContinueAsNewError(ctx, WebhookDispatcher)
}

// startDeliveries starts the deliveries' workflows as children, all at
// once, and waits until each has started; one running already is no
// error.
func startDeliveries(ctx workflow.Context, starts []DeliveryStart) error {
	futures := make([]workflow.ChildWorkflowFuture, len(starts))
	for i, d := range starts {
		futures[i] = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, WebhookDeliveryChildOptions(d)), WebhookDelivery, d.Input)
	}
	for _, f := range futures {
		var started workflow.Execution
		if err := f.GetChildWorkflowExecution().Get(ctx, &started); err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			return err
		}
	}
	return nil
}
