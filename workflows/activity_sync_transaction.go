package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// SyncInput is an observation of a transaction to record.
type SyncInput struct {
	Observation payment.Observation
	// ReportIgnored logs and counts the transfers no session takes: set
	// on the look that finds the transaction mined, not on every look.
	ReportIgnored bool
}

// SyncOutput is the transaction's records after the sync.
type SyncOutput struct {
	Transactions []payment.Transaction
}

// syncTransaction runs SyncTransaction as a local activity.
func syncTransaction(ctx workflow.Context, in SyncInput) (SyncOutput, error) {
	var out SyncOutput
	err := workflow.ExecuteLocalActivity(ctx, ActivitySyncTransaction, in).Get(ctx, &out)
	return out, err
}
