package service

import (
	"context"
	"encoding/json"

	"github.com/paymentsd/paymentsd/payment"
)

// ListAudit lists the principal's audit log, newest first; q.Status
// filters by action.
func (svc Access) ListAudit(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[payment.AuditEntry], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.AuditEntry]{}, err
	}
	items, total, err := svc.store.Access().ListAudit(ctx, p, q)
	return Page[payment.AuditEntry]{items, total, q}, err
}

// auditEntry is the audit entry of a change made now by ctx's origin.
func (svc Access) auditEntry(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string, details map[string]any) payment.AuditEntry {
	now := svc.now()
	a := payment.AuditEntry{ID: payment.NewID(payment.PrefixAudit, now), ProjectID: projectID, IsLive: isLive, OccurredAt: now,
		Origin: payment.OriginOf(ctx), Action: action, TargetType: targetType, TargetID: targetID}
	if a.ActorKind == "" {
		a.ActorKind = payment.AuditActorInternal // an engine call made by the process itself (the dev stack's set-up)
	}
	if details != nil {
		a.Details, _ = json.Marshal(details)
	}
	return a
}
