package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// RecordInput records a transaction when it is first seen.
type RecordInput struct {
	Transaction payment.Transaction
}

// recordTransaction runs RecordTransaction as a local activity and returns
// the transaction as stored: a record made before (a retry) wins over in.
func recordTransaction(ctx workflow.Context, in RecordInput) (payment.Transaction, error) {
	var out payment.Transaction
	err := workflow.ExecuteLocalActivity(ctx, ActivityRecordTransaction, in).Get(ctx, &out)
	return out, err
}
