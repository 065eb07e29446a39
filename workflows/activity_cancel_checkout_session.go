package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ActivityCancelCheckoutSession records that the merchant canceled an open
// session.
const ActivityCancelCheckoutSession = "CancelCheckoutSession"

// CancelSessionInput asks to record a session's cancelation. Its fields
// are those of ExpireSessionInput, which cancelations were once recorded
// with, so those payloads still decode into it.
type CancelSessionInput struct {
	SessionID string
	At        time.Time
}

// cancelCheckoutSession runs CancelCheckoutSession as a local activity.
func cancelCheckoutSession(ctx workflow.Context, in CancelSessionInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityCancelCheckoutSession, in).Get(ctx, nil)
}
