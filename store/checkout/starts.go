package checkout

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// SessionStart is a session's workflow start not made yet: recorded with
// the session, deleted once the workflow runs.
type SessionStart struct {
	SessionID string
	PlanTitle string
	// Input is the workflow's input as JSON.
	Input     []byte
	CreatedAt time.Time
	Attempts  int
}

// InsertSessionToStart records a new checkout session, its created event
// and its workflow's pending start in one database transaction. The start
// is due for a sweep after grace, unless deleted before.
func (s Store) InsertSessionToStart(ctx context.Context, cs payment.Session, render db.Render[payment.Session], start SessionStart, grace time.Duration) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := insertSession(ctx, tx, cs, render); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO session_starts (session_id, plan_title, input, created_at, due_at)
			VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5)) ON CONFLICT DO NOTHING`,
			cs.ID, start.PlanTitle, string(start.Input), cs.CreatedAt, grace.Seconds())
		return db.MapErr(err)
	})
}

// PendingSessionStarts returns the pending starts of these sessions.
func (s Store) PendingSessionStarts(ctx context.Context, sessionIDs []string) ([]SessionStart, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT session_id, plan_title, input::text, created_at, attempts
		FROM session_starts WHERE session_id = ANY($1)`, sessionIDs)
	if err != nil {
		return nil, db.MapErr(err)
	}
	return pgx.CollectRows(rows, scanSessionStart)
}

// ClaimSessionStarts takes up to limit due starts for a sweep: each is not
// due again before lease has passed, so that concurrent sweeps take
// different rows and a sweeper that dies lets its rows go.
func (s Store) ClaimSessionStarts(ctx context.Context, limit int, lease time.Duration) ([]SessionStart, error) {
	rows, err := s.h.Pool.Query(ctx, `UPDATE session_starts SET due_at = now() + make_interval(secs => $2), attempts = attempts + 1
		WHERE session_id IN (SELECT session_id FROM session_starts WHERE due_at <= now()
			ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING session_id, plan_title, input::text, created_at, attempts`, limit, lease.Seconds())
	if err != nil {
		return nil, db.MapErr(err)
	}
	return pgx.CollectRows(rows, scanSessionStart)
}

// DelaySessionStarts makes claimed starts due again after delay.
func (s Store) DelaySessionStarts(ctx context.Context, sessionIDs []string, delay time.Duration) error {
	_, err := s.h.Pool.Exec(ctx, `UPDATE session_starts SET due_at = now() + make_interval(secs => $2) WHERE session_id = ANY($1)`,
		sessionIDs, delay.Seconds())
	return db.MapErr(err)
}

// HurrySessionStarts makes the sessions' pending starts due now, for the
// next sweep to make, and tells whether there is any. No pending start
// means the session's workflow was started (or the session was never
// recorded with one).
func (s Store) HurrySessionStarts(ctx context.Context, sessionIDs []string) (pending bool, err error) {
	tag, err := s.h.Pool.Exec(ctx, `UPDATE session_starts SET due_at = least(due_at, now()) WHERE session_id = ANY($1)`, sessionIDs)
	if err != nil {
		return false, db.MapErr(err)
	}
	return tag.RowsAffected() > 0, nil
}

// SessionStarted deletes a session's pending start: its workflow runs.
func (s Store) SessionStarted(ctx context.Context, sessionID string) error {
	_, err := s.h.Pool.Exec(ctx, `DELETE FROM session_starts WHERE session_id = $1`, sessionID)
	return db.MapErr(err)
}

// SessionsStarted deletes the pending starts of these sessions: their
// workflows run (or ran), started by a transfer's signal-with-start.
func (s Store) SessionsStarted(ctx context.Context, sessionIDs []string) error {
	if len(sessionIDs) == 0 {
		return nil
	}
	_, err := s.h.Pool.Exec(ctx, `DELETE FROM session_starts WHERE session_id = ANY($1)`, sessionIDs)
	return db.MapErr(err)
}

// CountSessionStarts returns how many starts are pending, and how old the
// oldest is.
func (s Store) CountSessionStarts(ctx context.Context) (n int, oldest time.Duration, err error) {
	var age *float64
	err = s.h.Pool.QueryRow(ctx, `SELECT count(*), extract(epoch FROM now() - min(created_at))::float8 FROM session_starts`).Scan(&n, &age)
	if age != nil {
		oldest = time.Duration(*age * float64(time.Second))
	}
	return n, oldest, db.MapErr(err)
}

func scanSessionStart(row pgx.CollectableRow) (SessionStart, error) {
	var st SessionStart
	var input string
	err := row.Scan(&st.SessionID, &st.PlanTitle, &input, &st.CreatedAt, &st.Attempts)
	st.Input = []byte(input)
	return st, err
}
