package checkout

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// CreateProjectWithOwner inserts a project, its first API keys and its
// owner in one transaction.
func (s Store) CreateProjectWithOwner(ctx context.Context, p payment.Project, keys []APIKey, ownerID string) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := createProject(ctx, tx, p, keys); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES ($1,$2,'owner',$3)`,
			p.ID, ownerID, p.CreatedAt)
		return db.MapErr(err)
	})
}
