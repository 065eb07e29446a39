package oauth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ory/fosite"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// Token kinds, as stored.
const (
	kindCode    = "authorize_code"
	kindPKCE    = "pkce"
	kindAccess  = "access_token"
	kindRefresh = "refresh_token"
)

// storage keeps the authorization server's state in Postgres: fosite's
// storage interfaces over the oauth_* tables, with transactions carried
// in the context (fosite's storage.Transactional).
type storage struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

type txKey struct{}

// storageError is the database failing a read, apart from a code or token
// that is not there: fosite reports both as an invalid token, the API
// tells them apart.
type storageError struct{ err error }

func (e *storageError) Error() string { return e.err.Error() }
func (e *storageError) Unwrap() error { return e.err }

type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *storage) q(ctx context.Context) querier {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return s.pool
}

// WithTx has the storage write in tx for ctx: an authorization's codes
// and its audit entry commit together.
func WithTx(ctx context.Context, tx pgx.Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

func (s *storage) BeginTX(ctx context.Context) (context.Context, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, txKey{}, tx), nil
}

func (s *storage) Commit(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	if !ok {
		return errors.New("oauth storage: commit without a transaction")
	}
	return tx.Commit(ctx)
}

func (s *storage) Rollback(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	if !ok {
		return errors.New("oauth storage: rollback without a transaction")
	}
	return tx.Rollback(ctx)
}

// hmacKey returns the key of token signatures, making it on first use.
func (s *storage) hmacKey(ctx context.Context) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO oauth_keys (id, hmac_key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, key); err != nil {
		return nil, err
	}
	err := s.pool.QueryRow(ctx, `SELECT hmac_key FROM oauth_keys WHERE id = 1`).Scan(&key)
	return key, err
}

