package moneyout

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/store"
)

// outgoingKind is what a refund and a payout differ by in the steps they
// share (read one, report its transaction, cancel it): their names, their
// audit actions, and the store's and the domain's functions for each. The
// steps are written once, below, over either.
type outgoingKind[T any] struct {
	noun   string // its not-found message: "Refund", "Payout"
	entity string // the audit's target type: "refund", "payout"
	prefix string // its ID's prefix
	// auditSent and auditCanceled are the audit actions of a reported
	// transaction and of a cancellation; canceled is the cancellation's
	// event.
	auditSent, auditCanceled string
	canceled                 payment.EventType
	get                      func(store.MoneyOut, context.Context, payment.Principal, string) (T, error)
	update                   func(store.MoneyOut, context.Context, *payment.Principal, string, func(*T) (payment.EventType, error)) (T, error)
	reportSent               func(*T, string, time.Time) (payment.EventType, error)
	cancel                   func(*T, time.Time) error
	// ref names the item for its workflow.
	ref func(T) outgoingRef
}

// outgoingRef is who an outgoing item is and where its transfer stands:
// what its workflow is started or woken with.
type outgoingRef struct {
	id        string
	projectID string
	isLive    bool
	payment.Outgoing
}

var refundKind = outgoingKind[payment.Refund]{
	noun: "Refund", entity: "refund", prefix: payment.PrefixRefund,
	auditSent: payment.AuditRefundSent, auditCanceled: payment.AuditRefundCanceled, canceled: payment.EventRefundCanceled,
	get: store.MoneyOut.GetRefund,
	update: func(m store.MoneyOut, ctx context.Context, p *payment.Principal, id string,
		change func(*payment.Refund) (payment.EventType, error)) (payment.Refund, error) {
		return m.UpdateRefund(ctx, p, id, change, renderRefund)
	},
	reportSent: payment.ReportRefundSent,
	cancel:     payment.CancelRefund,
	ref: func(r payment.Refund) outgoingRef {
		return outgoingRef{r.ID, r.ProjectID, r.IsLive, r.Outgoing}
	},
}

var payoutKind = outgoingKind[payment.Payout]{
	noun: "Payout", entity: "payout", prefix: payment.PrefixPayout,
	auditSent: payment.AuditPayoutSent, auditCanceled: payment.AuditPayoutCanceled, canceled: payment.EventPayoutCanceled,
	get: store.MoneyOut.GetPayout,
	update: func(m store.MoneyOut, ctx context.Context, p *payment.Principal, id string,
		change func(*payment.Payout) (payment.EventType, error)) (payment.Payout, error) {
		return m.UpdatePayout(ctx, p, id, change, views.PayoutEvent, views.BatchEvent)
	},
	reportSent: payment.ReportPayoutSent,
	cancel:     payment.CancelPayout,
	ref: func(po payment.Payout) outgoingRef {
		return outgoingRef{po.ID, po.ProjectID, po.IsLive, po.Outgoing}
	},
}

// getOutgoing returns one of the principal's refunds or payouts.
func getOutgoing[T any](ctx context.Context, svc Service, k outgoingKind[T], p payment.Principal, projectID, id string) (T, error) {
	if err := core.OwnsID(p, projectID, k.prefix, id, k.noun); err != nil {
		var zero T
		return zero, err
	}
	item, err := k.get(svc.Store.MoneyOut(), ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return item, payment.NotFound(k.noun)
	}
	return item, err
}

// reportOutgoingSent records the hash of the transaction the merchant
// sent for a refund or a payout (the domain's ReportRefundSent,
// ReportPayoutSent); audited. From then on the network's chainwatch
// follows it to finalized.
func reportOutgoingSent[T any](ctx context.Context, svc Service, k outgoingKind[T], p payment.Principal, projectID, id, txHash string) (T, error) {
	var zero T
	item, err := getOutgoing(ctx, svc, k, p, projectID, id)
	if err != nil {
		return zero, err
	}
	if err := svc.checkReport(ctx, p, id, k.ref(item).Outgoing, txHash); err != nil {
		return zero, err
	}
	now := svc.Now()
	sent := false
	err = svc.Audited(ctx, p.ProjectID, p.IsLive, k.auditSent, k.entity, id, map[string]any{"txHash": txHash},
		func(ctx context.Context) (err error) {
			item, err = k.update(svc.Store.MoneyOut(), ctx, &p, id, func(locked *T) (payment.EventType, error) {
				typ, err := k.reportSent(locked, txHash, now)
				sent = typ != ""
				return typ, err
			})
			return err
		})
	if err == nil && sent {
		r := k.ref(item)
		svc.follow(ctx, r.id, r.projectID, r.isLive, r.Outgoing)
	}
	return item, err
}

// cancelOutgoing cancels a refund or a payout (the domain's CancelRefund,
// CancelPayout says when it may be); audited. A stale one's transaction
// is still followed: mined after all, it counts; any other's workflow is
// woken, and ends.
func cancelOutgoing[T any](ctx context.Context, svc Service, k outgoingKind[T], p payment.Principal, projectID, id string) (T, error) {
	var item T
	if _, err := getOutgoing(ctx, svc, k, p, projectID, id); err != nil {
		return item, err
	}
	now := svc.Now()
	err := svc.Audited(ctx, p.ProjectID, p.IsLive, k.auditCanceled, k.entity, id, nil,
		func(ctx context.Context) (err error) {
			item, err = k.update(svc.Store.MoneyOut(), ctx, &p, id, func(locked *T) (payment.EventType, error) {
				return k.canceled, k.cancel(locked, now)
			})
			return err
		})
	if err != nil {
		return item, err
	}
	if r := k.ref(item); r.Followed() {
		// Canceled while stale: its transaction is still followed.
		svc.follow(ctx, r.id, r.projectID, r.isLive, r.Outgoing)
	} else {
		svc.wake(ctx, r.id)
	}
	return item, nil
}
