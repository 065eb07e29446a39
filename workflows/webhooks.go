package workflows

import (
	"math/rand/v2"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Activity names of webhook delivery.
const (
	ActivityDispatchEvents = "DispatchEvents"
	ActivityDeliverWebhook = "DeliverWebhook"
	ActivityFinishDelivery = "FinishDelivery"
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
}

// DeliverInput is one attempt.
type DeliverInput struct {
	DeliveryInput
	Attempt int
	// At is when the workflow made the attempt: the attempt's time, and
	// the clock the endpoint's failure record runs on.
	At time.Time
}

// DeliverResult is what one attempt achieved.
type DeliverResult struct {
	Delivered  bool
	StatusCode int
	// RetryAfter is the receiver's Retry-After on a 429 or 503.
	RetryAfter time.Duration
	// Stop ends the delivery: the endpoint answered 410, or is disabled
	// or deleted.
	Stop bool
}

// FinishInput records a delivery's final status.
type FinishInput struct {
	DeliveryID string
	Status     string
}

// WebhookDelivery delivers one event to one endpoint: an attempt now, then
// retries on the schedule, honouring a receiver's Retry-After, until one
// attempt gets a 2xx or the endpoint is gone. Each attempt signs the same
// event with the same webhook-id, so receivers can deduplicate.
func WebhookDelivery(ctx workflow.Context, in DeliveryInput) error {
	// Attempts run as local activities, in the worker that runs the
	// workflow: a delivery then costs no activity round trip through the
	// server. The HTTP call itself times out at 15 s.
	ctx = workflow.WithLocalActivityOptions(withLocalActivityOptions(ctx), workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	attempt := max(in.FirstAttempt, 1)
	for i := 0; ; i++ {
		var r DeliverResult
		if err := workflow.ExecuteLocalActivity(ctx, ActivityDeliverWebhook, DeliverInput{DeliveryInput: in, Attempt: attempt, At: workflow.Now(ctx)}).Get(ctx, &r); err != nil {
			return err
		}
		if r.Delivered || r.Stop {
			return nil
		}
		if i >= len(RetrySchedule) {
			return workflow.ExecuteLocalActivity(ctx, ActivityFinishDelivery, FinishInput{DeliveryID: in.DeliveryID, Status: "failed"}).Get(ctx, nil)
		}
		wait := jitter(ctx, RetrySchedule[i])
		if r.RetryAfter > wait {
			wait = min(r.RetryAfter, RetrySchedule[len(RetrySchedule)-1])
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
		attempt++
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

// dispatchesPerRun bounds the dispatcher's history.
const dispatchesPerRun = 500

// WebhookDispatcher starts a delivery workflow for every recorded event and
// every endpoint that wants it, in the order the events were recorded.
func WebhookDispatcher(ctx workflow.Context) error {
	ctx = withActivityOptions(ctx)
	for range dispatchesPerRun {
		if err := workflow.ExecuteActivity(ctx, ActivityDispatchEvents).Get(ctx, nil); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, WebhookDispatcher)
}
