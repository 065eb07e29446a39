package workflows

import (
	"fmt"
	"slices"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// The session's updates: a merchant's resolution, assignment and cancel,
// and a payer's submitted hash.

// validateResolution refuses a resolution the session as the workflow
// knows it does not take.
func (cs *checkoutSession) validateResolution(in ResolveInput) error {
	view := payment.Session{Status: cs.status, Exception: cs.exception}
	if _, err := view.Resolve(in.Resolution, in.At); err != nil {
		return temporal.NewApplicationError(err.Error(), ErrorConflict)
	}
	return nil
}

// onResolveException records a merchant's resolution (UpdateResolveException).
func (cs *checkoutSession) onResolveException(ctx workflow.Context, in ResolveInput) error {
	ctx = withLocalActivityOptions(ctx)
	// The session as the workflow knows it decides, as it will decide
	// every later settlement.
	view := payment.Session{Status: cs.status, Exception: cs.exception, CompletedAt: cs.completedAt}
	if _, err := view.Resolve(in.Resolution, in.At); err != nil {
		return temporal.NewApplicationError(err.Error(), ErrorConflict)
	}
	if err := resolveCheckoutSession(ctx, in); err != nil {
		return err
	}
	cs.status, cs.exception, cs.completedAt, cs.resolution = view.Status, view.Exception, view.CompletedAt, in.Resolution
	cs.resolvedPaid, _ = decimal.NewFromString(cs.paid)
	cs.upsertStatus(ctx)
	return nil
}

// onAssignTransfer records a merchant's assignment of an unexpected
// transfer (UpdateAssignTransfer) and leaves its settling to the main loop.
func (cs *checkoutSession) onAssignTransfer(ctx workflow.Context, in AssignInput) (payment.Transaction, error) {
	ctx = withLocalActivityOptions(ctx)
	t, err := assignTransfer(ctx, in)
	if err != nil {
		return t, err
	}
	if cs.ledger.ofRecord(t.ID) == nil {
		// Late as the session stands now, not marked seen late: its
		// record's news counts it in time (lateAt).
		cs.ledger.addRecord(t.ID, payment.PaymentLine{AssetID: t.AssetDefinitionID, AmountBaseUnits: t.AmountBaseUnits,
			Status: t.Status, Late: cs.late()}, false)
	}
	// The main loop settles (it owns the session's records), or the end
	// of the workflow does, when the loop has finished.
	cs.assignmentUnsettled = true
	cs.claims.SendAsync(t.ID)
	return t, nil
}

func (cs *checkoutSession) validateCancel(CancelRequest) error {
	if cs.status != payment.SessionOpen {
		return fmt.Errorf("only an open session can be canceled; this one is %s", cs.status)
	}
	return nil
}

// onCancel records the merchant's cancel (UpdateCancelSession).
func (cs *checkoutSession) onCancel(ctx workflow.Context, in CancelRequest) error {
	ctx = withLocalActivityOptions(ctx)
	if err := payment.AdvanceSession(cs.status, payment.SessionCanceled); err != nil {
		return err
	}
	if err := cancelCheckoutSession(ctx, CancelSessionInput{SessionID: cs.s.ID, At: workflow.Now(ctx), Audit: in.Audit}); err != nil {
		return err
	}
	cs.status = payment.SessionCanceled
	cs.upsertStatus(ctx)
	return nil
}

func (cs *checkoutSession) validateSubmission(ctx workflow.Context, in SubmitInput) error {
	if !slices.ContainsFunc(cs.s.PaymentOptions, func(o payment.PaymentOption) bool { return o.Network == in.Network }) {
		return temporal.NewApplicationError("must be one of the session's networks", ErrorInvalid)
	}
	switch {
	case cs.status == payment.SessionCanceled || cs.status == payment.SessionExpired && !workflow.Now(ctx).Before(cs.s.LateUntil):
		return temporal.NewApplicationError("The checkout session no longer takes payments", ErrorConflict)
	case !cs.ledger.isClaimed(in.TxHash) && cs.ledger.claims() >= MaxSubmittedHashes:
		return temporal.NewApplicationError(fmt.Sprintf("The checkout session takes at most %d submitted transaction hashes", MaxSubmittedHashes), ErrorConflict)
	}
	return nil
}

// onSubmitPayment records a payer's hash as a claim (UpdateSubmitPayment)
// and has its transaction's workflow follow it.
func (cs *checkoutSession) onSubmitPayment(ctx workflow.Context, in SubmitInput) (payment.Transaction, error) {
	ctx = withLocalActivityOptions(ctx)
	cs.ledger.claim(in.TxHash)
	now := workflow.Now(ctx)
	var id string
	_ = workflow.SideEffect(ctx, func(workflow.Context) any { return payment.NewID(payment.PrefixTx, now) }).Get(&id)
	t, err := recordClaim(ctx, ClaimInput{Claim: payment.Claim(cs.s, in.Network, in.ChainID, in.TxHash, id, now)})
	if err != nil || !t.IsClaim() || t.Status.Terminal() {
		return t, err // a transfer recorded before: its workflow tells the session
	}
	if cs.ledger.ofRecord(t.ID) == nil {
		seenLate := cs.late()
		cs.ledger.addRecord(t.ID, payment.PaymentLine{Status: payment.TxPending, Late: seenLate}, seenLate)
	}
	p := SessionTransfer{SessionID: cs.s.ID, Network: in.Network, ChainID: in.ChainID, TxHash: in.TxHash,
		LogIndex: payment.LogIndexClaim, To: cs.s.DepositAddress, Source: "payer"}
	if !cs.inline[p.Key()] { // if it is, its next look takes the claim
		if err := cs.follow(ctx, TransactionInput{Transfer: p, Session: cs.s}); err != nil {
			return payment.Transaction{}, err
		}
	}
	cs.claims.SendAsync(t.ID)
	return t, nil
}
