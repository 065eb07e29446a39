package store

import (
	"context"

	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

// CreateUser inserts a user; an email taken (in any case) is a conflict.
func (s Identity) CreateUser(ctx context.Context, u payment.User, passwordHash string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES ($1,$2,$3,$4,$4)`,
		u.ID, u.Email, passwordHash, u.CreatedAt)
	return mapErr(err)
}

const userColumns = `id, email, password_hash, created_at`

func scanUser(row pgx.Row) (payment.User, string, error) {
	var u payment.User
	var hash string
	err := row.Scan(&u.ID, &u.Email, &hash, &u.CreatedAt)
	u.HasPassword, u.CreatedAt = hash != "", u.CreatedAt.UTC()
	return u, hash, mapErr(err)
}

// UserByEmail finds a user by email, in any case, with its password hash.
func (s Identity) UserByEmail(ctx context.Context, email string) (payment.User, string, error) {
	return scanUser(s.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE lower(email) = lower($1)`, email))
}

// UserByID finds a user with its password hash.
func (s Identity) UserByID(ctx context.Context, id string) (payment.User, string, error) {
	return scanUser(s.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
}

// SetPassword replaces a user's password hash and revokes every session
// of the user but keep.
func (s Identity) SetPassword(ctx context.Context, userID, hash, keep string, now time.Time) error {
	return s.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1`, userID, hash, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE user_sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`, userID, keep, now)
		return err
	})
}

// CreateUserSession records a dashboard session under its token's hash.
func (s Identity) CreateUserSession(ctx context.Context, us payment.UserSession, tokenHash string) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO user_sessions (id, user_id, token_hash, user_agent, ip, created_at, last_seen_at, expires_at, authenticated_at)
		VALUES ($1,$2,$3,$4,$5,$6,$6,$7,$6)`, us.ID, us.UserID, tokenHash, us.UserAgent, us.IP, us.CreatedAt, us.ExpiresAt)
	return mapErr(err)
}

// UserSessionByToken finds a live session by its token's hash: not
// revoked, not past its absolute end, and seen within idle. Its last
// sighting is moved to now when older than a minute.
func (s Identity) UserSessionByToken(ctx context.Context, tokenHash string, idle time.Duration, now time.Time) (payment.UserSession, error) {
	var us payment.UserSession
	err := s.pool.QueryRow(ctx, `SELECT id, user_id, user_agent, ip, created_at, last_seen_at, expires_at, authenticated_at FROM user_sessions
		WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > $2 AND last_seen_at > $3`, tokenHash, now, now.Add(-idle)).
		Scan(&us.ID, &us.UserID, &us.UserAgent, &us.IP, &us.CreatedAt, &us.LastSeenAt, &us.ExpiresAt, &us.AuthenticatedAt)
	if err != nil {
		return us, mapErr(err)
	}
	if now.Sub(us.LastSeenAt) > time.Minute {
		if _, err := s.pool.Exec(ctx, `UPDATE user_sessions SET last_seen_at = $2 WHERE id = $1`, us.ID, now); err != nil {
			return us, err
		}
		us.LastSeenAt = now
	}
	return us, nil
}

// ListUserSessions lists a user's live sessions, newest first.
func (s Identity) ListUserSessions(ctx context.Context, userID string, idle time.Duration, now time.Time) ([]payment.UserSession, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, user_id, user_agent, ip, created_at, last_seen_at, expires_at FROM user_sessions
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
func (s Identity) SessionAuthenticated(ctx context.Context, sessionID string, now time.Time) error {
	_, err := s.db(ctx).Exec(ctx, `UPDATE user_sessions SET authenticated_at = $2 WHERE id = $1 AND revoked_at IS NULL`, sessionID, now)
	return err
}

// RevokeUserSessions revokes a user's sessions: the one named by id, or
// (id empty) every one but keep, in ctx's transaction if it has one. It
// returns how many it revoked.
func (s Identity) RevokeUserSessions(ctx context.Context, userID, id, keep string, now time.Time) (int64, error) {
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

// AddMember makes a user a member of a project with a role.
func (s Access) AddMember(ctx context.Context, projectID, userID string, role payment.Role, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES ($1,$2,$3,$4)
		ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`, projectID, userID, role, now)
	return mapErr(err)
}

