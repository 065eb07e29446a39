package chains

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/activities/sentlook"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
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
	// FindingOutgoingTransferReused: refunds and payouts (of any
	// projects) recorded confirmed or finalized as paid by one transfer on
	// chain: the same transaction and, in it, the same transfer (its log,
	// or its value or internal call for the native coin). A multisend's
	// transaction pays several payouts, each by a transfer of its own; when
	// the items a transaction's transfers pay cannot each have one of their
	// own, every one of them is found.
	FindingOutgoingTransferReused = "outgoing-transfer-reused"
)

// outgoing is a refund or a payout recorded with a transaction, as the
// reconciliation checks it against the chain.
type outgoing struct {
	what      string // refund, payout
	id        string
	projectID string
	isLive    bool
	createdAt time.Time
	payment.Outgoing
	// finalizes says whether, followed from sent as the chain is now (as
	// if final), it comes out finalized.
	finalizes func(payment.SentLook) bool
}

// refundOut is a refund as the reconciliation checks it; sources are its
// project's proven addresses, which may pay it besides its own.
func refundOut(r payment.Refund, sources []string) outgoing {
	return outgoing{what: "refund", id: r.ID, projectID: r.ProjectID, isLive: r.IsLive, createdAt: r.CreatedAt, Outgoing: r.Outgoing,
		finalizes: func(look payment.SentLook) bool {
			check := r
			check.Status = payment.RefundSent
			look.Sources = sources
			payment.FollowRefund(&check, look)
			return check.Status == payment.RefundFinalized
		}}
}

