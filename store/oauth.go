package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

const oauthClientColumns = `id, project_id, name, redirect_uris, confidential, secret_hash, created_at, revoked_at`

// InsertOAuthClient records a registered OAuth client.
func (s *Store) InsertOAuthClient(ctx context.Context, c payment.OAuthClient) error {
	uris, _ := json.Marshal(c.RedirectURIs)
	_, err := s.pool.Exec(ctx, `INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
		c.ID, c.ProjectID, c.Name, uris, c.Confidential, c.SecretHash, c.CreatedAt, c.RevokedAt)
	return mapErr(err)
}

// OAuthClients lists a project's clients, revoked ones included, newest
// first.
func (s *Store) OAuthClients(ctx context.Context, projectID string) ([]payment.OAuthClient, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE project_id = $1
		ORDER BY created_at DESC, id DESC`, projectID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.OAuthClient, error) { return scanOAuthClient(r) })
}

// OAuthClient returns a client by its ID, whatever its project.
func (s *Store) OAuthClient(ctx context.Context, id string) (payment.OAuthClient, error) {
	return scanOAuthClient(s.pool.QueryRow(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = $1`, id))
}

// RevokeOAuthClient ends a project's client and reports whether this call
// ended it; revoking it again changes nothing.
func (s *Store) RevokeOAuthClient(ctx context.Context, projectID, id string, at time.Time) (payment.OAuthClient, bool, error) {
	c, err := scanOAuthClient(s.pool.QueryRow(ctx, `UPDATE oauth_clients SET revoked_at = $3
		WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL RETURNING `+oauthClientColumns, id, projectID, at))
	if err == nil || !errors.Is(err, payment.ErrNotFound) {
		return c, err == nil, err
	}
	c, err = scanOAuthClient(s.pool.QueryRow(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients
		WHERE id = $1 AND project_id = $2`, id, projectID))
	return c, false, err
}

func scanOAuthClient(row pgx.Row) (payment.OAuthClient, error) {
	var c payment.OAuthClient
	var uris []byte
	if err := row.Scan(&c.ID, &c.ProjectID, &c.Name, &uris, &c.Confidential, &c.SecretHash, &c.CreatedAt, &c.RevokedAt); err != nil {
		return c, mapErr(err)
	}
	c.CreatedAt = c.CreatedAt.UTC()
	if c.RevokedAt != nil {
		t := c.RevokedAt.UTC()
		c.RevokedAt = &t
	}
	return c, json.Unmarshal(uris, &c.RedirectURIs)
}
