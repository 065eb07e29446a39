package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/activities/sentlook"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// Money going out (refunds and payouts) is one transfer each, prepared by
// the engine and signed by the merchant. Once sent, each is followed by a
// workflow of its own (workflows.Outgoing), whose looks are FollowOutgoing;
// a transfer made without its hash reported is found by the scans, by its
// destination (outgoingWatch).

// How often a stale transaction (or one canceled while stale) is looked
// at, and for how long after it was sent.
const (
	staleLookEvery = 5 * time.Minute
	staleFollowFor = 30 * 24 * time.Hour
)

// awaitedLookEvery is how often the workflow of an item waiting for its
// transaction looks at it while nothing wakes it: a report, the scan's
// spotting and a cancel each signal it.
const awaitedLookEvery = 24 * time.Hour

// outgoingItem is a refund or a payout, as its workflow follows it.
type outgoingItem = sentlook.Item

func (a *Activities) outgoingItem(ctx context.Context, id string) (outgoingItem, error) {
	if strings.HasPrefix(id, payment.PrefixRefund) {
		return getOutgoing(ctx, a, refundOut, id)
	}
	return getOutgoing(ctx, a, payoutOut, id)
}

// FollowOutgoing looks at the transaction of a refund or a payout and
// records what the domain makes of it (payment.FollowRefund,
// payment.FollowPayout), with its event, and says when to look again.
func (a *Activities) FollowOutgoing(ctx context.Context, in workflows.FollowOutgoingInput) (workflows.FollowOutgoingOutput, error) {
	item, err := a.outgoingItem(ctx, in.ID)
	if err != nil {
		return workflows.FollowOutgoingOutput{}, classify(err)
	}
	recheck := in.PastFinality && item.Status == payment.RefundFinalized
	if !item.Followed() && !recheck {
		return workflows.FollowOutgoingOutput{Status: item.Status, Ended: !item.Awaited(), Wait: awaitedLookEvery}, nil
	}
	c, err := a.chain(item.Network)
	if err != nil {
		return workflows.FollowOutgoingOutput{}, err
	}
	l, err := a.lookOutgoing(ctx, c, item)
	if err != nil {
		return workflows.FollowOutgoingOutput{}, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	l.Now, l.StaleAfter, l.PastFinality = now, a.StaleAfter, recheck
	if l.StaleAfter <= 0 {
		l.StaleAfter = payment.DefaultStaleAfter
	}
	var got outgoingItem
	if strings.HasPrefix(item.ID, payment.PrefixRefund) {
		got, err = followLook(ctx, a, refundOut, item, l)
	} else {
		got, err = followLook(ctx, a, payoutOut, item, l)
	}
	if errors.Is(err, store.ErrTransferTaken) {
		return workflows.FollowOutgoingOutput{}, err // raced another item for the transfer: the retry sees it taken
	}
	if err != nil {
		return workflows.FollowOutgoingOutput{}, classify(err)
	}
	out := workflows.FollowOutgoingOutput{Status: got.Status, TxHash: got.TxHash, Detail: lookDetail(l),
		Ended: !got.Followed() && !got.Awaited()}
	switch {
	case got.Awaited():
		out.Wait = awaitedLookEvery // rejected: it waits for its signature again
	case got.TxHash != item.TxHash:
		out.Wait = time.Second
	case got.Status == payment.RefundStale || got.Status == payment.RefundCanceled || got.Status == payment.RefundReversed:
		out.Wait = staleLookEvery
		if got.SentAt != nil && now.Sub(*got.SentAt) > staleFollowFor {
			out.Ended = true
		}
	default:
		out.Wait = max(time.Second, time.Duration(c.Network.BlockTime))
	}
	if got.Status == payment.RefundReversed && item.Status != payment.RefundReversed {
		observability.PaymentsReversed.WithLabelValues(item.Network, "out").Inc()
	}
	if got.Status != item.Status || got.TxHash != item.TxHash {
		slog.InfoContext(ctx, "outgoing transfer moved", "id", item.ID, "from", item.Status, "to", got.Status,
			"txHash", item.TxHash, "reason", got.FailureReason)
	}
	return out, nil
}

// lookOutgoing is what the chain says of an item's transaction, with what
// judging it needs (outgoing.Look).
func (a *Activities) lookOutgoing(ctx context.Context, c *chainwatch.Chain, item outgoingItem) (payment.SentLook, error) {
	l, _, err := sentlook.Look(ctx, a.Store, c, item, item.TxHash)
	return l, err
}

// lookDetail says what a look saw, for the Temporal UI.
func lookDetail(l payment.SentLook) string {
	switch {
	case !l.Mined:
		return "not mined"
	case !l.Succeeded:
		return "reverted"
	case l.Final:
		return "mined (final)"
	}
	return fmt.Sprintf("mined · %d of %d confirmations", l.Confirmations, l.Required)
}

// outgoingWatch adds to a scan's watched addresses those of its recipients
// that a refund or payout waiting for its signature pays, so that a
// prepared transfer made without its hash reported is seen
// (payment.SpotRefund, payment.SpotPayout). It reads the items by the
// recipients, so its cost grows with a block's recipients, not with the
// items waiting. They are read when the scan looks its blocks' recipients
// up, not when it starts: a scan that waits at the head for the next block
// must see a payout approved meanwhile and paid in that block.
type outgoingWatch struct {
	a       *Activities
	network string
	refunds []payment.Refund
	payouts []payment.Payout
	dest    map[common.Address]bool
	// deposits are the addresses the sessions' lookup watched.
	deposits map[common.Address]bool
}

// lookup is the scan's lookup: the sessions' (next), and the
// destinations.
func (w *outgoingWatch) lookup(next chainwatch.Watchlist) chainwatch.Watchlist {
	return func(ctx context.Context, recipients []common.Address) (map[common.Address]bool, error) {
		addrs := make([]string, len(recipients))
		for i, r := range recipients {
			addrs[i] = r.Hex()
		}
		var err error
		if w.refunds, w.payouts, err = w.a.Store.MoneyOut().AwaitingOutgoingTo(ctx, w.network, addrs); err != nil {
			return nil, classify(err)
		}
		w.dest = map[common.Address]bool{}
		for _, r := range w.refunds {
			w.dest[common.HexToAddress(r.ToAddress)] = true
		}
		for _, p := range w.payouts {
			w.dest[common.HexToAddress(p.ToAddress)] = true
		}
		watched, err := next(ctx, recipients)
		if err != nil {
			return nil, err
		}
		w.deposits = make(map[common.Address]bool, len(watched))
		for addr := range watched {
			w.deposits[addr] = true
		}
		for addr := range w.dest {
			watched[addr] = true
		}
		return watched, nil
	}
}

// take records the refunds and payouts whose prepared transfer the scan
// found, and returns the transfers the sessions watch.
func (w *outgoingWatch) take(ctx context.Context, c *chainwatch.Chain, found []chainwatch.Transfer) ([]chainwatch.Transfer, error) {
	if w.deposits == nil {
		return found, nil // nothing was looked up
	}
	deposits := found[:0:0]
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, t := range found {
		if w.deposits[t.To] {
			deposits = append(deposits, t)
		}
		if !w.dest[t.To] {
			continue
		}
		mapped := c.PaymentTransfers([]chainwatch.Transfer{t})
		if len(mapped) == 0 {
			continue // not one of the network's assets
		}
		if err := w.spot(ctx, c, mapped[0], t.TxHash.Hex(), now); err != nil {
			return nil, classify(err)
		}
	}
	return deposits, nil
}

// replaceable tells whether an item the scan saw paid may take the
// transfer's transaction: one waiting for its signature, or one whose
// transaction is not mined (the transfer is then its replacement). One
// whose transaction is mined keeps it: the transfer is another payment.
func (w *outgoingWatch) replaceable(ctx context.Context, c *chainwatch.Chain, o payment.Outgoing) bool {
	if o.Status == payment.RefundAwaitingSignature {
		return true
	}
	tx, err := sentlook.Read(ctx, w.a.Store, c, o.TxHash)
	return err == nil && !tx.State.Mined
}

// wakeStale has the workflow of a stale item whose own transaction the
// scan saw mined look at it now: a stale item's workflow looks only every
// few minutes, and its transaction mined after all (a wallet's
// replacement at the same nonce, mined once the gap before it was
// filled) should move it on when the scan sees it, as a sent item's
// does. The sweep of pending follows wakes it.
func (w *outgoingWatch) wakeStale(ctx context.Context, id string, o payment.Outgoing) error {
	if o.Status != payment.RefundStale {
		return nil
	}
	slog.InfoContext(ctx, "stale item's transaction seen mined", "id", id, "txHash", o.TxHash)
	return w.a.Store.MoneyOut().WakeOutgoing(ctx, id)
}

// spot records the first refund, else the first payout, waiting for its
// signature (else sent, as a replacement) that seen pays, unless an item already records seen's
// transaction as paying it, or seen counts for something else: a scan
// retried over the same blocks, or two prepared transfers alike, must not
// take one transfer for two. The item's workflow starts from the pending
// follow the change records.
func (w *outgoingWatch) spot(ctx context.Context, c *chainwatch.Chain, seen payment.Transfer, hash string, now time.Time) error {
	hash = strings.ToLower(hash)
	refunds, err := w.a.Store.MoneyOut().RefundsByTxHash(ctx, hash)
	if err != nil {
		return err
	}
	payouts, err := w.a.Store.MoneyOut().PayoutsByTxHash(ctx, hash)
	if err != nil {
		return err
	}
	for _, r := range refunds {
		if r.Pays(seen, hash) {
			return w.wakeStale(ctx, r.ID, r.Outgoing) // taken already
		}
	}
	for _, p := range payouts {
		if p.Pays(seen, hash) {
			return w.wakeStale(ctx, p.ID, p.Outgoing)
		}
	}
	taken, err := w.a.Store.MoneyOut().TakenTransfers(ctx, c.Network.ChainID, hash, "")
	if err != nil || taken[seen.LogIndex] != "" {
		return err
	}
	// A refund may be paid from its project's proven addresses too (its
	// treasury), as a reported transaction may; a payout from its batch's
	// address only.
	proven := map[string][]string{}
	refundSources := func(r payment.Refund) ([]string, error) {
		k := fmt.Sprint(r.ProjectID, r.IsLive)
		if _, ok := proven[k]; !ok {
			var err error
			if proven[k], err = w.a.Store.MoneyOut().ProvenAddresses(ctx, r.ProjectID, r.IsLive); err != nil {
				return nil, err
			}
		}
		return proven[k], nil
	}
	if done, err := spotFirst(ctx, w.a, refundOut, w.refunds, hash, "transfer", "txHash",
		evmOffer(ctx, w, c, refundOut, seen, hash, now, refundSources)); done || err != nil {
		return err
	}
	noSources := func(payment.Payout) ([]string, error) { return nil, nil }
	_, err = spotFirst(ctx, w.a, payoutOut, w.payouts, hash, "transfer", "txHash", evmOffer(ctx, w, c, payoutOut, seen, hash, now, noSources))
	return err
}

// evmOffer is spotFirst's offer of seen to an item the scan saw paid:
// the domain's spot (with the item's sources), when it changes the item
// and the item may take the transaction (replaceable).
func evmOffer[T any](ctx context.Context, w *outgoingWatch, c *chainwatch.Chain, k outgoingKind[T], seen payment.Transfer, hash string,
	now time.Time, sources func(T) ([]string, error)) func(T) (func(*T) payment.EventType, error) {
	return func(item T) (func(*T) payment.EventType, error) {
		src, err := sources(item)
		if err != nil {
			return nil, err
		}
		was := k.ref(item).Outgoing
		if k.spot(&item, seen, hash, now, src...) == "" || !w.replaceable(ctx, c, was) {
			return nil, nil
		}
		return func(locked *T) payment.EventType { return k.spot(locked, seen, hash, now, src...) }, nil
	}
}
