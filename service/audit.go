package service

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/paymentsd/paymentsd/metrics"
	"github.com/paymentsd/paymentsd/payment"
)

// audit records a management change in the audit log once it is made:
// who and from where (the origin the API or the admin command put in ctx),
// the action and its target. details must hold no secret. It is for the
// changes a session's workflow makes (cancel, resolve, assign while the
// workflow runs): the workflow records them in its own transaction, which
// this process cannot join, so the entry follows the workflow's answer and
// a failure to record it is logged and counted
// (paymentsd_audit_failures_total), not returned. Every change this
// process writes itself takes its entry in its transaction (audited,
// auditIn).
func (svc *Service) audit(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string, details map[string]any) {
	a := svc.auditEntry(ctx, projectID, isLive, action, targetType, targetID, details)
	if err := svc.store.RecordAudit(context.WithoutCancel(ctx), a); err != nil {
		metrics.AuditFailures.Inc()
		slog.ErrorContext(ctx, "audit log: the change is made but not recorded", "action", action, "target", targetID, "err", err)
	}
}

// ListAudit lists the principal's audit log, newest first; q.Status
// filters by action.
func (svc *Service) ListAudit(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[payment.AuditEntry], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.AuditEntry]{}, err
	}
	items, total, err := svc.store.ListAudit(ctx, p, q)
	return Page[payment.AuditEntry]{items, total, q}, err
}

// auditEntry is the audit entry of a change made now by ctx's origin.
func (svc *Service) auditEntry(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string, details map[string]any) payment.AuditEntry {
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
