package db

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paymentsd/paymentsd/payment"
)

// Execer runs a statement: the pool, or a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// RecordAudit appends an entry to the audit log through db: in the
// transaction of the change it records, where it has one.
func RecordAudit(ctx context.Context, db Execer, a payment.AuditEntry) error {
	details := []byte(a.Details)
	if len(details) == 0 || string(details) == "null" { // none, or none sent through a workflow
		details = []byte(`{}`)
	}
	_, err := db.Exec(ctx, `INSERT INTO audit_log (id, project_id, is_live, created_at, actor_kind, actor_id, ip,
		user_agent, action, target_type, target_id, details) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
		ON CONFLICT (id) DO NOTHING`,
		a.ID, a.ProjectID, a.IsLive, a.OccurredAt, a.ActorKind, a.ActorID, a.IP, a.UserAgent, a.Action, a.TargetType,
		a.TargetID, details)
	return MapErr(err)
}
