package service

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
)

// Kinds of reconciliation finding of money out: refunds and payouts.
const (
	// FindingRefundNotOnChain: a refund recorded confirmed or finalized
	// whose transaction the chain does not show paying it (not mined,
	// reverted, or not its asset and amount to its address): the records
	// say money went back that did not.
	FindingRefundNotOnChain = "refund-not-on-chain"
	// FindingRefundOverdrawn: a session whose refunds that hold take more
	// of an asset than it received in finalized transfers.
	FindingRefundOverdrawn = "refund-overdrawn"
	// FindingPayoutNotOnChain: a payout recorded confirmed or finalized
	// whose transaction the chain does not show paying it.
	FindingPayoutNotOnChain = "payout-not-on-chain"
)

// reconcileRefunds checks the refunds against the chain and the books.
// Nothing is repaired: money out is the merchant's to settle.
func (svc *Service) reconcileRefunds(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	var out []Finding
	refunds, err := svc.store.RefundsToCheck(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	for _, r := range refunds {
		f, err := svc.checkSent(ctx, FindingRefundNotOnChain, r.ID, r.Network, r.TxHash, r.Status, func(look payment.SentLook) bool {
			check := r
			check.Status = payment.RefundSent
			look.Sources, _ = svc.store.ProvenAddresses(ctx, r.ProjectID, r.IsLive)
			payment.FollowRefund(&check, look)
			return check.Status == payment.RefundFinalized
		})
		if err != nil {
			return out, fmt.Errorf("refund %s: %w", r.ID, err)
		}
		out = append(out, f...)
	}
	sessions, err := svc.store.RefundedSessions(ctx, o.ProjectID)
	if err != nil {
		return out, err
	}
	for _, id := range sessions {
		txs, err := svc.store.SessionTransactions(ctx, id)
		if err != nil {
			return out, err
		}
		refunds, err := svc.store.SessionRefunds(ctx, id)
		if err != nil {
			return out, err
		}
		balances, _ := payment.RefundBalances(id, txs, refunds)
		held := map[string]bool{}
		for _, b := range balances {
			held[b.AssetID] = true
			if b.Remaining.Sign() < 0 {
				out = append(out, Finding{Kind: FindingRefundOverdrawn, ObjectID: id,
					Detail: fmt.Sprintf("%s: refunds hold %s base units more than the %s received", b.AssetID, b.Remaining.Neg(b.Remaining), b.Received)})
			}
		}
		for _, r := range refunds {
			if r.Status.Holds() && !held[r.AssetDefinitionID] {
				held[r.AssetDefinitionID] = true
				out = append(out, Finding{Kind: FindingRefundOverdrawn, ObjectID: id,
					Detail: fmt.Sprintf("%s: refunds hold it, but the session received none in finalized transfers", r.AssetDefinitionID)})
			}
		}
	}
	return out, nil
}

// checkSent checks a sent transfer the engine prepared (a refund's, a
// payout's) recorded confirmed or finalized against the chain: followed
// from sent as the chain is now (as if final), it must come out finalized
// (finalizes says whether it does).
func (svc *Service) checkSent(ctx context.Context, kind, id, network, hash string, status payment.RefundStatus,
	finalizes func(payment.SentLook) bool) ([]Finding, error) {
	if status == payment.RefundSent {
		return nil, nil // not yet mined, or mined since: chainwatch records it
	}
	c, ok := svc.chains[network]
	if !ok || c.IsBitcoin() {
		return []Finding{{Kind: kind, ObjectID: id, Detail: fmt.Sprintf("%s on %s: the network is not configured", hash, network),
			Error: "not checked"}}, nil
	}
	st, err := chainwatch.CheckTransaction(ctx, c.Client, common.HexToHash(hash), false, c.Scanner().Traces)
	if err != nil {
		return nil, err
	}
	look := payment.SentLook{Mined: st.Mined, Succeeded: st.Succeeded, Final: true, Transfers: c.PaymentTransfers(st.Transfers),
		Sender: st.Sender.Hex()}
	if finalizes(look) {
		return nil, nil
	}
	return []Finding{{Kind: kind, ObjectID: id, Detail: fmt.Sprintf("recorded %s in %s; the chain shows it %s", status, hash, chainSays(st))}}, nil
}

// reconcilePayouts checks the payouts recorded confirmed or finalized
// against the chain. Nothing is repaired.
func (svc *Service) reconcilePayouts(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	payouts, err := svc.store.PayoutsToCheck(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, p := range payouts {
		f, err := svc.checkSent(ctx, FindingPayoutNotOnChain, p.ID, p.Network, p.TxHash, p.Status, func(look payment.SentLook) bool {
			check := p
			check.Status = payment.RefundSent
			payment.FollowPayout(&check, look)
			return check.Status == payment.RefundFinalized
		})
		if err != nil {
			return out, fmt.Errorf("payout %s: %w", p.ID, err)
		}
		out = append(out, f...)
	}
	return out, nil
}

// chainSays names what the chain shows of a sent transfer's transaction
// that does not pay it.
func chainSays(st chainwatch.TxState) string {
	switch {
	case !st.Mined:
		return "not mined"
	case !st.Succeeded:
		return "reverted"
	}
	return "not paying the prepared asset and amount to its address"
}
