package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// AssignInput is a merchant's assignment of an unexpected transfer (a
// transaction record) to a session.
type AssignInput struct {
	TransactionID string
	SessionID     string
	At            time.Time
	// Audit is the merchant's audit entry, recorded in the assignment's
	// transaction; without one (nil) the change is made alone.
	Audit *payment.AuditEntry `json:",omitempty"`
}

// assignTransfer runs AssignTransfer as a local activity; it returns the
// transaction as recorded.
func assignTransfer(ctx workflow.Context, in AssignInput) (payment.Transaction, error) {
	var t payment.Transaction
	err := workflow.ExecuteLocalActivity(ctx, ActivityAssignTransfer, in).Get(ctx, &t)
	return t, err
}
