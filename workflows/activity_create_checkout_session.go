package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// createCheckoutSession runs CreateCheckoutSession as a local activity.
func createCheckoutSession(ctx workflow.Context, s payment.Session) error {
	return workflow.ExecuteLocalActivity(ctx, ActivityCreateCheckoutSession, s).Get(ctx, nil)
}
