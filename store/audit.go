package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paymentsd/paymentsd/payment"
)

// RecordAudit appends an entry to the audit log.
func (s Access) RecordAudit(ctx context.Context, a payment.AuditEntry) error {
	return recordAudit(ctx, s.db(ctx), a)
}

// execer runs a statement: the pool, or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// recordAudit appends an entry to the audit log through db: in the
// transaction of the change it records, where it has one.
func recordAudit(ctx context.Context, db execer, a payment.AuditEntry) error {
	details := []byte(a.Details)
	if len(details) == 0 || string(details) == "null" { // none, or none sent through a workflow
		details = []byte(`{}`)
	}
	_, err := db.Exec(ctx, `INSERT INTO audit_log (id, project_id, is_live, created_at, actor_kind, actor_id, ip,
		user_agent, action, target_type, target_id, details) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
		ON CONFLICT (id) DO NOTHING`,
		a.ID, a.ProjectID, a.IsLive, a.OccurredAt, a.ActorKind, a.ActorID, a.IP, a.UserAgent, a.Action, a.TargetType,
		a.TargetID, details)
	return mapErr(err)
}

// ListAudit lists the principal's audit entries, newest first; q.Status
// filters by action.
func (s Access) ListAudit(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.AuditEntry, int, error) {
	f := newFilter(p, q, "action")
	return list(ctx, s.Store, "audit_log", `id, project_id, is_live, created_at, actor_kind, actor_id, ip, user_agent, action,
		target_type, target_id, details`, f, q, func(row pgx.Row) (payment.AuditEntry, error) {
		var a payment.AuditEntry
		var details []byte
		err := row.Scan(&a.ID, &a.ProjectID, &a.IsLive, &a.OccurredAt, &a.ActorKind, &a.ActorID, &a.IP, &a.UserAgent,
			&a.Action, &a.TargetType, &a.TargetID, &details)
		a.OccurredAt, a.Details = a.OccurredAt.UTC(), json.RawMessage(details)
		return a, err
	})
}
