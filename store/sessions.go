package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

const sessionColumns = `id, token_hash, project_id, payment_plan_id, is_live, status, email, metadata,
	amount_usd::text, amount_paid_usd::text, deposit_address, payment_options, quote_expires_at,
	expires_at, completed_at, exception, created_at, updated_at, late_until, deposit_index`

// InsertSession records a new checkout session. It is idempotent: inserting
// the same session again changes nothing and reports no error, so the
// activity that calls it can be retried.
func (s *Store) InsertSession(ctx context.Context, cs payment.Session) error {
	metadata, _ := json.Marshal(cs.Metadata)
	options, _ := json.Marshal(cs.PaymentOptions)
	_, err := s.pool.Exec(ctx, `INSERT INTO checkout_sessions (id, token_hash, project_id, payment_plan_id,
		is_live, status, email, metadata, amount_usd, amount_paid_usd, deposit_address, payment_options,
		quote_expires_at, expires_at, created_at, updated_at, late_until, deposit_index)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,0,$10,$11,$12,$13,$14,$14,$15,$16)
		ON CONFLICT (id) DO NOTHING`,
		cs.ID, cs.TokenHash, cs.ProjectID, cs.PaymentPlanID, cs.IsLive, cs.Status, cs.Email, metadata,
		cs.AmountUSD.String(), cs.DepositAddress, options, cs.QuoteExpiresAt, cs.ExpiresAt, cs.CreatedAt,
		nullTime(cs.LateUntil), cs.DepositIndex)
	return mapErr(err)
}

// SetSessionStatus moves a session to status at time at, if its current
// status is one of from; it reports whether the row changed. Repeating the
// call changes nothing.
func (s *Store) SetSessionStatus(ctx context.Context, id string, to payment.SessionStatus, at time.Time, from ...payment.SessionStatus) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE checkout_sessions SET status = $2, updated_at = $3,
		completed_at = CASE WHEN $2 = 'completed' THEN $3 ELSE completed_at END
		WHERE id = $1 AND status = ANY($4)`, id, to, at, from)
	return tag.RowsAffected() == 1, mapErr(err)
}

// SessionByTokenHash returns the session whose token hashes to hash.
func (s *Store) SessionByTokenHash(ctx context.Context, hash string) (payment.Session, error) {
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE token_hash = $1`, hash))
}

// SessionByID returns a session whatever its project: for workflows.
func (s *Store) SessionByID(ctx context.Context, id string) (payment.Session, error) {
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = $1`, id))
}

// GetSession returns a session of the principal's project and environment.
func (s *Store) GetSession(ctx context.Context, p payment.Principal, id string) (payment.Session, error) {
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions
		WHERE id = $1 AND project_id = $2 AND is_live = $3`, id, p.ProjectID, p.IsLive))
}

// ListSessions lists the principal's sessions, newest first.
func (s *Store) ListSessions(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Session, int, error) {
	return list(ctx, s, "checkout_sessions", sessionColumns, newFilter(p, q, "status"), q, scanSession)
}

func scanSession(row pgx.Row) (payment.Session, error) {
	var cs payment.Session
	var amount, paid string
	var metadata, options []byte
	var lateUntil *time.Time
	err := row.Scan(&cs.ID, &cs.TokenHash, &cs.ProjectID, &cs.PaymentPlanID, &cs.IsLive, &cs.Status, &cs.Email,
		&metadata, &amount, &paid, &cs.DepositAddress, &options, &cs.QuoteExpiresAt, &cs.ExpiresAt,
		&cs.CompletedAt, &cs.Exception, &cs.CreatedAt, &cs.UpdatedAt, &lateUntil, &cs.DepositIndex)
	if err != nil {
		return cs, mapErr(err)
	}
	cs.AmountUSD, cs.AmountPaidUSD = mustDecimal(amount), mustDecimal(paid)
	if lateUntil != nil {
		cs.LateUntil = lateUntil.UTC()
	}
	if err := json.Unmarshal(metadata, &cs.Metadata); err != nil {
		return cs, err
	}
	if err := json.Unmarshal(options, &cs.PaymentOptions); err != nil {
		return cs, err
	}
	cs.QuoteExpiresAt, cs.ExpiresAt = cs.QuoteExpiresAt.UTC(), cs.ExpiresAt.UTC()
	cs.CreatedAt, cs.UpdatedAt, cs.CompletedAt = cs.CreatedAt.UTC(), cs.UpdatedAt.UTC(), utcPtr(cs.CompletedAt)
	return cs, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// SessionProgress is what a session's workflow records as payments arrive.
type SessionProgress struct {
	Status        payment.SessionStatus
	AmountPaidUSD string
	Exception     string
	CompletedAt   *time.Time
	At            time.Time
}

// RecordSessionProgress writes a session's status, amount paid and
// exception. The workflow owns these values and sends them whole, so a
// repeated write changes nothing.
func (s *Store) RecordSessionProgress(ctx context.Context, id string, p SessionProgress) error {
	_, err := s.pool.Exec(ctx, `UPDATE checkout_sessions SET status = $2, amount_paid_usd = $3, exception = $4,
		completed_at = $5, updated_at = $6 WHERE id = $1`, id, p.Status, p.AmountPaidUSD, p.Exception, p.CompletedAt, p.At)
	return mapErr(err)
}

// WatchedAddress is a deposit address the scanners must watch.
type WatchedAddress struct {
	Address   string
	SessionID string
}

// WatchedAddresses returns the deposit addresses of open and processing
// sessions and of sessions inside their late-payment window.
func (s *Store) WatchedAddresses(ctx context.Context, now time.Time) ([]WatchedAddress, error) {
	rows, err := s.pool.Query(ctx, `SELECT deposit_address, id FROM checkout_sessions
		WHERE deposit_address <> '' AND (status IN ('open', 'processing') OR late_until > $1)`, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[WatchedAddress])
}
