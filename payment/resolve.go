package payment

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// Resolution is a merchant's decision about a session's exception, made
// through the API (never by editing the records): it is recorded on the
// session, with an event and an audit entry.
type Resolution string

const (
	// ResolutionUnderpaymentAccepted: the merchant takes an underpaid
	// session as paid (an exchange's withdrawal fee kept part of it): the
	// session completes with what was paid.
	ResolutionUnderpaymentAccepted Resolution = "underpayment_accepted"
	// ResolutionOverpaymentSettled: the merchant settled an overpayment
	// with the customer outside the engine (a refund, a credit): the
	// exception is cleared.
	ResolutionOverpaymentSettled Resolution = "overpayment_settled"
	// ResolutionReversalSettled: the merchant settled with the customer a
	// payment a reorg took away (payment_reversed): paid again another
	// way, or written off. The exception is cleared.
	ResolutionReversalSettled Resolution = "reversal_settled"
)

// Resolutions lists every resolution.
var Resolutions = []Resolution{ResolutionUnderpaymentAccepted, ResolutionOverpaymentSettled, ResolutionReversalSettled}

// ResolutionNames lists the resolutions for an error message.
const ResolutionNames = "underpayment_accepted, overpayment_settled or reversal_settled"

// Valid reports whether r is a known resolution.
func (r Resolution) Valid() bool { return slices.Contains(Resolutions, r) }

// resolves is the exception each resolution clears.
var resolves = map[Resolution]string{
	ResolutionUnderpaymentAccepted: ExceptionUnderpaid,
	ResolutionOverpaymentSettled:   ExceptionOverpaid,
	ResolutionReversalSettled:      ExceptionReversed,
}

// Resolve applies a merchant's resolution to the session and returns the
// events of the change: checkout.session.completed when an accepted
// underpayment completes it, then checkout.session.resolved. A session
// without the exception the resolution clears is a conflict.
func (s *Session) Resolve(r Resolution, at time.Time) ([]EventType, error) {
	want, ok := resolves[r]
	if !ok {
		var probs Problems
		probs.Add("resolution", "must be "+ResolutionNames)
		return nil, probs.Err()
	}
	if s.Exception != want {
		found := "none"
		if s.Exception != "" {
			found = s.Exception
		}
		return nil, Conflict("Only a session flagged " + want + " takes " + string(r) + "; this session's exception is " + found)
	}
	var events []EventType
	if r == ResolutionUnderpaymentAccepted && s.Status != SessionCompleted {
		s.Status, s.CompletedAt = SessionCompleted, &at
		events = append(events, EventSessionCompleted)
	}
	s.Exception, s.Resolution = "", r
	return append(events, EventSessionResolved), nil
}

// Keep adjusts a later settlement of a resolved session (its payments
// changed after the resolution): a session whose underpayment was accepted
// with resolvedPaid, or whose reversal was settled at resolvedPaid, is not
// flagged payment_reversed while at least that much still counts, and one
// whose overpayment was settled is not flagged
// overpaid again until more than resolvedPaid has been paid.
func (r Resolution) Keep(out Settlement, resolvedPaid decimal.Decimal) Settlement {
	switch {
	case (r == ResolutionUnderpaymentAccepted || r == ResolutionReversalSettled) && out.Exception == ExceptionReversed &&
		out.PaidUSD.GreaterThanOrEqual(resolvedPaid):
		out.Exception = ""
	case r == ResolutionOverpaymentSettled && out.Exception == ExceptionOverpaid && out.PaidUSD.LessThanOrEqual(resolvedPaid):
		out.Exception = ""
	}
	return out
}
