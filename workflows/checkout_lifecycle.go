package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// A session's workflow lives in phases, one after the other, which its
// main loop (run) moves it through between two handlers:
//
//	phaseTakingPayments ─(closed)→ phaseClosed ─(done)→ phaseWaitingForLateScan
//	    ─(networks scanned past LateUntil)→ phaseScannedLate ─(done)→ end
//
// Its expiry is decided beside them, by the expiry timer's handler and
// the scan's word, and may still be under way when the workflow closes (a
// session completed or canceled while it waited for the scan):
//
//	expiryAhead ─(expiresAt passed, taking payments)→ expiryAwaitingScan
//	    ─(networks scanned past expiresAt)→ expiryDecided (expired, or
//	    nothing left to decide) or expiryAwaitingConfirmations ─(the
//	    payments made in time completed it, or are final)→ expiryDecided

// phase is where a session's workflow stands in its life.
type phase int

const (
	// phaseTakingPayments: the session takes payments made in time.
	phaseTakingPayments phase = iota
	// phaseClosed: the session takes no more payments in time (expired,
	// completed or canceled); it records late ones until the end of the
	// late-payment window, when a timer wakes the main loop.
	phaseClosed
	// phaseWaitingForLateScan: done (the window is over, every payment
	// final), the workflow waits until every network the session takes
	// has been scanned past the window (up to ScanWaitLimit), so that no
	// transfer mined inside it reaches the session after it has ended.
	phaseWaitingForLateScan
	// phaseScannedLate: the networks are scanned past the window; the
	// workflow ends once it is done again (a payment reported meanwhile
	// may hold it).
	phaseScannedLate
)

// expiryState is how far a session's expiry is decided. Lateness is the
// chain's: a payment mined before expiresAt is in time however late
// chainwatch sees it (a node outage, a worker restart), so expiry waits
// for the scan.
type expiryState int

const (
	// expiryAhead: expiresAt has not passed while the session took
	// payments (it had completed or been canceled first, if it has).
	expiryAhead expiryState = iota
	// expiryAwaitingScan: expiresAt passed while the session took
	// payments; it waits until every network has been scanned past it.
	// Meanwhile only payments made in time may complete the session.
	expiryAwaitingScan
	// expiryAwaitingConfirmations: scanned past expiresAt, payments made
	// in time were still confirming: the session completes if they reach
	// the amount due, and expires once they are final if they do not.
	expiryAwaitingConfirmations
	// expiryDecided: the session expired, or completed, or had nothing
	// left for its expiry to decide.
	expiryDecided
)

// closed tells that the session takes no more payments in time.
func (cs *checkoutSession) closed() bool {
	return cs.expiry == expiryAwaitingConfirmations || cs.expiry == expiryDecided ||
		cs.status == payment.SessionCompleted || cs.status == payment.SessionCanceled
}

// enterClosed moves the workflow to phaseClosed, with a timer to wake it
// at the end of the late-payment window if that is still ahead.
func (cs *checkoutSession) enterClosed(ctx workflow.Context) {
	cs.phase = phaseClosed
	if workflow.Now(ctx).Before(cs.s.LateUntil) {
		cs.sel.AddFuture(workflow.NewTimer(ctx, cs.s.LateUntil.Sub(workflow.Now(ctx))), func(workflow.Future) {})
	}
}

// done tells that the session may end: it is closed, its late-payment
// window has passed and every payment is final.
func (cs *checkoutSession) done(ctx workflow.Context) bool {
	if cs.phase < phaseClosed || workflow.Now(ctx).Before(cs.s.LateUntil) {
		return false
	}
	for l := range cs.ledger.payments() {
		if !l.Status.Terminal() {
			return false
		}
	}
	return true
}

// waitForLateScan moves the workflow to phaseWaitingForLateScan: the main
// loop waits until every network the session takes has been scanned past
// the late-payment window, then moves it to phaseScannedLate.
func (cs *checkoutSession) waitForLateScan(ctx workflow.Context) {
	cs.phase = phaseWaitingForLateScan
	scannedLate := workflow.NewChannel(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		cs.waitScanned(ctx, cs.s.LateUntil, cs.s.LateUntil.Add(ScanWaitLimit))
		scannedLate.Send(ctx, nil)
	})
	cs.sel.AddReceive(scannedLate, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		cs.phase = phaseScannedLate
	})
}

