package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// ProgressInput records a session's status, amount paid and exception.
type ProgressInput struct {
	SessionID   string
	Status      payment.SessionStatus
	PaidUSD     string
	Exception   string
	CompletedAt *time.Time
	At          time.Time
}

// recordSessionProgress runs RecordSessionProgress as a local activity.
func recordSessionProgress(ctx workflow.Context, in ProgressInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityRecordSessionProgress, in).Get(ctx, nil)
}
