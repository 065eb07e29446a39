package payment

import (
	"github.com/shopspring/decimal"
)

// Exceptions flag a session that needs a human.
const (
	ExceptionUnderpaid = "underpaid"
	ExceptionOverpaid  = "overpaid"
	ExceptionPaidLate  = "paid_late"
	// ExceptionReversed flags a completed session whose counted payments
	// no longer reach the amount due: one was reorged out, or failed.
	ExceptionReversed = "payment_reversed"
)

// PaymentLine is one payment to a session as its workflow knows it.
type PaymentLine struct {
	AssetID         string
	AmountBaseUnits string
	Status          TransactionStatus
	// Late is true for a payment first seen after the session expired.
	Late bool
}

// Settlement is a session's state after its payments.
type Settlement struct {
	Status    SessionStatus
	PaidUSD   decimal.Decimal
	Exception string
	// SeenUSD is what the payments not failed are worth, counted or not.
	SeenUSD decimal.Decimal
}

// LineUSD values a payment at the session's quoted rate for its asset: a
// payment in any accepted asset counts at the rate the session offered.
// Unknown assets are worth nothing.
func LineUSD(s Session, l PaymentLine) decimal.Decimal {
	for _, o := range s.PaymentOptions {
		if o.AssetDefinitionID != l.AssetID {
			continue
		}
		quoted, err1 := decimal.NewFromString(o.AmountBaseUnits)
		paid, err2 := decimal.NewFromString(l.AmountBaseUnits)
		if err1 != nil || err2 != nil || !quoted.IsPositive() {
			return decimal.Zero
		}
		return paid.Mul(s.AmountUSD).DivRound(quoted, USDScale)
	}
	return decimal.Zero
}

// Counts reports whether a transaction in status s counts toward a session
// whose project completes on completeOn.
func Counts(s, completeOn TransactionStatus) bool {
	return s == TxFinalized || s == TxConfirmed && completeOn == TxConfirmed
}

// Settle works out a session's status, amount paid and exception from its
// payments. status is the session's current status: completed stays
// completed, and expiry is decided by the caller. The amount paid counts
// transactions that reached completeOn; the session completes once it
// reaches the amount due less tolerancePercent.
func Settle(s Session, status SessionStatus, lines []PaymentLine, completeOn TransactionStatus, tolerancePercent decimal.Decimal) Settlement {
	paid, seen := decimal.Zero, decimal.Zero
	late := false
	for _, l := range lines {
		if l.Status == TxFailed || l.Status == TxReversed {
			continue // nothing on its way
		}
		usd := LineUSD(s, l)
		seen = seen.Add(usd)
		if Counts(l.Status, completeOn) {
			paid = paid.Add(usd)
		}
		late = late || l.Late
	}
	threshold := s.AmountUSD.Mul(decimal.NewFromInt(100).Sub(tolerancePercent)).Div(decimal.NewFromInt(100))
	out := Settlement{Status: status, PaidUSD: paid, SeenUSD: seen}
	switch status {
	case SessionOpen, SessionProcessing:
		if paid.GreaterThanOrEqual(threshold) && paid.IsPositive() {
			out.Status = SessionCompleted
		} else if seen.IsPositive() {
			out.Status = SessionProcessing
		}
	}
	switch {
	case status == SessionCompleted && paid.LessThan(threshold):
		out.Exception = ExceptionReversed
	case paid.GreaterThan(s.AmountUSD):
		out.Exception = ExceptionOverpaid
	case late:
		out.Exception = ExceptionPaidLate
	case out.Status != SessionCompleted && paid.IsPositive() && paid.LessThan(threshold) && seen.Equal(paid):
		// Everything sent has counted and it is not enough: the customer
		// owes the rest (a top-up clears the flag).
		out.Exception = ExceptionUnderpaid
	}
	return out
}

// Resettle works out a closed session's books again from its records,
// once a payment that counted for it is reversed past finality (or
// returns after that): its workflow has ended, so the records are all
// there is. A payment counts as Settle counts it; one first recorded
// after the session expired is late. A merchant's resolution keeps its
// effect while no reversed payment is missing from what it covered.
func Resettle(s Session, records []Transaction, completeOn TransactionStatus, tolerancePercent decimal.Decimal) SessionProgress {
	var lines []PaymentLine
	resolvedPaid, stillPaid := decimal.Zero, decimal.Zero
	for _, t := range records {
		if t.Unexpected && t.AssignedSessionID != s.ID || t.IsClaim() {
			continue
		}
		l := PaymentLine{AssetID: t.AssetDefinitionID, AmountBaseUnits: t.AmountBaseUnits, Status: t.Status,
			Late: t.Unexpected || !t.CreatedAt.Before(s.ExpiresAt)}
		lines = append(lines, l)
		if Counts(t.Status, completeOn) || t.Status == TxReversed {
			resolvedPaid = resolvedPaid.Add(LineUSD(s, l))
		}
		if Counts(t.Status, completeOn) {
			stillPaid = stillPaid.Add(LineUSD(s, l))
		}
	}
	if s.Resolution == ResolutionReversalSettled {
		resolvedPaid = stillPaid // settled as it stands: only a further reversal flags it again
	}
	out := Settle(s, s.Status, lines, completeOn, tolerancePercent)
	if s.Resolution != "" {
		out = s.Resolution.Keep(out, resolvedPaid)
	}
	return SessionProgress{Status: out.Status, PaidUSD: out.PaidUSD, Exception: out.Exception, CompletedAt: s.CompletedAt}
}