// onExpiry handles the expiry timer: a session still taking payments
// waits until every network has been scanned past expiresAt, then decides
// (onScannedPastExpiry).
func (cs *checkoutSession) onExpiry(ctx workflow.Context) error {
	if !cs.takesPayments() {
		return nil // completed or canceled first: nothing to decide
	}
	cs.expiry = expiryAwaitingScan
	workflow.Go(ctx, func(ctx workflow.Context) {
		// Not past ScanWaitLimit after the late-payment window, though: a
		// network that stopped for good does not hold the session for ever.
		cs.waitScanned(ctx, cs.s.ExpiresAt, cs.s.LateUntil.Add(ScanWaitLimit))
		cs.scanned.Send(ctx, nil)
	})
	return nil
}

// onScannedPastExpiry decides the expiry once the networks have been
// scanned past expiresAt: a session still taking payments expires, unless
// payments made in time are still confirming: it then waits for them.
func (cs *checkoutSession) onScannedPastExpiry(ctx workflow.Context) error {
	cs.expiry = expiryDecided
	if cs.takesPayments() {
		if cs.confirming() {
			cs.expiry = expiryAwaitingConfirmations
			return nil
		}
		if err := cs.expire(ctx); err != nil {
			return err
		}
	}
	return cs.settle(ctx) // the late payments seen while it waited
}

// settle settles the session over its lines, as far as its expiry allows.
func (cs *checkoutSession) settle(ctx workflow.Context) error {
	switch {
	case cs.expiry == expiryAwaitingScan && cs.takesPayments():
		// Past expiresAt, before the chain has been read that far: only
		// payments made in time may complete the session.
		return cs.settleOver(ctx, true)
	case cs.expiry != expiryAwaitingConfirmations:
		return cs.settleOver(ctx, false)
	}
	if err := cs.settleOver(ctx, true); err != nil || cs.status == payment.SessionCompleted {
		cs.expiry = expiryDecided
		if err == nil {
			err = cs.settleOver(ctx, false) // late payments made while it waited count too, flagged
		}
		return err
	}
	if !cs.confirming() {
		cs.expiry = expiryDecided
		return cs.expire(ctx)
	}
	return nil
}

// settleOver settles the session over its lines (only those in time, if
// onTimeOnly) and records what changed.
func (cs *checkoutSession) settleOver(ctx workflow.Context, onTimeOnly bool) error {
	list := make([]payment.PaymentLine, 0, cs.ledger.len())
	for l := range cs.ledger.payments() {
		if !onTimeOnly || !l.Late {
			list = append(list, l)
		}
	}
	out := payment.Settle(cs.s, cs.status, list, cs.settings.CompleteOn, cs.settings.TolerancePercent)
	if cs.resolution != "" {
		out = cs.resolution.Keep(out, cs.resolvedPaid)
	}
	if out.Status == payment.SessionProcessing && !out.SeenUSD.IsPositive() {
		out.Status = payment.SessionOpen // every payment it saw failed
	}
	if out.Status == cs.status && out.PaidUSD.String() == cs.paid && out.Exception == cs.exception {
		return nil
	}
	if out.Status != cs.status {
		if err := payment.AdvanceSession(cs.status, out.Status); err != nil {
			return err
		}
	}
	now := workflow.Now(ctx)
	if out.Status == payment.SessionCompleted && cs.completedAt == nil {
		cs.completedAt = &now
	}
	cs.status, cs.paid, cs.exception = out.Status, out.PaidUSD.String(), out.Exception
	cs.upsertStatus(ctx)
	return recordSessionProgress(ctx, ProgressInput{SessionID: cs.s.ID, Status: cs.status,
		PaidUSD: cs.paid, Exception: cs.exception, CompletedAt: cs.completedAt, At: now})
}

// expire records the session's expiry, then settles its late payments.
func (cs *checkoutSession) expire(ctx workflow.Context) error {
	if err := payment.AdvanceSession(cs.status, payment.SessionExpired); err != nil {
		return err
	}
	if err := expireCheckoutSession(ctx, ExpireSessionInput{SessionID: cs.s.ID, At: cs.s.ExpiresAt}); err != nil {
		return err
	}
	cs.status = payment.SessionExpired
	cs.upsertStatus(ctx)
	return cs.settleOver(ctx, false)
}

func (cs *checkoutSession) upsertStatus(ctx workflow.Context) {
	_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(cs.status)))
	if cs.cancelExpiry != nil && (cs.status == payment.SessionCompleted || cs.status == payment.SessionCanceled) {
		cs.cancelExpiry() // nothing left for the expiry to decide
	}
}

func (cs *checkoutSession) takesPayments() bool {
	return cs.status == payment.SessionOpen || cs.status == payment.SessionProcessing
}

// confirming reports a payment seen before expiresAt that may still count
// (not failed, not yet at completeOn).
func (cs *checkoutSession) confirming() bool {
	for l := range cs.ledger.payments() {
		if !l.Late && l.Status != payment.TxFailed && !payment.Counts(l.Status, cs.settings.CompleteOn) {
			return true
		}
	}
	return false
}
