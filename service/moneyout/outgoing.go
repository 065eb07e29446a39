package moneyout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/paymentsd/paymentsd/activities/sentlook"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// checkReport refuses a reported transaction before it is recorded when
// the project has too many in flight, or when it is mined already and
// does not pay the item from its source (the domain's rejection, said
// now rather than after the item moved). A transaction not mined yet is
// taken, and its workflow judges it once mined.
func (svc Service) checkReport(ctx context.Context, p payment.Principal, id string, o payment.Outgoing, txHash string) error {
	if o.Bitcoin() {
		if _, ok := payment.NormalizeBitcoinTxID(txHash); !ok {
			return nil // the domain says what is wrong
		}
	} else if !payment.ValidTxHash(txHash) || strings.EqualFold(o.TxHash, txHash) {
		return nil // the domain says what is wrong, or that nothing changes
	}
	if o.Status == payment.RefundAwaitingSignature {
		n, err := svc.Store.MoneyOut().OutgoingInFlight(ctx, p.ProjectID, p.IsLive)
		if err != nil {
			return err
		}
		if n >= payment.MaxInFlight {
			return &payment.Error{Kind: payment.KindRateLimited, Message: fmt.Sprintf(
				"The project has %d refunds and payouts whose transactions are not mined yet: report more once those are mined, or cancel the stale ones", n)}
		}
	}
	c, ok := svc.Chains[o.Network]
	if !ok {
		return nil
	}
	if o.Bitcoin() {
		txHash, _ = payment.NormalizeBitcoinTxID(txHash)
	}
	if strings.EqualFold(o.TxHash, txHash) {
		return nil // nothing changes
	}
	l, known, err := sentlook.Look(ctx, svc.Store, c, sentlook.Item{ID: id, ProjectID: p.ProjectID, IsLive: p.IsLive, Outgoing: o}, txHash)
	if err != nil || !known {
		return nil // not known yet: the workflow looks again
	}
	// Judged by what it pays: a Bitcoin transaction the scans saw pays
	// the same outputs wherever it is mined.
	l.Mined, l.Succeeded = true, true
	l.Now = svc.Now()
	return payment.CheckReported(o, txHash, l)
}

// follow starts, or wakes, the workflow that follows a refund or payout
// from its approval, once its change is recorded (approved, sent,
// canceled while stale). A start that fails here is made by the worker's
// sweep of pending follows.
func (svc Service) follow(ctx context.Context, id, projectID string, isLive bool, o payment.Outgoing) {
	if svc.Temporal == nil {
		return
	}
	err := workflows.StartOutgoing(ctx, svc.Temporal, id, projectID, isLive, o)
	if err == nil {
		err = svc.Store.MoneyOut().FollowStarted(ctx, id)
	}
	if err != nil {
		slog.WarnContext(ctx, "outgoing transfer's workflow left to the sweep", "id", id, "err", err)
	}
}

// wake tells the workflow of a refund or payout, if one runs, that the
// item changed (canceled before it was sent): it looks, and ends. None is
// started.
func (svc Service) wake(ctx context.Context, id string) {
	if svc.Temporal != nil {
		_ = svc.Temporal.SignalWorkflow(ctx, workflows.OutgoingWorkflowID(id), "", workflows.SignalOutgoingChanged, nil)
	}
}

// provenSource refuses a source of money out (a payout batch's address)
// that the project has not proven it controls in the environment, as a
// recipient is proven (an EIP-191 or EIP-1271 signature of its
// challenge; one owner an environment and address): without it another
// project could name this one's treasury and take its transfers for its
// own payouts.
func (svc Service) provenSource(ctx context.Context, p payment.Principal, field, address string) error {
	r, err := svc.Store.Checkout().GetRecipient(ctx, p.ProjectID, p.IsLive, strings.ToLower(address))
	if errors.Is(err, payment.ErrNotFound) || err == nil && !r.Verified() {
		return payment.RecipientNotVerified(field, address)
	}
	return err
}

// refuseDestinations refuses, by field, the destinations of money out
// that would come back as money in, or go nowhere: a checkout session's
// deposit address (what is sent there counts as a payment), a project's
// verified recipient (likewise), and the transfer's own source.
func (svc Service) refuseDestinations(ctx context.Context, source string, fields, addrs []string) error {
	kinds, err := svc.Store.MoneyOut().ReceivingAddresses(ctx, addrs)
	if err != nil {
		return err
	}
	var probs payment.Problems
	for i, a := range addrs {
		switch {
		case source != "" && strings.EqualFold(a, source):
			probs.Add(fields[i], "is the address the transfer is paid from")
		case kinds[strings.ToLower(a)] == store.ReceivesDeposit:
			probs.Add(fields[i], "is a checkout session's deposit address: what is sent there counts as a payment, not as money out")
		case kinds[strings.ToLower(a)] == store.ReceivesRecipient:
			probs.Add(fields[i], "is a project's verified receiving address: what is sent there may count as a payment, not as money out")
		}
	}
	return probs.Err()
}
