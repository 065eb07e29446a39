package moneyout

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// CreatePayoutBatch records an uploaded batch (payment.NewPayoutBatch
// says what it may be) and its payouts, waiting for an owner's approval;
// a batch with a bad line is refused whole. Audited.
func (svc Service) CreatePayoutBatch(ctx context.Context, p payment.Principal, projectID string, in payment.PayoutBatchInput) (payment.BatchRecord, error) {
	if err := core.Owns(p, projectID); err != nil {
		return payment.BatchRecord{}, err
	}
	now := svc.Now()
	b, payouts, err := payment.NewPayoutBatch(in, svc.Catalog, p.IsLive, actorOf(p), now)
	if err != nil {
		return payment.BatchRecord{}, err
	}
	if b.FromAddress != "" { // "": bitcoin alone, from the project's Bitcoin deposit key
		if err := svc.provenSource(ctx, p, "fromAddress", b.FromAddress); err != nil {
			return payment.BatchRecord{}, err
		}
	}
	fields, addrs := make([]string, len(payouts)), make([]string, len(payouts))
	for i, po := range payouts {
		fields[i], addrs[i] = in.Lines[i].Label+".address", po.ToAddress
		if po.Bitcoin() {
			if err := svc.checkPayees(po.Network, fields[i:i+1], addrs[i:i+1]); err != nil {
				return payment.BatchRecord{}, err
			}
		}
	}
	if err := svc.refuseDestinations(ctx, b.FromAddress, fields, addrs); err != nil {
		return payment.BatchRecord{}, err
	}
	b.ID, b.ProjectID = payment.NewID(payment.PrefixPayoutBatch, now), p.ProjectID
	for i := range payouts {
		payouts[i].ID, payouts[i].BatchID, payouts[i].ProjectID = payment.NewID(payment.PrefixPayout, now), b.ID, p.ProjectID
	}
	rec := payment.BatchRecord{Batch: b, Payouts: payouts}
	err = svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditPayoutBatchCreated, "payout_batch", b.ID,
		map[string]any{"payouts": b.Count, "fromAddress": b.FromAddress, "reference": b.Reference},
		func(ctx context.Context) error {
			return svc.Store.MoneyOut().CreatePayoutBatch(ctx, rec, views.BatchEvent)
		})
	return rec, err
}

// actorOf names who acts for the records: the member, the application or
// the API key.
func actorOf(p payment.Principal) string {
	switch {
	case p.UserID != "":
		return p.UserID
	case p.ClientID != "":
		return p.ClientID
	}
	return p.KeyID
}

// PayoutBatch returns one of the principal's batches with its payouts.
func (svc Service) PayoutBatch(ctx context.Context, p payment.Principal, projectID, id string) (payment.BatchRecord, error) {
	if err := core.OwnsID(p, projectID, payment.PrefixPayoutBatch, id, "Payout batch"); err != nil {
		return payment.BatchRecord{}, err
	}
	rec, err := svc.Store.MoneyOut().PayoutBatch(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return rec, payment.NotFound("Payout batch")
	}
	return rec, err
}

// ListPayoutBatches lists the principal's batches.
func (svc Service) ListPayoutBatches(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (core.Page[payment.PayoutBatch], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[payment.PayoutBatch]{}, err
	}
	items, total, err := svc.Store.MoneyOut().ListPayoutBatches(ctx, p, q)
	return core.Page[payment.PayoutBatch]{Items: items, Total: total, Query: q}, err
}

// ApprovePayoutBatch is an owner approving a batch: its payouts may be
// signed and sent. Only an owner signed in approves (the API asks for a
// fresh sign-in); audited.
func (svc Service) ApprovePayoutBatch(ctx context.Context, p payment.Principal, projectID, id string) (payment.BatchRecord, error) {
	if _, err := svc.PayoutBatch(ctx, p, projectID, id); err != nil {
		return payment.BatchRecord{}, err
	}
	if !p.CanApprovePayouts() {
		return payment.BatchRecord{}, &payment.Error{Kind: payment.KindForbidden,
			Message: "Only an owner of the project, signed in, approves payouts"}
	}
	now := svc.Now()
	var rec payment.BatchRecord
	err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditPayoutBatchApproved, "payout_batch", id, nil,
		func(ctx context.Context) (err error) {
			rec, err = svc.Store.MoneyOut().UpdatePayoutBatch(ctx, p, id, func(b *payment.PayoutBatch, payouts []payment.Payout) (payment.EventType, error) {
				return payment.EventPayoutBatchApproved, payment.ApprovePayoutBatch(b, payouts, p.UserID, now)
			}, views.BatchEvent)
			return err
		})
	return rec, err
}

// CancelPayoutBatch cancels a batch none of whose payouts was sent;
// audited.
func (svc Service) CancelPayoutBatch(ctx context.Context, p payment.Principal, projectID, id string) (payment.BatchRecord, error) {
	if _, err := svc.PayoutBatch(ctx, p, projectID, id); err != nil {
		return payment.BatchRecord{}, err
	}
	now := svc.Now()
	var rec payment.BatchRecord
	err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditPayoutBatchCanceled, "payout_batch", id, nil,
		func(ctx context.Context) (err error) {
			rec, err = svc.Store.MoneyOut().UpdatePayoutBatch(ctx, p, id, func(b *payment.PayoutBatch, payouts []payment.Payout) (payment.EventType, error) {
				return payment.EventPayoutBatchCanceled, payment.CancelPayoutBatch(b, payouts, now)
			}, views.BatchEvent)
			return err
		})
	if err == nil && rec.Batch.ApprovedAt != nil {
		for _, po := range rec.Payouts {
			svc.wake(ctx, po.ID) // approved, their workflows wait: they end
		}
	}
	return rec, err
}

// GetPayout returns one of the principal's payouts.
func (svc Service) GetPayout(ctx context.Context, p payment.Principal, projectID, id string) (payment.Payout, error) {
	return getOutgoing(ctx, svc, payoutKind, p, projectID, id)
}

// ReportPayoutSent records the hash of the transaction the merchant sent
// for a payout (payment.ReportPayoutSent); audited. The network's
// chainwatch follows it to finalized.
func (svc Service) ReportPayoutSent(ctx context.Context, p payment.Principal, projectID, id, txHash string) (payment.Payout, error) {
	return reportOutgoingSent(ctx, svc, payoutKind, p, projectID, id, txHash)
}

// CancelPayout cancels one payout of an approved batch, waiting for its
// signature or stale (payment.CancelPayout); audited. A stale one's
// transaction is still followed: mined after all, it counts.
func (svc Service) CancelPayout(ctx context.Context, p payment.Principal, projectID, id string) (payment.Payout, error) {
	return cancelOutgoing(ctx, svc, payoutKind, p, projectID, id)
}
