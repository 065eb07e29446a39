package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ExpireSessionInput asks to record a session's expiry.
type ExpireSessionInput struct {
	SessionID string
	At        time.Time
}

// expireCheckoutSession runs ExpireCheckoutSession as a local activity.
func expireCheckoutSession(ctx workflow.Context, in ExpireSessionInput) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityExpireCheckoutSession, in).Get(ctx, nil)
}
