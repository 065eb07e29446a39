package workflows

import (
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
)

// Signals of the on-chain part.
const (
	// SignalPayment tells a session's workflow of a payment to its deposit
	// address, found by the scanner or submitted by the payer.
	SignalPayment = "payment"
	// SignalTxStatus tells a session's workflow that one of its
	// transactions changed status.
	SignalTxStatus = "transaction-status"
)

// Payment is a transfer to a session's deposit address.
type Payment struct {
	SessionID string
	Network   string
	ChainID   int64
	TxHash    string
	// LogIndex is the ERC-20 log's index, -1 for a native transfer or a
	// submitted hash whose details are not known yet.
	LogIndex        int
	From            string
	To              string
	AssetID         string
	AmountBaseUnits string
	BlockNumber     uint64
	BlockHash       string
	// Source is "scanner" (seen in a block) or "payer" (hash submitted
	// before it was mined).
	Source string
}

// Key identifies a payment's transaction: one workflow per chain and hash.
func (p Payment) Key() string { return TransactionWorkflowID(p.ChainID, p.TxHash) }

// TxStatus is what a transaction's workflow tells its session.
type TxStatus struct {
	Key             string
	Status          payment.TransactionStatus
	AssetID         string
	AmountBaseUnits string
}

// SessionSettings are the project settings a session's money logic needs.
type SessionSettings struct {
	CompleteOn       payment.TransactionStatus
	TolerancePercent decimal.Decimal
}
