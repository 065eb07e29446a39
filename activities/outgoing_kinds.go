package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
)

// outgoingKind is what a refund and a payout differ by in the steps their
// workflow's looks and the scans share: the store's reads and change of
// one, and the domain's follow and spot of one. The steps are written
// once over either.
type outgoingKind[T any] struct {
	noun   string // "refund", "payout": the logs' word
	byID   func(store.MoneyOut, context.Context, string) (T, error)
	update func(store.MoneyOut, context.Context, string, func(*T) (payment.EventType, error)) (T, error)
	follow func(*T, payment.SentLook) payment.EventType
	// spot is the domain's spotting of a transfer made unreported; sources
	// are the project's proven addresses, which may pay a refund.
	spot func(item *T, seen payment.Transfer, hash string, now time.Time, sources ...string) payment.EventType
	ref  func(T) outgoingItem
}

var refundOut = outgoingKind[payment.Refund]{
	noun: "refund",
	byID: store.MoneyOut.RefundByID,
	update: func(m store.MoneyOut, ctx context.Context, id string, change func(*payment.Refund) (payment.EventType, error)) (payment.Refund, error) {
		return m.UpdateRefund(ctx, nil, id, change, views.RefundEvent)
	},
	follow: payment.FollowRefund,
	spot:   payment.SpotRefund,
	ref: func(r payment.Refund) outgoingItem {
		return outgoingItem{ID: r.ID, ProjectID: r.ProjectID, IsLive: r.IsLive, Outgoing: r.Outgoing}
	},
}

var payoutOut = outgoingKind[payment.Payout]{
	noun: "payout",
	byID: store.MoneyOut.PayoutByID,
	update: func(m store.MoneyOut, ctx context.Context, id string, change func(*payment.Payout) (payment.EventType, error)) (payment.Payout, error) {
		return m.UpdatePayout(ctx, nil, id, change, views.PayoutEvent, views.BatchEvent)
	},
	follow: payment.FollowPayout,
	spot: func(p *payment.Payout, seen payment.Transfer, hash string, now time.Time, _ ...string) payment.EventType {
		return payment.SpotPayout(p, seen, hash, now) // a payout is paid from its batch's address only
	},
	ref: func(p payment.Payout) outgoingItem {
		return outgoingItem{ID: p.ID, ProjectID: p.ProjectID, IsLive: p.IsLive, Outgoing: p.Outgoing}
	},
}

// getOutgoing reads a refund or a payout as its workflow follows it.
func getOutgoing[T any](ctx context.Context, a *Activities, k outgoingKind[T], id string) (outgoingItem, error) {
	item, err := k.byID(a.Store.MoneyOut(), ctx, id)
	return k.ref(item), err
}

// followLook records what the domain makes of a look at item's
// transaction (the domain's FollowRefund, FollowPayout), unless another
// transaction was reported meanwhile: that one is looked at next.
func followLook[T any](ctx context.Context, a *Activities, k outgoingKind[T], item outgoingItem, l payment.SentLook) (outgoingItem, error) {
	got, err := k.update(a.Store.MoneyOut(), ctx, item.ID, func(locked *T) (payment.EventType, error) {
		if k.ref(*locked).TxHash != item.TxHash {
			return "", nil // a replacement was reported meanwhile: looked at next
		}
		return k.follow(locked, l), nil
	})
	return k.ref(got), err
}

// spotFirst offers a transfer made unreported, in transaction hash, to
// items in order: offer says whether an item may take it, and with which
// change under its lock. The first whose change records hash is written
// back into items (the next alike transfer is another's) and logged, what
// and hashKey naming the transfer there; it says whether one took it.
func spotFirst[T any](ctx context.Context, a *Activities, k outgoingKind[T], items []T, hash, what, hashKey string,
	offer func(T) (func(*T) payment.EventType, error)) (bool, error) {
	for i := range items {
		change, err := offer(items[i])
		if err != nil {
			return false, err
		}
		if change == nil {
			continue
		}
		id := k.ref(items[i]).ID
		got, err := k.update(a.Store.MoneyOut(), ctx, id, func(locked *T) (payment.EventType, error) { return change(locked), nil })
		if err != nil {
			return false, err
		}
		if k.ref(got).TxHash == hash {
			items[i] = got
			slog.InfoContext(ctx, k.noun+"'s "+what+" seen unreported", k.noun, id, hashKey, hash)
			return true, nil
		}
	}
	return false, nil
}
