package access

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

const oauthClientColumns = `id, project_id, name, redirect_uris, confidential, secret_hash, created_at, revoked_at`

// InsertOAuthClient records a registered OAuth client.
func (s Store) InsertOAuthClient(ctx context.Context, c payment.OAuthClient) error {
	uris, _ := json.Marshal(c.RedirectURIs)
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
		c.ID, c.ProjectID, c.Name, uris, c.Confidential, c.SecretHash, c.CreatedAt, c.RevokedAt)
	return db.MapErr(err)
}

// OAuthClients lists a project's clients, revoked ones included, newest
// first.
func (s Store) OAuthClients(ctx context.Context, projectID string) ([]payment.OAuthClient, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE project_id = $1
		ORDER BY created_at DESC, id DESC`, projectID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.OAuthClient, error) { return scanOAuthClient(r) })
}

// OAuthClient returns a client by its ID, whatever its project.
func (s Store) OAuthClient(ctx context.Context, id string) (payment.OAuthClient, error) {
	return scanOAuthClient(s.h.Pool.QueryRow(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = $1`, id))
}

// RevokeOAuthClient ends a project's client and reports whether this call
// ended it; revoking it again changes nothing.
func (s Store) RevokeOAuthClient(ctx context.Context, projectID, id string, at time.Time) (payment.OAuthClient, bool, error) {
	c, err := scanOAuthClient(s.db(ctx).QueryRow(ctx, `UPDATE oauth_clients SET revoked_at = $3
		WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL RETURNING `+oauthClientColumns, id, projectID, at))
	if err == nil || !errors.Is(err, payment.ErrNotFound) {
		return c, err == nil, err
	}
	c, err = scanOAuthClient(s.db(ctx).QueryRow(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients
		WHERE id = $1 AND project_id = $2`, id, projectID))
	return c, false, err
}

func scanOAuthClient(row pgx.Row) (payment.OAuthClient, error) {
	var c payment.OAuthClient
	var uris []byte
	if err := row.Scan(&c.ID, &c.ProjectID, &c.Name, &uris, &c.Confidential, &c.SecretHash, &c.CreatedAt, &c.RevokedAt); err != nil {
		return c, db.MapErr(err)
	}
	c.CreatedAt = c.CreatedAt.UTC()
	if c.RevokedAt != nil {
		t := c.RevokedAt.UTC()
		c.RevokedAt = &t
	}
	return c, json.Unmarshal(uris, &c.RedirectURIs)
}

// RevokeOAuthGrant ends a grant and every code and token of it, at once,
// through q (the pool or the transaction of the change that revokes
// it). It reports whether the grant was alive until then.
func RevokeOAuthGrant(ctx context.Context, q db.Execer, grantID, reason string, at time.Time) (bool, error) {
	tag, err := q.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $2, revoked_reason = $3
		WHERE id = $1 AND revoked_at IS NULL`, grantID, at, reason)
	if err != nil {
		return false, err
	}
	if _, err := q.Exec(ctx, `UPDATE oauth_tokens SET active = false WHERE request_id = $1 AND active`, grantID); err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// RevokeUserOAuthGrants ends every application's access on the user's
// consent, in ctx's transaction (InTx) or its own: the live grants (with
// reason, at at), their tokens, and the codes not yet exchanged for a
// grant (a code is the grant's first record; its grant is written at the
// exchange). It returns the grants it ended.
//
// The order keeps a concurrent exchange or refresh from outliving it and
// from deadlocking with it: the codes first (an exchange in flight has
// locked its code: this waits for it, and the grant it writes is then
// seen by the grants' statement), the refresh tokens next and the access
// tokens after (the order a refresh locks them in), the grants last (a
// refresh writes its grant after its tokens). Tokens written by a refresh
// that commits meanwhile stay active but belong to an ended grant, and a
// token of an ended grant is not found.
func (s Store) RevokeUserOAuthGrants(ctx context.Context, userID, reason string, at time.Time) ([]payment.OAuthGrant, error) {
	var ended []payment.OAuthGrant
	err := s.h.InTx(ctx, func(ctx context.Context) error {
		db := s.db(ctx)
		if _, err := db.Exec(ctx, `UPDATE oauth_tokens SET active = false
			WHERE kind = 'authorize_code' AND active AND session->>'userId' = $1`, userID); err != nil {
			return err
		}
		for _, kind := range []string{"refresh_token", "access_token"} {
			if _, err := db.Exec(ctx, `UPDATE oauth_tokens SET active = false WHERE kind = $2 AND active
				AND request_id IN (SELECT id FROM oauth_grants WHERE user_id = $1 AND revoked_at IS NULL)`, userID, kind); err != nil {
				return err
			}
		}
		rows, err := db.Query(ctx, `UPDATE oauth_grants g SET revoked_at = $3, revoked_reason = $2
			FROM oauth_clients c, users u
			WHERE g.user_id = $1 AND g.revoked_at IS NULL AND c.id = g.client_id AND u.id = g.user_id
			RETURNING `+oauthGrantColumns, userID, reason, at)
		if err != nil {
			return err
		}
		ended, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.OAuthGrant, error) { return scanOAuthGrant(r) })
		return err
	})
	return ended, err
}

