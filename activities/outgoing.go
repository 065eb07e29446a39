package activities

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/views"
	"github.com/paymentsd/paymentsd/payment"
)

// Money going out (refunds and payouts) is one transfer each, prepared by
// the engine and signed by the merchant, and followed by its network's
// chainwatch as the scans go, with no workflow of its own.

// sentPerScan bounds the refunds, and the payouts, one scan looks at: the
// least recently changed first, so that every one is looked at in turn.
const sentPerScan = 8

// sentBudget bounds the time a scan spends on them: a node that does not
// answer delays the scan's payments this long at most.
const sentBudget = 2 * time.Second

// followSent looks, after a scan, at the network's refunds and payouts
// whose transaction is sent or confirmed, and records what the chain says
// of each (payment.FollowRefund, payment.FollowPayout). One that cannot be
// looked at now is looked at by the next scan.
func (a *Activities) followSent(ctx context.Context, c *chainwatch.Chain) {
	ctx, cancel := context.WithTimeout(ctx, sentBudget)
	defer cancel()
	refunds, err := a.Store.FollowedRefunds(ctx, c.Network.Key, sentPerScan)
	if err != nil {
		slog.WarnContext(ctx, "refunds not followed this scan", "network", c.Network.Key, "err", err)
	}
	for _, r := range refunds {
		if err := a.followRefund(ctx, c, r); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "refund not followed this scan", "refund", r.ID, "txHash", r.TxHash, "err", err)
		}
	}
	payouts, err := a.Store.FollowedPayouts(ctx, c.Network.Key, sentPerScan)
	if err != nil {
		slog.WarnContext(ctx, "payouts not followed this scan", "network", c.Network.Key, "err", err)
	}
	for _, p := range payouts {
		if err := a.followPayout(ctx, c, p); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "payout not followed this scan", "payout", p.ID, "txHash", p.TxHash, "err", err)
		}
	}
}

// look is what the chain says of a sent transaction.
func look(ctx context.Context, c *chainwatch.Chain, hash string) (payment.SentLook, error) {
	n := c.Network
	st, err := chainwatch.CheckTransaction(ctx, c.Client, common.HexToHash(hash), n.FinalizedTag(), c.Scanner().Traces)
	if err != nil {
		return payment.SentLook{}, err
	}
	return payment.SentLook{Mined: st.Mined, Succeeded: st.Succeeded, Final: st.Final,
		Confirmations: int(st.Confirmations), Required: n.Confirmations, Transfers: c.PaymentTransfers(st.Transfers)}, nil
}

func (a *Activities) followRefund(ctx context.Context, c *chainwatch.Chain, r payment.Refund) error {
	l, err := look(ctx, c, r.TxHash)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	_, err = a.Store.UpdateRefund(ctx, nil, r.ID, func(locked *payment.Refund) (payment.EventType, error) {
		if locked.TxHash != r.TxHash {
			return "", nil // a replacement was reported meanwhile: the next scan looks at it
		}
		return payment.FollowRefund(locked, l, now), nil
	}, views.RefundEvent)
	return err
}

func (a *Activities) followPayout(ctx context.Context, c *chainwatch.Chain, p payment.Payout) error {
	l, err := look(ctx, c, p.TxHash)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	_, err = a.Store.UpdatePayout(ctx, nil, p.ID, func(locked *payment.Payout) (payment.EventType, error) {
		if locked.TxHash != p.TxHash {
			return "", nil // as for a refund
		}
		return payment.FollowPayout(locked, l, now), nil
	}, views.PayoutEvent, views.BatchEvent)
	return err
}

// sentWatched bounds the refunds, and the payouts, waiting for their
// signature whose prepared transfer one scan watches for, oldest first.
const sentWatched = 500

// sentWatch adds to a scan's watched addresses the destinations of the
// network's refunds and payouts that wait for their signature, so that a
// prepared transfer made without its hash reported is seen
// (payment.SpotRefund, payment.SpotPayout). They are read when the scan
// looks its blocks' recipients up, not when it starts: a scan that waits
// at the head for the next block must see a payout approved meanwhile
// and paid in that block.
type sentWatch struct {
	a       *Activities
	network string
	refunds []payment.Refund
	payouts []payment.Payout
	dest    map[common.Address]bool
	// deposits are the addresses the sessions' lookup watched.
	deposits map[common.Address]bool
}

