package payment

import (
	"fmt"
	"slices"
)

// TransactionStatus is the confirmation status of an on-chain transaction.
type TransactionStatus string

const (
	TxPending   TransactionStatus = "pending"
	TxConfirmed TransactionStatus = "confirmed"
	TxFinalized TransactionStatus = "finalized"
	TxFailed    TransactionStatus = "failed"
	// TxReversed is a finalized transaction whose block left the canonical
	// chain in a reorg deeper than the network's finality: the money it
	// brought is gone. It returns to confirmed if it is mined again, and
	// fails if it cannot be (reverted, or double-spent).
	TxReversed TransactionStatus = "reversed"
)

// TransactionStatuses lists every transaction status.
var TransactionStatuses = []TransactionStatus{TxPending, TxConfirmed, TxFinalized, TxFailed, TxReversed}

var txTransitions = map[TransactionStatus][]TransactionStatus{
	TxPending:   {TxConfirmed, TxFailed},
	TxConfirmed: {TxFinalized, TxPending}, // back to pending when its block leaves the chain
	// Final, then gone: its block left the chain past finality (a deep
	// reorg), which the engine re-checks for a window (ReorgWindow).
	TxFinalized: {TxReversed},
	// Mined again (it returns to the normal path), or never to be.
	TxReversed: {TxConfirmed, TxFailed},
}

// Terminal reports whether the transaction needs no more looks in the
// normal course: finalized and failed, and reversed (which leaves only if
// the transaction is mined again, while the engine still looks).
func (s TransactionStatus) Terminal() bool {
	return s == TxFinalized || s == TxFailed || s == TxReversed
}

// Valid reports whether s is a known status.
func (s TransactionStatus) Valid() bool { return slices.Contains(TransactionStatuses, s) }

// AdvanceTransaction checks the move from one transaction status to another
// and returns an error for a transition the state machine does not allow.
func AdvanceTransaction(from, to TransactionStatus) error {
	if slices.Contains(txTransitions[from], to) {
		return nil
	}
	return fmt.Errorf("transaction cannot move from %s to %s", from, to)
}

// SessionStatus is the status of a checkout session.
type SessionStatus string

const (
	SessionOpen       SessionStatus = "open"
	SessionProcessing SessionStatus = "processing"
	SessionCompleted  SessionStatus = "completed"
	SessionExpired    SessionStatus = "expired"
	SessionCanceled   SessionStatus = "canceled"
)

// SessionStatuses lists every checkout session status.
var SessionStatuses = []SessionStatus{SessionOpen, SessionProcessing, SessionCompleted, SessionExpired, SessionCanceled}

var sessionTransitions = map[SessionStatus][]SessionStatus{
	SessionOpen: {SessionProcessing, SessionCompleted, SessionExpired, SessionCanceled},
	// Back to open when every payment seen failed (reverted, or dropped
	// by a reorg): nothing is on its way.
	SessionProcessing: {SessionCompleted, SessionExpired, SessionOpen},
}

// Valid reports whether s is a known status.
func (s SessionStatus) Valid() bool { return slices.Contains(SessionStatuses, s) }

// Terminal reports whether no transition leaves s.
func (s SessionStatus) Terminal() bool {
	return s == SessionCompleted || s == SessionExpired || s == SessionCanceled
}

// AdvanceSession checks the move from one session status to another.
func AdvanceSession(from, to SessionStatus) error {
	if slices.Contains(sessionTransitions[from], to) {
		return nil
	}
	return fmt.Errorf("checkout session cannot move from %s to %s", from, to)
}

// PlanStatus is the status of a payment plan.
type PlanStatus string

const (
	PlanActive   PlanStatus = "active"
	PlanArchived PlanStatus = "archived"
	PlanExpired  PlanStatus = "expired"
)

// PlanStatuses lists every payment plan status.
var PlanStatuses = []PlanStatus{PlanActive, PlanArchived, PlanExpired}

// Valid reports whether s is a known status.
func (s PlanStatus) Valid() bool { return slices.Contains(PlanStatuses, s) }
