package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// ResolveInput is a merchant's resolution of a session's exception.
type ResolveInput struct {
	SessionID  string
	Resolution payment.Resolution
	At         time.Time
	// Audit is the merchant's audit entry, recorded in the resolution's
	// transaction; without one (nil) the change is made alone.
	Audit *payment.AuditEntry `json:",omitempty"`
}

// resolveCheckoutSession runs ResolveCheckoutSession as a local activity.
func resolveCheckoutSession(ctx workflow.Context, in ResolveInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityResolveCheckoutSession, in).Get(ctx, nil)
}
