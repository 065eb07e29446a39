package access

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// RecordAudit appends an entry to the audit log.
func (s Store) RecordAudit(ctx context.Context, a payment.AuditEntry) error {
	return db.RecordAudit(ctx, s.db(ctx), a)
}

// ListAudit lists the principal's audit entries, newest first; q.Status
// filters by action.
func (s Store) ListAudit(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.AuditEntry, int, error) {
	f := db.NewFilter(p, q, "action")
	return db.List(ctx, s.h, "audit_log", `id, project_id, is_live, created_at, actor_kind, actor_id, ip, user_agent, action,
		target_type, target_id, details`, f, q, func(row pgx.Row) (payment.AuditEntry, error) {
		var a payment.AuditEntry
		var details []byte
		err := row.Scan(&a.ID, &a.ProjectID, &a.IsLive, &a.OccurredAt, &a.ActorKind, &a.ActorID, &a.IP, &a.UserAgent,
			&a.Action, &a.TargetType, &a.TargetID, &details)
		a.OccurredAt, a.Details = a.OccurredAt.UTC(), json.RawMessage(details)
		return a, err
	})
}