func payoutOut(p payment.Payout) outgoing {
	return outgoing{what: "payout", id: p.ID, projectID: p.ProjectID, isLive: p.IsLive, createdAt: p.CreatedAt, Outgoing: p.Outgoing,
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
// or finalized against the chain (each transaction read once), the
// transfers they are recorded as paid by against each other's, and the
// refunds against their sessions' books. Nothing is repaired: money out is
// the merchant's to settle.
func (svc Service) reconcileMoneyOut(ctx context.Context, o ReconcileOptions, down map[string]error) ([]Finding, error) {
	refunds, err := svc.Store.MoneyOut().RefundsToCheck(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	payouts, err := svc.Store.MoneyOut().PayoutsToCheck(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	txs := &sentTxs{svc: svc.Core, down: down, read: map[string]sentTx{}, proven: map[string][]string{}}
	var out []Finding
	var paid []outgoing // shown paid by their transactions
	check := func(kind string, item outgoing) error {
		f, ok, err := txs.check(ctx, kind, item)
		if err != nil {
			return fmt.Errorf("%s %s: %w", item.what, item.id, err)
		}
		if ok {
			paid = append(paid, item)
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
	reused, err := svc.transfersReused(ctx, paid, txs)
	return append(out, reused...), err
}

// refundsOverdrawn checks the books of the sessions with refunds that
// hold: no asset refunded beyond what came in, finalized.
func (svc Service) refundsOverdrawn(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	sessions, err := svc.Store.MoneyOut().RefundedSessions(ctx, o.ProjectID)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, id := range sessions {
		txs, err := svc.Store.Payments().SessionTransactions(ctx, id)
		if err != nil {
			return out, err
		}
		refunds, err := svc.Store.MoneyOut().SessionRefunds(ctx, id)
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
	sentlook.Tx
	notRead string
}

// lookFor is the look that judges item o, as if final (the reconciliation
// asks where an item would come out, not when).
func (tx sentTx) lookFor(o outgoing) payment.SentLook {
	l := tx.For(sentlook.Item{ID: o.id, ProjectID: o.projectID, IsLive: o.isLive, Outgoing: o.Outgoing})
	l.Final = l.Mined
	return l
}

// sentTxs reads the transactions of money out from the chain, each once,
// the networks down left unread; and the projects' proven addresses that
// may pay their refunds, each once.
type sentTxs struct {
	svc  *core.Core
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
	a, err := r.svc.Store.MoneyOut().ProvenAddresses(ctx, projectID, isLive)
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
	c, ok := r.svc.Chains[network]
	switch {
	case !ok:
		tx.notRead = "the network is not configured here: give this command the worker's NETWORKS (or NETWORKS_FILE) for it to read the chain"
	case r.down[network] != nil:
		tx.notRead = "the network's nodes cannot be read (see its " + FindingNetworkUnreachable + " finding)"
	default:
		read, err := sentlook.Read(ctx, r.svc.Store, c, hash)
		if err != nil {
			if ctx.Err() != nil {
				return tx, ctx.Err()
			}
			tx.notRead = "the network's nodes did not answer: " + err.Error()
			break
		}
		tx.Tx = read
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
	case o.finalizes(tx.lookFor(o)):
		return nil, true, nil
	}
	return []Finding{{Kind: kind, ObjectID: o.id, Detail: fmt.Sprintf("recorded %s in %s; the chain shows it %s", o.Status, o.TxHash, chainSays(tx.State))}}, false, nil
}

// transfersReused finds, in the transactions of paid (refunds and payouts
// shown paid by them), the transfers more refunds and payouts of any
// project are recorded as paid by than can each have one: every item
// recorded confirmed or finalized with the transaction is given the
// transfers that pay it, as the chain check decides (the one recorded, once
// the follower has recorded it), and the items that share transfers must
// each be matched to one of their own. Those of paid among items that
// cannot are found, each naming the transfers and the items.
func (svc Service) transfersReused(ctx context.Context, paid []outgoing, txs *sentTxs) ([]Finding, error) {
	inScope := map[string]bool{}
	var each []outgoing // one of paid per transaction
	seen := map[string]bool{}
	for _, o := range paid {
		inScope[o.id] = true
		if key := o.Network + "/" + strings.ToLower(o.TxHash); !seen[key] {
			seen[key] = true
			each = append(each, o)
		}
	}
	var out []Finding
	for _, first := range each {
		tx, err := txs.get(ctx, first.Network, first.TxHash)
		if err != nil {
			return out, err
		}
		claims, err := svc.recordedWith(ctx, first.Network, first.TxHash, txs)
		if err != nil {
			return out, err
		}
		var items []outgoing
		var pays [][]int // each item's transfers, by log index
		for _, o := range claims {
			var logs []int
			look := tx.lookFor(o)
			for _, t := range look.Transfers {
				one := look
				one.Transfers = []payment.Transfer{t}
				if o.finalizes(one) {
					logs = append(logs, t.LogIndex)
				}
			}
			if o.LogIndex != nil && slices.Contains(logs, *o.LogIndex) {
				logs = []int{*o.LogIndex}
			}
			if len(logs) > 0 { // else not paid by it: its own chain check says so
				items, pays = append(items, o), append(pays, logs)
			}
		}
		for _, group := range shortOfTransfers(pays) {
			var logs []int
			var named []outgoing
			for _, i := range group {
				named = append(named, items[i])
				for _, l := range pays[i] {
					if !slices.Contains(logs, l) {
						logs = append(logs, l)
					}
				}
			}
			slices.Sort(logs)
			o := named[0]
			its, is := "its one transfer", "is"
			if len(logs) > 1 {
				its, is = fmt.Sprintf("its %d transfers", len(logs)), "are"
			}
			detail := fmt.Sprintf("%s on %s: %s of %s %s to %s (%s) %s recorded as paying %s", first.TxHash, first.Network,
				its, o.Amount(), o.Symbol, o.ToAddress, transfersNamed(logs), is, namedItems(named))
			for _, o := range named {
				if inScope[o.id] {
					out = append(out, Finding{Kind: FindingOutgoingTransferReused, ObjectID: o.id, Detail: detail})
				}
			}
		}
	}
	return out, nil
}

// shortOfTransfers takes the transfers (log indexes) that pay each item,
// and returns the groups of items (by their indexes, each group the items
// linked by transfers they share) that cannot each be matched to a
// transfer of their own.
func shortOfTransfers(pays [][]int) [][]int {
	// The groups: items linked by a transfer they share.
	group := make([]int, len(pays))
	for i := range group {
		group[i] = i
	}
	root := func(i int) int {
		for group[i] != i {
			i = group[i]
		}
		return i
	}
	firstPaid := map[int]int{} // a transfer's first item
	for i, logs := range pays {
		for _, l := range logs {
			if j, ok := firstPaid[l]; ok {
				group[root(i)] = root(j)
			} else {
				firstPaid[l] = i
			}
		}
	}
	// A matching of items to transfers, grown by augmenting paths.
	owner := map[int]int{} // transfer → item
	var match func(i int, tried map[int]bool) bool
	match = func(i int, tried map[int]bool) bool {
		for _, l := range pays[i] {
			if tried[l] {
				continue
			}
			tried[l] = true
			if j, taken := owner[l]; !taken || match(j, tried) {
				owner[l] = i
				return true
			}
		}
		return false
	}
	short := map[int]bool{}
	for i := range pays {
		if !match(i, map[int]bool{}) {
			short[root(i)] = true
		}
	}
	var out [][]int
	members := map[int][]int{}
	var roots []int
	for i := range pays {
		r := root(i)
		if !short[r] {
			continue
		}
		if members[r] == nil {
			roots = append(roots, r)
		}
		members[r] = append(members[r], i)
	}
	for _, r := range roots {
		out = append(out, members[r])
	}
	return out
}

// recordedWith returns the refunds and the payouts of every project
// recorded confirmed or finalized with a transaction of a network, the
// first recorded first.
func (svc Service) recordedWith(ctx context.Context, network, hash string, txs *sentTxs) ([]outgoing, error) {
	refunds, err := svc.Store.MoneyOut().RefundsByTxHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	payouts, err := svc.Store.MoneyOut().PayoutsByTxHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	var out []outgoing
	for _, r := range refunds {
		sources, err := txs.sources(ctx, r.ProjectID, r.IsLive)
		if err != nil {
			return nil, err
		}
		out = append(out, refundOut(r, sources))
	}
	for _, p := range payouts {
		out = append(out, payoutOut(p))
	}
	out = slices.DeleteFunc(out, func(o outgoing) bool { return o.Network != network || !o.recordedPaid() })
	slices.SortStableFunc(out, func(a, b outgoing) int {
		return cmp.Or(a.createdAt.Compare(b.createdAt), strings.Compare(a.id, b.id))
	})
	return out, nil
}

// transfersNamed names a transaction's transfers by their log indexes, as
// chainwatch records them: a token transfer's log, the transaction's own
// value (-1), an internal call's value (-3, -4…).
func transfersNamed(logs []int) string {
	var names []string
	for _, i := range logs {
		switch {
		case i >= 0:
			names = append(names, fmt.Sprintf("log %d", i))
		case i == -1:
			names = append(names, "the transaction's value")
		default:
			names = append(names, fmt.Sprintf("internal transfer %d", -2-i))
		}
	}
	return strings.Join(names, ", ")
}

// namedItems names refunds and payouts with their projects.
func namedItems(items []outgoing) string {
	var names []string
	for _, o := range items {
		names = append(names, fmt.Sprintf("%s %s (%s)", o.what, o.id, o.projectID))
	}
	return fmt.Sprintf("%d: %s", len(items), strings.Join(names, ", "))
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