// SessionLive reads whether a user's session is still live (not revoked)
// and, in ctx's transaction, holds it so until the transaction ends: a
// revocation of the session waits for it, and one that came first is
// seen.
func (s Store) SessionLive(ctx context.Context, sessionID string) (bool, error) {
	var one int
	err := s.db(ctx).QueryRow(ctx, `SELECT 1 FROM user_sessions WHERE id = $1 AND revoked_at IS NULL FOR SHARE`, sessionID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

const oauthGrantColumns = `g.id, g.client_id, c.name, g.user_id, u.email, g.project_id, g.is_live, g.scopes, g.created_at,
	g.last_used_at, g.revoked_at, COALESCE(g.revoked_reason, '')`

// OAuthGrants lists the live grants of a project (projectID) or of a user
// (userID), newest first.
func (s Store) OAuthGrants(ctx context.Context, projectID, userID string) ([]payment.OAuthGrant, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants g
		JOIN oauth_clients c ON c.id = g.client_id JOIN users u ON u.id = g.user_id
		WHERE g.revoked_at IS NULL AND c.revoked_at IS NULL AND ($1 = '' OR g.project_id = $1) AND ($2 = '' OR g.user_id = $2)
		ORDER BY g.created_at DESC, g.id DESC LIMIT 1000`, projectID, userID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.OAuthGrant, error) { return scanOAuthGrant(r) })
}

// OAuthGrant reads a grant.
func (s Store) OAuthGrant(ctx context.Context, id string) (payment.OAuthGrant, error) {
	return scanOAuthGrant(s.h.Pool.QueryRow(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants g
		JOIN oauth_clients c ON c.id = g.client_id JOIN users u ON u.id = g.user_id WHERE g.id = $1`, id))
}

// RevokeOAuthGrantAudited revokes a grant and records a's audit entry
// with it, if it was alive.
func (s Store) RevokeOAuthGrantAudited(ctx context.Context, id, reason string, at time.Time, a payment.AuditEntry) (bool, error) {
	var revoked bool
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		if revoked, err = RevokeOAuthGrant(ctx, tx, id, reason, at); err != nil || !revoked {
			return err
		}
		return db.RecordAudit(ctx, tx, a)
	})
	return revoked, err
}

func scanOAuthGrant(row pgx.Row) (payment.OAuthGrant, error) {
	var g payment.OAuthGrant
	err := row.Scan(&g.ID, &g.ClientID, &g.ClientName, &g.UserID, &g.UserEmail, &g.ProjectID, &g.IsLive, &g.Scopes,
		&g.CreatedAt, &g.LastUsedAt, &g.RevokedAt, &g.RevokedReason)
	g.CreatedAt = g.CreatedAt.UTC()
	return g, db.MapErr(err)
}