// client is a registered application as fosite sees it: the code flow
// with refresh tokens, every scope, its exact redirect URIs, answers in
// the query (the one response mode, which a request may name), and for a
// confidential client the SHA-256 of its secret.
func (s *storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	if !payment.ValidID(payment.PrefixOAuthClient, id) {
		return nil, fosite.ErrNotFound
	}
	var uris []byte
	var confidential bool
	var hash string
	err := s.q(ctx).QueryRow(ctx, `SELECT redirect_uris, confidential, secret_hash FROM oauth_clients
		WHERE id = $1 AND revoked_at IS NULL`, id).Scan(&uris, &confidential, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c := &fosite.DefaultClient{ID: id, Public: !confidential, Scopes: payment.ScopeNames(),
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}
	if confidential {
		c.Secret = []byte(hash)
	}
	rc := &fosite.DefaultResponseModeClient{DefaultClient: c, ResponseModes: []fosite.ResponseModeType{fosite.ResponseModeQuery}}
	return rc, json.Unmarshal(uris, &c.RedirectURIs)
}

// Client assertions (private_key_jwt) are not offered: the clients are
// not OpenID Connect clients, so fosite refuses them before these.
func (s *storage) ClientAssertionJWTValid(context.Context, string) error { return nil }
func (s *storage) SetClientAssertionJWT(context.Context, string, time.Time) error {
	return errors.New("client assertions are not supported")
}

// sensitive form fields are never stored.
var sensitive = []string{"client_secret", "code_verifier", "code", "refresh_token", "token", "password"}

func (s *storage) create(ctx context.Context, kind, signature string, r fosite.Requester) error {
	sess, ok := r.GetSession().(*Session)
	if !ok {
		return fmt.Errorf("oauth storage: session of type %T", r.GetSession())
	}
	exp := sess.GetExpiresAt(tokenType(kind))
	if exp.IsZero() {
		return fmt.Errorf("oauth storage: %s without an expiry", kind)
	}
	form := url.Values{}
	for k, v := range r.GetRequestForm() {
		form[k] = v
	}
	for _, k := range sensitive {
		form.Del(k)
	}
	f, _ := json.Marshal(form)
	js, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	_, err = s.q(ctx).Exec(ctx, `INSERT INTO oauth_tokens (signature, kind, request_id, client_id, requested_at,
		requested_scopes, granted_scopes, form, session, expires_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
		signature, kind, r.GetID(), r.GetClient().GetID(), r.GetRequestedAt(), nonNil(r.GetRequestedScopes()),
		nonNil(r.GetGrantedScopes()), f, js, exp)
	return err
}

func nonNil(a fosite.Arguments) []string {
	if a == nil {
		return []string{}
	}
	return a
}

func tokenType(kind string) fosite.TokenType {
	switch kind {
	case kindAccess:
		return fosite.AccessToken
	case kindRefresh:
		return fosite.RefreshToken
	}
	return fosite.AuthorizeCode
}

// get reads a code or token of kind: its request, and whether it is still
// active. A token of a revoked grant or client is not found.
func (s *storage) get(ctx context.Context, kind, signature string) (fosite.Requester, bool, error) {
	var (
		id, clientID       string
		requestedAt, exp   time.Time
		requested, granted []string
		form, js           []byte
		active             bool
		role               *string
		lastUsed           *time.Time
	)
	err := s.q(ctx).QueryRow(ctx, `SELECT t.request_id, t.client_id, t.requested_at, t.requested_scopes, t.granted_scopes,
			t.form, t.session, t.active, t.expires_at, m.role, g.last_used_at
		FROM oauth_tokens t
		JOIN oauth_clients c ON c.id = t.client_id AND c.revoked_at IS NULL
		LEFT JOIN oauth_grants g ON g.id = t.request_id
		LEFT JOIN project_members m ON m.project_id = g.project_id AND m.user_id = g.user_id
		WHERE t.signature = $1 AND t.kind = $2 AND g.revoked_at IS NULL`, signature, kind).
		Scan(&id, &clientID, &requestedAt, &requested, &granted, &form, &js, &active, &exp, &role, &lastUsed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, fosite.ErrNotFound
	}
	if err != nil {
		return nil, false, &storageError{err}
	}
	client, err := s.GetClient(ctx, clientID)
	if err != nil {
		return nil, false, &storageError{err}
	}
	sess := &Session{}
	if err := json.Unmarshal(js, sess); err != nil {
		return nil, false, err
	}
	// The row's expiry is the token's: an operator (or a test) that moves
	// it moves the token's end.
	sess.SetExpiresAt(tokenType(kind), exp.UTC())
	sess.LastUsedAt = lastUsed
	if role != nil {
		sess.Role = payment.Role(*role)
	}
	r := fosite.NewRequest()
	r.ID, r.RequestedAt, r.Client, r.Session = id, requestedAt.UTC(), client, sess
	r.RequestedScope, r.GrantedScope = requested, granted
	if err := json.Unmarshal(form, &r.Form); err != nil {
		return nil, false, err
	}
	return r, active, nil
}

func (s *storage) delete(ctx context.Context, kind, signature string) error {
	_, err := s.q(ctx).Exec(ctx, `DELETE FROM oauth_tokens WHERE signature = $1 AND kind = $2`, signature, kind)
	return err
}

func (s *storage) CreateAuthorizeCodeSession(ctx context.Context, code string, r fosite.Requester) error {
	return s.create(ctx, kindCode, code, r)
}

func (s *storage) GetAuthorizeCodeSession(ctx context.Context, code string, _ fosite.Session) (fosite.Requester, error) {
	r, active, err := s.get(ctx, kindCode, code)
	if err == nil && !active {
		return r, fosite.ErrInvalidatedAuthorizeCode
	}
	return r, err
}

// InvalidateAuthorizeCodeSession marks a code used, once: of two
// exchanges of one code at the same moment, one fails.
func (s *storage) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	retired, err := s.retire(ctx, kindCode, code)
	if err == nil && !retired {
		return fosite.ErrInvalidatedAuthorizeCode
	}
	return err
}

// retire marks an active code or token of kind inactive, and reports
// whether this call did (the row was still active).
func (s *storage) retire(ctx context.Context, kind, signature string) (bool, error) {
	tag, err := s.q(ctx).Exec(ctx, `UPDATE oauth_tokens SET active = false
		WHERE signature = $1 AND kind = $2 AND active`, signature, kind)
	return err == nil && tag.RowsAffected() == 1, err
}

func (s *storage) CreatePKCERequestSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.create(ctx, kindPKCE, signature, r)
}

func (s *storage) GetPKCERequestSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	r, _, err := s.get(ctx, kindPKCE, signature)
	return r, err
}

func (s *storage) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return s.delete(ctx, kindPKCE, signature)
}

// CreateAccessTokenSession stores an access token, and on the first one
// of a request, the grant it belongs to.
func (s *storage) CreateAccessTokenSession(ctx context.Context, signature string, r fosite.Requester) error {
	sess, ok := r.GetSession().(*Session)
	if !ok {
		return fmt.Errorf("oauth storage: session of type %T", r.GetSession())
	}
	if _, err := s.q(ctx).Exec(ctx, `INSERT INTO oauth_grants (id, client_id, user_id, project_id, is_live, scopes, created_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (id) DO NOTHING`, r.GetID(), r.GetClient().GetID(), sess.UserID,
		sess.ProjectID, sess.IsLive, nonNil(r.GetGrantedScopes()), s.now()); err != nil {
		return err
	}
	return s.create(ctx, kindAccess, signature, r)
}

func (s *storage) GetAccessTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	r, active, err := s.get(ctx, kindAccess, signature)
	if err == nil && !active {
		return nil, fosite.ErrNotFound
	}
	if err == nil && r.GetSession().(*Session).Role == "" {
		return nil, fosite.ErrNotFound // the user is no longer a member of the project
	}
	return r, err
}

func (s *storage) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.delete(ctx, kindAccess, signature)
}

func (s *storage) CreateRefreshTokenSession(ctx context.Context, signature, _ string, r fosite.Requester) error {
	return s.create(ctx, kindRefresh, signature, r)
}

// GetRefreshTokenSession returns a rotated refresh token with
// fosite.ErrInactiveToken: fosite then treats it as reused and revokes
// the grant.
func (s *storage) GetRefreshTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	r, active, err := s.get(ctx, kindRefresh, signature)
	if err == nil && !active {
		return r, fosite.ErrInactiveToken
	}
	return r, err
}

func (s *storage) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.delete(ctx, kindRefresh, signature)
}

// RotateRefreshToken retires a refresh token as it is used, once (of two
// refreshes with one token at the same moment, one fails), and the access
// tokens issued with it.
func (s *storage) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	retired, err := s.retire(ctx, kindRefresh, signature)
	if err != nil {
		return err
	}
	if !retired {
		return fosite.ErrSerializationFailure
	}
	return s.RevokeAccessToken(ctx, requestID)
}

// RevokeRefreshToken revokes the whole grant: fosite calls it when a
// refresh token or a code is reused, and when a token is revoked
// (RFC 7009); the reason is the context's (WithRevocationReason).
func (s *storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	_, err := store.RevokeOAuthGrant(ctx, s.q(ctx), requestID, revocationReason(ctx), s.now())
	return err
}

// RevokeAccessToken deletes the access tokens of a request.
func (s *storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	_, err := s.q(ctx).Exec(ctx, `DELETE FROM oauth_tokens WHERE request_id = $1 AND kind = $2`, requestID, kindAccess)
	return err
}

type reasonKey struct{}

// WithRevocationReason names why the grants fosite revokes under ctx end.
func WithRevocationReason(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, reasonKey{}, reason)
}

func revocationReason(ctx context.Context) string {
	if r, ok := ctx.Value(reasonKey{}).(string); ok {
		return r
	}
	return "token_revoked"
}

// touch records a grant's use, at most once a minute.
func (s *storage) touch(ctx context.Context, grantID string, last *time.Time) {
	now := s.now()
	if last != nil && now.Sub(*last) < time.Minute {
		return
	}
	_, _ = s.pool.Exec(ctx, `UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1`, grantID, now)
}

// purge deletes the codes and tokens that have expired.
func (s *storage) purge(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE expires_at < $1`, s.now())
	return tag.RowsAffected(), err
}
