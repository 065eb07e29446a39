package workflows

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
)

// SessionTransfer is a transfer to a session, as its workflow is told of
// it: found on the chain by chainwatch (to the session's deposit address,
// or to a shared recipient, SessionID "" when it matches no session), or a
// hash the payer submitted before it was mined.
type SessionTransfer struct {
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
	// BlockTime is the block's timestamp (Unix seconds; 0 when not mined).
	BlockTime uint64
	// Source is "chainwatch" (seen in a block), "rescan" (read again by
	// an operator's rescan) or "payer" (hash submitted before it was
	// mined).
	Source string
	// ProjectID and IsLive are the session's, for chainwatch to start the
	// transaction's workflow when the session's has ended.
	ProjectID string `json:",omitempty"`
	IsLive    bool   `json:",omitempty"`
	// PaysSessionAlone says the transfer's transaction pays this session
	// alone, as far as the scan saw it (every transfer of the transaction
	// it found is to the session): the session's workflow may follow it
	// itself. Its JSON name, Solo, is the one recorded histories hold.
	PaysSessionAlone bool `json:"Solo,omitempty"`
	// TxTransfers are, for a transfer a scan reported as paying its
	// session alone, every transfer of its transaction the scan found (all
	// of them: it reads whole blocks, their traces included). The session's first look at
	// the transaction takes them as read in BlockHash's block
	// (CheckInput.ReadIn): while the transaction is still there, its
	// receipt is read, not the transaction and its trace.
	TxTransfers []payment.Transfer `json:",omitempty"`
}

// MarkPaysSessionAlone sets PaysSessionAlone on the transfers whose
// transaction pays one session and nothing else among transfers (one
// scan's, which holds every transfer of the blocks it read).
func MarkPaysSessionAlone(transfers []SessionTransfer) {
	sessions := map[string]string{}
	shared := map[string]bool{}
	for _, p := range transfers {
		k := p.Key()
		if id, ok := sessions[k]; ok && id != p.SessionID || p.SessionID == "" {
			shared[k] = true
		}
		sessions[k] = p.SessionID
	}
	for i := range transfers {
		transfers[i].PaysSessionAlone = !shared[transfers[i].Key()]
	}
}

// ScanProgress is a network's chainwatch telling a session how far it has
// handed over transfers: every transfer mined before BlockTime (Unix
// seconds).
type ScanProgress struct {
	Network   string
	BlockTime uint64
}

// Key identifies a transfer's transaction: one workflow per chain and
// hash.
func (p SessionTransfer) Key() string { return TransactionWorkflowID(p.ChainID, p.TxHash) }

// TransferKey identifies the transfer: its chain, hash and log index.
func (p SessionTransfer) TransferKey() string { return transferKey(p.ChainID, p.TxHash, p.LogIndex) }

func transferKey(chainID int64, txHash string, logIndex int) string {
	return fmt.Sprintf("%s/%d", TransactionWorkflowID(chainID, txHash), logIndex)
}

// TxStatus is what a transaction's workflow tells a session: the status
// of one of its records, or (Ended) that the workflow has ended.
type TxStatus struct {
	// Key is the transaction's workflow ID.
	Key string
	// RowID is the record's ID, and TransferKey its transfer's key ("" for
	// a claim that no transfer has matched).
	RowID           string
	TransferKey     string
	Status          payment.TransactionStatus
	AssetID         string
	AmountBaseUnits string
	// MinedAt is the timestamp (Unix seconds) of the block the transaction
	// is in, 0 while it is not mined: it decides whether a payment is late.
	MinedAt uint64
	// Ended is set on the last word of a transaction's workflow, to the
	// sessions that asked it to watch: transfers they reported that it did
	// not record will not be recorded by this run.
	Ended bool
	// Unexpected says the record is of a transfer the session no longer
	// took (payment.MatchTransfers): it counts for no session.
	Unexpected bool `json:",omitempty"`
}

// SessionSettings are the project settings a session's money logic needs.
type SessionSettings struct {
	CompleteOn       payment.TransactionStatus
	TolerancePercent decimal.Decimal
}

// SourceRescan is the Source of a transfer an operator's rescan read again.
const SourceRescan = "rescan"
