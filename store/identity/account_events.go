package identity

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// RecordAccountEvent appends an entry to a user's security log: in the
// transaction of its change, when ctx is in one (InTx).
func (s Store) RecordAccountEvent(ctx context.Context, e payment.AccountEvent) error {
	details := []byte(`{}`)
	if e.Details != nil {
		details, _ = json.Marshal(e.Details)
	}
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO account_events (id, user_id, created_at, action, session_id, ip, user_agent, details)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`, e.ID, e.UserID, e.OccurredAt, e.Action, e.SessionID, e.IP, e.UserAgent, details)
	return db.MapErr(err)
}

// AccountEvents lists a user's security log, newest first, at most limit.
func (s Store) AccountEvents(ctx context.Context, userID string, limit int) ([]payment.AccountEvent, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT id, user_id, created_at, action, session_id, ip, user_agent, details FROM account_events
		WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, userID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.AccountEvent, error) {
		var e payment.AccountEvent
		var details []byte
		err := r.Scan(&e.ID, &e.UserID, &e.OccurredAt, &e.Action, &e.SessionID, &e.IP, &e.UserAgent, &details)
		e.OccurredAt = e.OccurredAt.UTC()
		_ = json.Unmarshal(details, &e.Details)
		return e, err
	})
}
