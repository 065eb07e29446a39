package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// CheckoutSessionWorkflowID is the workflow ID of a checkout session.
func CheckoutSessionWorkflowID(sessionID string) string { return "checkout-session/" + sessionID }

// UpdateSessionCreated is the update that returns once the session's row is
// recorded; the API starts the workflow with it, so a created session is
// always readable when its creation returns.
const UpdateSessionCreated = "session-created"

// CheckoutSessionInput starts a checkout session's workflow.
type CheckoutSessionInput struct {
	Session payment.Session
}

// ExpireSessionInput asks to record a session's expiry.
type ExpireSessionInput struct {
	SessionID string
	At        time.Time
}

// CheckoutSession drives one checkout session: it records the session, then
// waits for its expiry with a durable timer and records it as expired.
func CheckoutSession(ctx workflow.Context, in CheckoutSessionInput) error {
	ctx = withActivityOptions(ctx)
	created := false
	if err := workflow.SetUpdateHandler(ctx, UpdateSessionCreated, func(ctx workflow.Context) error {
		return workflow.Await(ctx, func() bool { return created })
	}); err != nil {
		return err
	}
	if err := workflow.ExecuteActivity(ctx, ActivityCreateCheckoutSession, in.Session).Get(ctx, nil); err != nil {
		return err
	}
	created = true

	if wait := in.Session.ExpiresAt.Sub(workflow.Now(ctx)); wait > 0 {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	expire := ExpireSessionInput{SessionID: in.Session.ID, At: in.Session.ExpiresAt}
	if err := workflow.ExecuteActivity(ctx, ActivityExpireCheckoutSession, expire).Get(ctx, nil); err != nil {
		return err
	}
	// Let a caller still waiting on the update see its answer before the
	// workflow completes.
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}
