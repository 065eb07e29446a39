package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// CheckInput asks what the chain says of a transaction.
type CheckInput struct {
	Network string
	TxHash  string
	// ReadIn is the block the workflow read the transaction's transfers
	// in: while the transaction is still there, they are not read again
	// (CheckOutput.SameBlock).
	ReadIn string `json:",omitempty"`
}

// CheckOutput is what the chain says of a transaction, with the network's
// settings that size the waits.
type CheckOutput struct {
	Mined       bool
	Succeeded   bool
	BlockNumber uint64
	BlockHash   string
	// MinedAt is the block's timestamp (Unix seconds).
	MinedAt uint64
	// InternalUnknown says the internal transfers could not be read.
	InternalUnknown bool `json:",omitempty"`
	Confirmations   int
	Final           bool
	// Transfers are the transaction's transfers of the network's assets,
	// when it is mined and succeeded; a Bitcoin transaction's outputs to
	// watched addresses, from the mempool on.
	Transfers []payment.Transfer
	// Conflict says why a Bitcoin transaction not mined will not be (a
	// transaction replaced it or spent its coins): it fails.
	Conflict string `json:",omitempty"`
	// SameBlock says the transaction is still in CheckInput.ReadIn's
	// block: Transfers and InternalUnknown were not read again.
	SameBlock             bool `json:",omitempty"`
	RequiredConfirmations int
	BlockTime             time.Duration
	PendingTimeout        time.Duration
}

// checkTransaction runs CheckTransaction as a local activity.
func checkTransaction(ctx workflow.Context, in CheckInput) (CheckOutput, error) {
	var out CheckOutput
	err := workflow.ExecuteLocalActivity(ctx, ActivityCheckTransaction, in).Get(ctx, &out)
	return out, err
}
