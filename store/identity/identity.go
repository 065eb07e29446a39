package identity

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// CreateUser inserts a user; an email taken (in any case) is a conflict.
func (s Store) CreateUser(ctx context.Context, u payment.User, passwordHash string) error {
	_, err := s.h.Pool.Exec(ctx, `INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES ($1,$2,$3,$4,$4)`,
		u.ID, u.Email, passwordHash, u.CreatedAt)
	return db.MapErr(err)
}

const userColumns = `id, email, password_hash, created_at`

func scanUser(row pgx.Row) (payment.User, string, error) {
	var u payment.User
	var hash string
	err := row.Scan(&u.ID, &u.Email, &hash, &u.CreatedAt)
	u.HasPassword, u.CreatedAt = hash != "", u.CreatedAt.UTC()
	return u, hash, db.MapErr(err)
}

// UserByEmail finds a user by email, in any case, with its password hash.
func (s Store) UserByEmail(ctx context.Context, email string) (payment.User, string, error) {
	return scanUser(s.h.Pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE lower(email) = lower($1)`, email))
}

// UserByID finds a user with its password hash.
func (s Store) UserByID(ctx context.Context, id string) (payment.User, string, error) {
	return scanUser(s.h.Pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
}

// SetPassword replaces a user's password hash and revokes every session
// of the user but keep.
func (s Store) SetPassword(ctx context.Context, userID, hash, keep string, now time.Time) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1`, userID, hash, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE user_sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`, userID, keep, now)
		return err
	})
}

// CreateUserSession records a dashboard session under its token's hash.
func (s Store) CreateUserSession(ctx context.Context, us payment.UserSession, tokenHash string) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO user_sessions (id, user_id, token_hash, user_agent, ip, created_at, last_seen_at, expires_at, authenticated_at)
		VALUES ($1,$2,$3,$4,$5,$6,$6,$7,$6)`, us.ID, us.UserID, tokenHash, us.UserAgent, us.IP, us.CreatedAt, us.ExpiresAt)
	return db.MapErr(err)
}

// UserSessionByToken finds a live session by its token's hash: not
// revoked, not past its absolute end, and seen within idle. Its last
// sighting is moved to now when older than a minute.
func (s Store) UserSessionByToken(ctx context.Context, tokenHash string, idle time.Duration, now time.Time) (payment.UserSession, error) {
	var us payment.UserSession
	err := s.h.Pool.QueryRow(ctx, `SELECT id, user_id, user_agent, ip, created_at, last_seen_at, expires_at, authenticated_at FROM user_sessions
		WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > $2 AND last_seen_at > $3`, tokenHash, now, now.Add(-idle)).
		Scan(&us.ID, &us.UserID, &us.UserAgent, &us.IP, &us.CreatedAt, &us.LastSeenAt, &us.ExpiresAt, &us.AuthenticatedAt)
	if err != nil {
		return us, db.MapErr(err)
	}
	if now.Sub(us.LastSeenAt) > time.Minute {
		if _, err := s.h.Pool.Exec(ctx, `UPDATE user_sessions SET last_seen_at = $2 WHERE id = $1`, us.ID, now); err != nil {
			return us, err
		}
		us.LastSeenAt = now
	}
	return us, nil
}

// ListUserSessions lists a user's live sessions, newest first.
func (s Store) ListUserSessions(ctx context.Context, userID string, idle time.Duration, now time.Time) ([]payment.UserSession, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT id, user_id, user_agent, ip, created_at, last_seen_at, expires_at FROM user_sessions
		WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 AND last_seen_at > $3 ORDER BY created_at DESC, id DESC`,
		userID, now, now.Add(-idle))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.UserSession, error) {
		var us payment.UserSession
		err := r.Scan(&us.ID, &us.UserID, &us.UserAgent, &us.IP, &us.CreatedAt, &us.LastSeenAt, &us.ExpiresAt)
		return us, err
	})
}

// SessionAuthenticated records that the session's user proved who they
// are at now (a re-authentication: sudo mode).
func (s Store) SessionAuthenticated(ctx context.Context, sessionID string, now time.Time) error {
	_, err := s.db(ctx).Exec(ctx, `UPDATE user_sessions SET authenticated_at = $2 WHERE id = $1 AND revoked_at IS NULL`, sessionID, now)
	return err
}

// RevokeUserSessions revokes a user's sessions: the one named by id, or
// (id empty) every one but keep, in ctx's transaction if it has one. It
// returns how many it revoked.
func (s Store) RevokeUserSessions(ctx context.Context, userID, id, keep string, now time.Time) (int64, error) {
	var tag interface{ RowsAffected() int64 }
	var err error
	if id != "" {
		tag, err = s.db(ctx).Exec(ctx, `UPDATE user_sessions SET revoked_at = $3 WHERE user_id = $1 AND id = $2 AND revoked_at IS NULL`, userID, id, now)
	} else {
		tag, err = s.db(ctx).Exec(ctx, `UPDATE user_sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`, userID, keep, now)
	}
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
