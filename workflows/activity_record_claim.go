package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// ClaimInput is a claim to record (payment.Claim).
type ClaimInput struct {
	Claim payment.Transaction
}

// recordClaim runs RecordClaim as a local activity and returns the
// session's record of the transaction: the claim, or the record made
// before it.
func recordClaim(ctx workflow.Context, in ClaimInput) (payment.Transaction, error) {
	var out payment.Transaction
	err := workflow.ExecuteLocalActivity(ctx, ActivityRecordClaim, in).Get(ctx, &out)
	return out, err
}
