package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

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
	// Recorded is the number the attempt was recorded under (0 in
	// histories from before attempts were numbered by the database).
	Recorded int `json:",omitempty"`
}

// deliverWebhook runs DeliverWebhook as a local activity.
func deliverWebhook(ctx workflow.Context, in DeliverInput) (DeliverResult, error) {
	var out DeliverResult
	err := workflow.ExecuteLocalActivity(ctx, ActivityDeliverWebhook, in).Get(ctx, &out)
	return out, err
}
