package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// CancelSessionInput asks to record a session's cancelation. Its fields
// are those of ExpireSessionInput, which cancelations were once recorded
// with, so those payloads still decode into it.
type CancelSessionInput struct {
	SessionID string
	At        time.Time
	// Audit is the merchant's audit entry, recorded in the cancelation's
	// transaction (nil in histories from before it was carried).
	Audit *payment.AuditEntry `json:",omitempty"`
}

// CancelRequest is the argument of the cancel update. Updates recorded
// before it had one decode to its zero value (the SDK leaves an argument
// with no payload at its zero value), so replay is unchanged.
type CancelRequest struct {
	Audit *payment.AuditEntry `json:",omitempty"`
}

// cancelCheckoutSession runs CancelCheckoutSession as a local activity.
func cancelCheckoutSession(ctx workflow.Context, in CancelSessionInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityCancelCheckoutSession, in).Get(ctx, nil)
}