// MemberRole is a user's role in a project; ErrNotFound when not a member.
func (s Access) MemberRole(ctx context.Context, projectID, userID string) (payment.Role, error) {
	var role payment.Role
	err := s.pool.QueryRow(ctx, `SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID).Scan(&role)
	return role, mapErr(err)
}

// ProjectsOfUser lists the projects a user belongs to, with the role.
func (s Access) ProjectsOfUser(ctx context.Context, userID string) ([]payment.Membership, error) {
	rows, err := s.pool.Query(ctx, `SELECT p.id, p.name, m.role, p.created_at FROM project_members m JOIN projects p ON p.id = m.project_id
		WHERE m.user_id = $1 ORDER BY p.created_at, p.id`, userID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Membership, error) {
		var m payment.Membership
		err := r.Scan(&m.ProjectID, &m.ProjectName, &m.Role, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return m, err
	})
}

// CreateProjectWithOwner inserts a project, its first API keys and its
// owner in one transaction.
func (s Checkout) CreateProjectWithOwner(ctx context.Context, p payment.Project, keys []APIKey, ownerID string) error {
	return s.WithTx(ctx, func(tx pgx.Tx) error {
		if err := createProject(ctx, tx, p, keys); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES ($1,$2,'owner',$3)`,
			p.ID, ownerID, p.CreatedAt)
		return mapErr(err)
	})
}

// InsertAPIKey records a new API key of a project.
func (s Access) InsertAPIKey(ctx context.Context, k APIKey) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO api_keys (id, project_id, is_live, key_hash, key_hint, created_at) VALUES ($1,$2,$3,$4,$5,$6)`,
		k.ID, k.ProjectID, k.IsLive, k.Hash, k.Hint, k.CreatedAt)
	return mapErr(err)
}

// ListAPIKeys lists a project environment's keys that still work (not
// revoked, not past a roll's grace), oldest first.
func (s Access) ListAPIKeys(ctx context.Context, projectID string, isLive bool, now time.Time) ([]payment.APIKeyInfo, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, is_live, key_hint, created_at, last_used_at, expires_at FROM api_keys
		WHERE project_id = $1 AND is_live = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
		ORDER BY created_at, id`, projectID, isLive, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.APIKeyInfo, error) {
		var k payment.APIKeyInfo
		err := r.Scan(&k.ID, &k.IsLive, &k.Hint, &k.CreatedAt, &k.LastUsedAt, &k.ExpiresAt)
		return k, err
	})
}

// EndAPIKey ends a working key of a project environment: at once
// (revoke), or at expiresAt (a roll's grace; never later than an end
// already set). ErrNotFound when no such working key exists.
func (s Access) EndAPIKey(ctx context.Context, projectID string, isLive bool, id string, expiresAt *time.Time, now time.Time) error {
	var tag interface{ RowsAffected() int64 }
	var err error
	if expiresAt == nil {
		tag, err = s.db(ctx).Exec(ctx, `UPDATE api_keys SET revoked_at = $4 WHERE project_id = $1 AND is_live = $2 AND id = $3
			AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $4)`, projectID, isLive, id, now)
	} else {
		tag, err = s.db(ctx).Exec(ctx, `UPDATE api_keys SET expires_at = least(coalesce(expires_at, $5), $5) WHERE project_id = $1 AND is_live = $2
			AND id = $3 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $4)`, projectID, isLive, id, now, *expiresAt)
	}
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return payment.ErrNotFound
	}
	return nil
}

// TouchAPIKey records a key's use, at most once a minute.
func (s Access) TouchAPIKey(ctx context.Context, id string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $2::timestamptz WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`, id, now)
	return err
}
