package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// CancelSessionInput asks to record a session's cancelation.
type CancelSessionInput struct {
	SessionID string
	At        time.Time
	// Audit is the merchant's audit entry, recorded in the cancelation's
	// transaction; without one (nil) the change is made alone.
	Audit *payment.AuditEntry `json:",omitempty"`
}

// CancelRequest is the argument of the cancel update: the merchant's
// audit entry, made by the API.
type CancelRequest struct {
	Audit *payment.AuditEntry `json:",omitempty"`
}

// cancelCheckoutSession runs CancelCheckoutSession as a local activity.
func cancelCheckoutSession(ctx workflow.Context, in CancelSessionInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityCancelCheckoutSession, in).Get(ctx, nil)
}
