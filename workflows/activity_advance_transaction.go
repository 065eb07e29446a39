package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// AdvanceInput records one status transition of a transaction.
type AdvanceInput struct {
	TransactionID string
	From, To      payment.TransactionStatus
	At            time.Time
	Reason        string
	Check         CheckOutput
	Version       int
}

// advanceTransaction runs AdvanceTransaction as a local activity.
func advanceTransaction(ctx workflow.Context, in AdvanceInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityAdvanceTransaction, in).Get(ctx, nil)
}
