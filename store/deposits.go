package store

import (
	"context"
	"time"
)

// SetDepositKey sets a project's extended public key for an environment.
// The index counter is kept, so addresses already handed out are never
// handed out again.
func (s *Store) SetDepositKey(ctx context.Context, projectID string, isLive bool, xpub string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO project_deposit_keys (project_id, is_live, xpub, created_at)
		VALUES ($1,$2,$3,$4) ON CONFLICT (project_id, is_live) DO UPDATE SET xpub = EXCLUDED.xpub`,
		projectID, isLive, xpub, now)
	return mapErr(err)
}

// NextDepositIndex takes the next unused derivation index of a project's
// deposit key and returns the key with it.
func (s *Store) NextDepositIndex(ctx context.Context, projectID string, isLive bool) (xpub string, index int64, err error) {
	err = s.pool.QueryRow(ctx, `UPDATE project_deposit_keys SET next_index = next_index + 1
		WHERE project_id = $1 AND is_live = $2 RETURNING xpub, next_index - 1`, projectID, isLive).Scan(&xpub, &index)
	return xpub, index, mapErr(err)
}