// load reads what waits for its signature on the network.
func (w *sentWatch) load(ctx context.Context) error {
	var err error
	if w.refunds, err = w.a.Store.AwaitingRefunds(ctx, w.network, sentWatched); err != nil {
		return err
	}
	if w.payouts, err = w.a.Store.AwaitingPayouts(ctx, w.network, sentWatched); err != nil {
		return err
	}
	w.dest = map[common.Address]bool{}
	for _, r := range w.refunds {
		w.dest[common.HexToAddress(r.ToAddress)] = true
	}
	for _, p := range w.payouts {
		w.dest[common.HexToAddress(p.ToAddress)] = true
	}
	return nil
}

// lookup is the scan's lookup: the sessions' (next), and the
// destinations.
func (w *sentWatch) lookup(next chainwatch.Watchlist) chainwatch.Watchlist {
	return func(ctx context.Context, recipients []common.Address) (map[common.Address]bool, error) {
		if err := w.load(ctx); err != nil {
			return nil, classify(err)
		}
		watched, err := next(ctx, recipients)
		if err != nil {
			return nil, err
		}
		w.deposits = make(map[common.Address]bool, len(watched))
		for addr := range watched {
			w.deposits[addr] = true
		}
		for _, addr := range recipients {
			if w.dest[addr] {
				watched[addr] = true
			}
		}
		return watched, nil
	}
}

// take records the refunds and payouts whose prepared transfer the scan
// found, and returns the transfers the sessions watch.
func (w *sentWatch) take(ctx context.Context, c *chainwatch.Chain, found []chainwatch.Transfer) ([]chainwatch.Transfer, error) {
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
		if err := w.spot(ctx, mapped[0], t.TxHash.Hex(), now); err != nil {
			return nil, classify(err)
		}
	}
	return deposits, nil
}

// spot records the first refund, else the first payout, waiting for its
// signature that seen pays, unless a refund or a payout already records
// seen as its own: a scan retried over the same blocks, or two prepared
// transfers alike, must not take one transfer for two.
func (w *sentWatch) spot(ctx context.Context, seen payment.Transfer, hash string, now time.Time) error {
	hash = strings.ToLower(hash)
	refunds, err := w.a.Store.RefundsByTxHash(ctx, hash)
	if err != nil {
		return err
	}
	payouts, err := w.a.Store.PayoutsByTxHash(ctx, hash)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(refunds, func(r payment.Refund) bool { return r.Pays(seen, hash) }) ||
		slices.ContainsFunc(payouts, func(p payment.Payout) bool { return p.Pays(seen, hash) }) {
		return nil // taken already
	}
	for i := range w.refunds {
		r := w.refunds[i]
		if payment.SpotRefund(&r, seen, hash, now) == "" {
			continue
		}
		got, err := w.a.Store.UpdateRefund(ctx, nil, r.ID, func(locked *payment.Refund) (payment.EventType, error) {
			return payment.SpotRefund(locked, seen, hash, now), nil
		}, views.RefundEvent)
		if err != nil {
			return err
		}
		if got.TxHash == hash {
			w.refunds[i] = got // no longer waiting: the next alike transfer is another's
			slog.InfoContext(ctx, "refund's transfer seen unreported", "refund", r.ID, "txHash", hash)
			return nil
		}
	}
	for i := range w.payouts {
		p := w.payouts[i]
		if payment.SpotPayout(&p, seen, hash, now) == "" {
			continue
		}
		got, err := w.a.Store.UpdatePayout(ctx, nil, p.ID, func(locked *payment.Payout) (payment.EventType, error) {
			return payment.SpotPayout(locked, seen, hash, now), nil
		}, views.PayoutEvent, views.BatchEvent)
		if err != nil {
			return err
		}
		if got.TxHash == hash {
			w.payouts[i] = got
			slog.InfoContext(ctx, "payout's transfer seen unreported", "payout", p.ID, "txHash", hash)
			return nil
		}
	}
	return nil
}
