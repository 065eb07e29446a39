// Package oauth is the engine's OAuth 2.1 authorization server, built on
// ory/fosite: the authorization code grant with PKCE (S256 only) and
// rotated refresh tokens, token revocation (RFC 7009) and introspection
// (RFC 7662), with its state in Postgres. Its tokens are opaque:
// svc_at_… (access), svc_rt_… (refresh), svc_ac_… (code). It sits under
// service, beside the operations the API calls, because it keeps its state
// through the store: the service and the API use it, nothing below them.
package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	"github.com/ory/fosite/token/hmac"

	"github.com/paymentsd/paymentsd/payment"
)

// Lifetimes of codes and tokens.
const (
	CodeLifetime         = 10 * time.Minute
	AccessTokenLifetime  = time.Hour
	RefreshTokenLifetime = 90 * 24 * time.Hour
)

// Provider is the authorization server.
type Provider struct {
	fosite.OAuth2Provider
	storage *storage
}

// New returns the authorization server over the database of pool.
func New(pool *pgxpool.Pool) *Provider {
	st := &storage{pool: pool, now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
	cfg := &config{Config: &fosite.Config{
		AccessTokenLifespan:            AccessTokenLifetime,
		RefreshTokenLifespan:           RefreshTokenLifetime,
		AuthorizeCodeLifespan:          CodeLifetime,
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		RefreshTokenScopes:             []string{}, // every grant gets a refresh token
		ClientSecretsHasher:            sha256Hasher{},
	}, storage: st}
	strategy := &tokens{oauth2.NewHMACSHAStrategyUnPrefixed(&hmac.HMACStrategy{Config: cfg}, cfg)}
	explicit := &oauth2.AuthorizeExplicitGrantHandler{AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy,
		AuthorizeCodeStrategy: strategy, CoreStorage: st, TokenRevocationStorage: st, Config: cfg}
	refresh := &oauth2.RefreshTokenGrantHandler{AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy,
		TokenRevocationStorage: st, Config: cfg}
	pkceHandler := &pkce.Handler{AuthorizeCodeStrategy: strategy, Storage: st, Config: cfg}
	cfg.AuthorizeEndpointHandlers.Append(explicit)
	cfg.AuthorizeEndpointHandlers.Append(pkceHandler)
	cfg.TokenEndpointHandlers.Append(explicit)
	cfg.TokenEndpointHandlers.Append(refresh)
	cfg.TokenEndpointHandlers.Append(pkceHandler)
	cfg.TokenIntrospectionHandlers.Append(&oauth2.CoreValidator{CoreStrategy: strategy, CoreStorage: st, Config: cfg})
	cfg.RevocationHandlers.Append(&oauth2.TokenRevocationHandler{TokenRevocationStorage: st,
		AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy})
	return &Provider{OAuth2Provider: fosite.NewOAuth2Provider(st, cfg), storage: st}
}

// config is fosite's configuration with the HMAC key read from the
// database (made there by the first process that needs it).
type config struct {
	*fosite.Config
	storage *storage
	mu      sync.Mutex
	key     []byte
}

func (c *config) GetGlobalSecret(ctx context.Context) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key == nil {
		key, err := c.storage.hmacKey(ctx)
		if err != nil {
			return nil, err
		}
		c.key = key
	}
	return c.key, nil
}

// sha256Hasher compares a client secret with the SHA-256 (hex) stored at
// registration: the secrets are 256-bit random values, so a slow hash
// adds nothing but latency.
type sha256Hasher struct{}

func (sha256Hasher) Compare(_ context.Context, hash, data []byte) error {
	sum := sha256.Sum256(data)
	if len(hash) == 0 || subtle.ConstantTimeCompare(hash, []byte(hex.EncodeToString(sum[:]))) != 1 {
		return errors.New("client secret mismatch")
	}
	return nil
}

func (sha256Hasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	sum := sha256.Sum256(data)
	return []byte(hex.EncodeToString(sum[:])), nil
}

// tokens is fosite's HMAC-SHA256 token strategy with the engine's
// prefixes: a token says what it is, and a secret scanner can find it.
type tokens struct {
	*oauth2.HMACSHAStrategyUnPrefixed
}

func (t *tokens) GenerateAccessToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	token, sig, err := t.HMACSHAStrategyUnPrefixed.GenerateAccessToken(ctx, r)
	return payment.OAuthAccessTokenPrefix + token, sig, err
}

func (t *tokens) ValidateAccessToken(ctx context.Context, r fosite.Requester, token string) error {
	return t.HMACSHAStrategyUnPrefixed.ValidateAccessToken(ctx, r, strings.TrimPrefix(token, payment.OAuthAccessTokenPrefix))
}

func (t *tokens) GenerateRefreshToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	token, sig, err := t.HMACSHAStrategyUnPrefixed.GenerateRefreshToken(ctx, r)
	return payment.OAuthRefreshTokenPrefix + token, sig, err
}

func (t *tokens) ValidateRefreshToken(ctx context.Context, r fosite.Requester, token string) error {
	return t.HMACSHAStrategyUnPrefixed.ValidateRefreshToken(ctx, r, strings.TrimPrefix(token, payment.OAuthRefreshTokenPrefix))
}

func (t *tokens) GenerateAuthorizeCode(ctx context.Context, r fosite.Requester) (string, string, error) {
	token, sig, err := t.HMACSHAStrategyUnPrefixed.GenerateAuthorizeCode(ctx, r)
	return payment.OAuthCodePrefix + token, sig, err
}

func (t *tokens) ValidateAuthorizeCode(ctx context.Context, r fosite.Requester, token string) error {
	return t.HMACSHAStrategyUnPrefixed.ValidateAuthorizeCode(ctx, r, strings.TrimPrefix(token, payment.OAuthCodePrefix))
}

// ErrInvalidToken is an access token that is unknown, expired, revoked,
// or of a user no longer in the project.
var ErrInvalidToken = errors.New("invalid access token")

// Authenticate resolves an access token to the principal it acts as: its
// grant's user, with their role in the project today, in the grant's
// project and environment, within its scopes.
func (p *Provider) Authenticate(ctx context.Context, token string) (payment.Principal, error) {
	_, ar, err := p.IntrospectToken(ctx, token, fosite.AccessToken, &Session{})
	var unavailable *storageError
	switch {
	case errors.As(err, &unavailable):
		return payment.Principal{}, unavailable.err
	case err != nil:
		return payment.Principal{}, ErrInvalidToken
	}
	sess, ok := ar.GetSession().(*Session)
	if !ok {
		return payment.Principal{}, ErrInvalidToken
	}
	p.storage.touch(ctx, ar.GetID(), sess.LastUsedAt)
	return payment.Principal{ProjectID: sess.ProjectID, IsLive: sess.IsLive, UserID: sess.UserID, Role: sess.Role,
		GrantID: ar.GetID(), ClientID: ar.GetClient().GetID(), Scopes: ar.GetGrantedScopes()}, nil
}

// Purge deletes the codes and tokens that have expired.
func (p *Provider) Purge(ctx context.Context) (int64, error) { return p.storage.purge(ctx) }

// NewGrantID is the ID of a new grant: the OAuth request ID its codes and
// tokens share.
func NewGrantID() string { return payment.NewID(payment.PrefixOAuthGrant, time.Now()) }
