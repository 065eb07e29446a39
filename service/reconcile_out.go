package service

import (
	"context"
	"fmt"
	"strings"

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

// outgoing is a refund or a payout recorded with a transaction, as the
// reconciliation checks it against the chain.
type outgoing struct {
	what      string // refund, payout
	id        string
	projectID string
	payment.Outgoing
	// finalizes says whether, followed from sent as the chain is now (as
	// if final), it comes out finalized.
	finalizes func(payment.SentLook) bool
}

// refundOut is a refund as the reconciliation checks it; sources are its
// project's proven addresses, which may pay it besides its own.
func refundOut(r payment.Refund, sources []string) outgoing {
	return outgoing{what: "refund", id: r.ID, projectID: r.ProjectID, Outgoing: r.Outgoing,
		finalizes: func(look payment.SentLook) bool {
			check := r
			check.Status = payment.RefundSent
			look.Sources = sources
			payment.FollowRefund(&check, look)
			return check.Status == payment.RefundFinalized
		}}
}

func payoutOut(p payment.Payout) outgoing {
	return outgoing{what: "payout", id: p.ID, projectID: p.ProjectID, Outgoing: p.Outgoing,
		finalizes: func(look payment.SentLook) bool {
			check := p
			check.Status = payment.RefundSent
			payment.FollowPayout(&check, look)
			return check.Status == payment.RefundFinalized
		}}
}

// recordedPaid tells whether the records say the chain paid it.
func (o outgoing) recordedPaid() bool {
	return o.Status == payment.RefundConfirmed || o.Status == payment.RefundFinalized
}

// reconcileMoneyOut checks the refunds and the payouts recorded confirmed
// or finalized against the chain (each transaction read once), and the
// refunds against their sessions' books. Nothing is repaired: money out is
// the merchant's to settle.
func (svc *Service) reconcileMoneyOut(ctx context.Context, o ReconcileOptions, down map[string]error) ([]Finding, error) {
	refunds, err := svc.store.RefundsToCheck(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	payouts, err := svc.store.PayoutsToCheck(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	txs := &sentTxs{svc: svc, down: down, read: map[string]sentTx{}, proven: map[string][]string{}}
	var out []Finding
	check := func(kind string, item outgoing) error {
		f, _, err := txs.check(ctx, kind, item)
		if err != nil {
			return fmt.Errorf("%s %s: %w", item.what, item.id, err)
		}
		out = append(out, f...)
		return nil
	}
	for _, r := range refunds {
		sources, err := txs.sources(ctx, r.ProjectID, r.IsLive)
		if err != nil {
			return out, err
		}
		if err := check(FindingRefundNotOnChain, refundOut(r, sources)); err != nil {
			return out, err
		}
	}
	overdrawn, err := svc.refundsOverdrawn(ctx, o)
	if out = append(out, overdrawn...); err != nil {
		return out, err
	}
	for _, p := range payouts {
		if err := check(FindingPayoutNotOnChain, payoutOut(p)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// refundsOverdrawn checks the books of the sessions with refunds that
// hold: no asset refunded beyond what came in, finalized.
func (svc *Service) refundsOverdrawn(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	sessions, err := svc.store.RefundedSessions(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	var out []Finding
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

// sentTx is a transaction refunds or payouts are recorded with, as the
// chain shows it; or, when it was not read, why (notRead).
type sentTx struct {
	st      chainwatch.TxState
	look    payment.SentLook
	notRead string
}

// sentTxs reads the transactions of money out from the chain, each once,
// the networks down left unread; and the projects' proven addresses that
// may pay their refunds, each once.
type sentTxs struct {
	svc  *Service
	down map[string]error
	read map[string]sentTx // by network and hash
	// proven are the projects' proven addresses, by project and
	// environment.
	proven map[string][]string
}

// sources returns a project environment's proven addresses, which may pay
// its refunds besides their own.
func (r *sentTxs) sources(ctx context.Context, projectID string, isLive bool) ([]string, error) {
	key := fmt.Sprint(projectID, "/", isLive)
	if a, ok := r.proven[key]; ok {
		return a, nil
	}
	a, err := r.svc.store.ProvenAddresses(ctx, projectID, isLive)
	if err != nil {
		return nil, err
	}
	r.proven[key] = a
	return a, nil
}

// get reads a transaction of a network. Only the end of ctx is an error:
// a network not configured, down, or that fails to answer is said in
// notRead.
func (r *sentTxs) get(ctx context.Context, network, hash string) (sentTx, error) {
	key := network + "/" + strings.ToLower(hash)
	if tx, ok := r.read[key]; ok {
		return tx, nil
	}
	var tx sentTx
	c, ok := r.svc.chains[network]
	switch {
	case !ok:
		tx.notRead = "the network is not configured here: give this command the worker's NETWORKS (or NETWORKS_FILE) for it to read the chain"
	case c.IsBitcoin():
		tx.notRead = "money out on a Bitcoin network is not checked"
	case r.down[network] != nil:
		tx.notRead = "the network's nodes cannot be read (see its " + FindingNetworkUnreachable + " finding)"
	default:
		st, err := chainwatch.CheckTransaction(ctx, c.Client, common.HexToHash(hash), false, c.Scanner().Traces)
		if err != nil {
			if ctx.Err() != nil {
				return tx, ctx.Err()
			}
			tx.notRead = "the network's nodes did not answer: " + err.Error()
			break
		}
		tx.st = st
		tx.look = payment.SentLook{Mined: st.Mined, Succeeded: st.Succeeded, Final: true, Transfers: c.PaymentTransfers(st.Transfers),
			Sender: st.Sender.Hex()}
	}
	r.read[key] = tx
	return tx, nil
}

// check checks one refund or payout recorded confirmed or finalized
// against the chain: followed from sent as the chain is now (as if
// final), it must come out finalized. paid says it does; a finding of
// kind says it does not, or that it could not be checked.
func (r *sentTxs) check(ctx context.Context, kind string, o outgoing) (_ []Finding, paid bool, _ error) {
	if !o.recordedPaid() {
		return nil, false, nil // sent: not yet mined, or mined since: chainwatch records it
	}
	tx, err := r.get(ctx, o.Network, o.TxHash)
	switch {
	case err != nil:
		return nil, false, err
	case tx.notRead != "":
		return []Finding{{Kind: kind, ObjectID: o.id, Detail: fmt.Sprintf("%s on %s: %s", o.TxHash, o.Network, tx.notRead),
			Error: "not checked"}}, false, nil
	case o.finalizes(tx.look):
		return nil, true, nil
	}
	return []Finding{{Kind: kind, ObjectID: o.id, Detail: fmt.Sprintf("recorded %s in %s; the chain shows it %s", o.Status, o.TxHash, chainSays(tx.st))}}, false, nil
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
	return "not paying the prepared asset and amount to its address from its source"
}
