package checkout

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// APIKey is a stored API key: only its hash and a hint are kept.
type APIKey struct {
	ID        string
	ProjectID string
	IsLive    bool
	Hash      string
	Hint      string
	CreatedAt time.Time
}

// CreateProject inserts a project and its first API keys in one transaction.
func (s Store) CreateProject(ctx context.Context, p payment.Project, keys []APIKey) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error { return createProject(ctx, tx, p, keys) })
}

func createProject(ctx context.Context, tx pgx.Tx, p payment.Project, keys []APIKey) error {
	{
		_, err := tx.Exec(ctx, `INSERT INTO projects (id, name, complete_on, underpayment_tolerance_percent,
			late_payment_window_seconds, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$6)`,
			p.ID, p.Name, p.CompleteOn, p.UnderpaymentTolerancePercent.String(), int64(p.LatePaymentWindow/time.Second), p.CreatedAt)
		if err != nil {
			return db.MapErr(err)
		}
		for _, k := range keys {
			_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, project_id, is_live, key_hash, key_hint, created_at)
				VALUES ($1,$2,$3,$4,$5,$6)`, k.ID, p.ID, k.IsLive, k.Hash, k.Hint, k.CreatedAt)
			if err != nil {
				return db.MapErr(err)
			}
		}
		return nil
	}
}

// GetProject returns a project.
func (s Store) GetProject(ctx context.Context, id string) (payment.Project, error) {
	var p payment.Project
	var tol string
	var late int64
	var lifetime *int64
	err := s.h.Pool.QueryRow(ctx, `SELECT id, name, complete_on, underpayment_tolerance_percent::text,
		late_payment_window_seconds, session_lifetime_seconds, created_at, updated_at FROM projects WHERE id = $1`, id).
		Scan(&p.ID, &p.Name, &p.CompleteOn, &tol, &late, &lifetime, &p.CreatedAt, &p.UpdatedAt)
	if err != nil {
		return p, db.MapErr(err)
	}
	if lifetime != nil {
		p.SessionLifetime = time.Duration(*lifetime) * time.Second
	}
	p.UnderpaymentTolerancePercent = db.MustDecimal(tol)
	p.LatePaymentWindow = time.Duration(late) * time.Second
	return p, nil
}

// APIKeyByHash finds an unrevoked API key by the hash of its secret.
func (s Store) APIKeyByHash(ctx context.Context, hash string) (APIKey, error) {
	var k APIKey
	err := s.h.Pool.QueryRow(ctx, `SELECT id, project_id, is_live, key_hash, key_hint, created_at
		FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`, hash).
		Scan(&k.ID, &k.ProjectID, &k.IsLive, &k.Hash, &k.Hint, &k.CreatedAt)
	return k, db.MapErr(err)
}

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
