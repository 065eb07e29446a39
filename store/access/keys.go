package access

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// AddMember makes a user a member of a project with a role.
func (s Store) AddMember(ctx context.Context, projectID, userID string, role payment.Role, now time.Time) error {
	_, err := s.h.Pool.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES ($1,$2,$3,$4)
		ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`, projectID, userID, role, now)
	return db.MapErr(err)
}

// MemberRole is a user's role in a project; ErrNotFound when not a member.
func (s Store) MemberRole(ctx context.Context, projectID, userID string) (payment.Role, error) {
	var role payment.Role
	err := s.h.Pool.QueryRow(ctx, `SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID).Scan(&role)
	return role, db.MapErr(err)
}

// ProjectsOfUser lists the projects a user belongs to, with the role.
func (s Store) ProjectsOfUser(ctx context.Context, userID string) ([]payment.Membership, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT p.id, p.name, m.role, p.created_at FROM project_members m JOIN projects p ON p.id = m.project_id
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

// InsertAPIKey records a new API key of a project.
func (s Store) InsertAPIKey(ctx context.Context, k checkout.APIKey) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO api_keys (id, project_id, is_live, key_hash, key_hint, created_at) VALUES ($1,$2,$3,$4,$5,$6)`,
		k.ID, k.ProjectID, k.IsLive, k.Hash, k.Hint, k.CreatedAt)
	return db.MapErr(err)
}

// ListAPIKeys lists a project environment's keys that still work (not
// revoked, not past a roll's grace), oldest first.
func (s Store) ListAPIKeys(ctx context.Context, projectID string, isLive bool, now time.Time) ([]payment.APIKeyInfo, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT id, is_live, key_hint, created_at, last_used_at, expires_at FROM api_keys
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
func (s Store) EndAPIKey(ctx context.Context, projectID string, isLive bool, id string, expiresAt *time.Time, now time.Time) error {
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
func (s Store) TouchAPIKey(ctx context.Context, id string, now time.Time) error {
	_, err := s.h.Pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $2::timestamptz WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`, id, now)
	return err
}
