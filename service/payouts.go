package service

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

// CreatePayoutBatch records an uploaded batch (payment.NewPayoutBatch
// says what it may be) and its payouts, waiting for an owner's approval;
// a batch with a bad line is refused whole. Audited.
func (svc MoneyOut) CreatePayoutBatch(ctx context.Context, p payment.Principal, projectID string, in payment.PayoutBatchInput) (payment.BatchRecord, error) {
	if err := owns(p, projectID); err != nil {
		return payment.BatchRecord{}, err
	}
	now := svc.now()
	b, payouts, err := payment.NewPayoutBatch(in, svc.catalog, p.IsLive, actorOf(p), now)
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
	err = svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditPayoutBatchCreated, "payout_batch", b.ID,
		map[string]any{"payouts": b.Count, "fromAddress": b.FromAddress, "reference": b.Reference},
		func(ctx context.Context) error {
			return svc.store.MoneyOut().CreatePayoutBatch(ctx, rec, views.BatchEvent)
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
func (svc MoneyOut) PayoutBatch(ctx context.Context, p payment.Principal, projectID, id string) (payment.BatchRecord, error) {
	if err := ownsID(p, projectID, payment.PrefixPayoutBatch, id, "Payout batch"); err != nil {
		return payment.BatchRecord{}, err
	}
	rec, err := svc.store.MoneyOut().PayoutBatch(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return rec, payment.NotFound("Payout batch")
	}
	return rec, err
}

// ListPayoutBatches lists the principal's batches.
func (svc MoneyOut) ListPayoutBatches(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[payment.PayoutBatch], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.PayoutBatch]{}, err
	}
	items, total, err := svc.store.MoneyOut().ListPayoutBatches(ctx, p, q)
	return Page[payment.PayoutBatch]{items, total, q}, err
}

// ApprovePayoutBatch is an owner approving a batch: its payouts may be
// signed and sent. Only an owner signed in approves (the API asks for a
// fresh sign-in); audited.
func (svc MoneyOut) ApprovePayoutBatch(ctx context.Context, p payment.Principal, projectID, id string) (payment.BatchRecord, error) {
	if _, err := svc.PayoutBatch(ctx, p, projectID, id); err != nil {
		return payment.BatchRecord{}, err
	}
	if !p.CanApprovePayouts() {
		return payment.BatchRecord{}, &payment.Error{Kind: payment.KindForbidden,
			Message: "Only an owner of the project, signed in, approves payouts"}
	}
	now := svc.now()
	var rec payment.BatchRecord
	err := svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditPayoutBatchApproved, "payout_batch", id, nil,
		func(ctx context.Context) (err error) {
			rec, err = svc.store.MoneyOut().UpdatePayoutBatch(ctx, p, id, func(b *payment.PayoutBatch, payouts []payment.Payout) (payment.EventType, error) {
				return payment.EventPayoutBatchApproved, payment.ApprovePayoutBatch(b, payouts, p.UserID, now)
			}, views.BatchEvent)
			return err
		})
	return rec, err
}

// CancelPayoutBatch cancels a batch none of whose payouts was sent;
// audited.
func (svc MoneyOut) CancelPayoutBatch(ctx context.Context, p payment.Principal, projectID, id string) (payment.BatchRecord, error) {
	if _, err := svc.PayoutBatch(ctx, p, projectID, id); err != nil {
		return payment.BatchRecord{}, err
	}
	now := svc.now()
	var rec payment.BatchRecord
	err := svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditPayoutBatchCanceled, "payout_batch", id, nil,
		func(ctx context.Context) (err error) {
			rec, err = svc.store.MoneyOut().UpdatePayoutBatch(ctx, p, id, func(b *payment.PayoutBatch, payouts []payment.Payout) (payment.EventType, error) {
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
func (svc MoneyOut) GetPayout(ctx context.Context, p payment.Principal, projectID, id string) (payment.Payout, error) {
	return getOutgoing(ctx, svc, payoutKind, p, projectID, id)
}

// ReportPayoutSent records the hash of the transaction the merchant sent
// for a payout (payment.ReportPayoutSent); audited. The network's
// chainwatch follows it to finalized.
func (svc MoneyOut) ReportPayoutSent(ctx context.Context, p payment.Principal, projectID, id, txHash string) (payment.Payout, error) {
	return reportOutgoingSent(ctx, svc, payoutKind, p, projectID, id, txHash)
}

// CancelPayout cancels one payout of an approved batch, waiting for its
// signature or stale (payment.CancelPayout); audited. A stale one's
// transaction is still followed: mined after all, it counts.
func (svc MoneyOut) CancelPayout(ctx context.Context, p payment.Principal, projectID, id string) (payment.Payout, error) {
	return cancelOutgoing(ctx, svc, payoutKind, p, projectID, id)
}
