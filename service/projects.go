package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// CreatedProject is a new project with its API keys, shown only once.
type CreatedProject struct {
	Project    payment.Project
	LiveKey    string
	SandboxKey string
}

// CreateProject creates a project with one live and one sandbox API key.
func (svc Checkout) CreateProject(ctx context.Context, name string) (CreatedProject, error) {
	var probs payment.Problems
	if name == "" || len(name) > payment.MaxTitleLength {
		probs.Addf("name", "must be 1 to %d characters", payment.MaxTitleLength)
	}
	if err := probs.Err(); err != nil {
		return CreatedProject{}, err
	}
	now := svc.now()
	p := payment.Project{ID: payment.NewID(payment.PrefixProject, now), Name: name, CompleteOn: payment.TxFinalized,
		LatePaymentWindow: 24 * time.Hour, CreatedAt: now, UpdatedAt: now}
	live, liveKey := newAPIKey(true, now)
	test, testKey := newAPIKey(false, now)
	if err := svc.store.Checkout().CreateProject(ctx, p, []store.APIKey{live, test}); err != nil {
		return CreatedProject{}, fmt.Errorf("create project: %w", err)
	}
	return CreatedProject{Project: p, LiveKey: liveKey, SandboxKey: testKey}, nil
}

// API key prefixes: the environment is part of the key.
const (
	LiveKeyPrefix    = "svc_live_"
	SandboxKeyPrefix = "svc_test_"
)

func newAPIKey(isLive bool, now time.Time) (store.APIKey, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	prefix := SandboxKeyPrefix
	if isLive {
		prefix = LiveKeyPrefix
	}
	secret := prefix + base64.RawURLEncoding.EncodeToString(b)
	return store.APIKey{ID: payment.NewID(payment.PrefixAPIKey, now), IsLive: isLive,
		Hash: payment.HashSecret(secret), Hint: secret[:len(prefix)+4] + "…" + secret[len(secret)-4:], CreatedAt: now}, secret
}

// AuthCacheTTL is how long a verified API key is trusted without asking
// the database again: the lookup would otherwise double the database work
// of every read. A revoked key keeps working for at most this long.
const AuthCacheTTL = 30 * time.Second

type cachedPrincipal struct {
	principal payment.Principal
	until     time.Time
}

// Authenticate resolves an API key to the principal it acts for.
func (svc Checkout) Authenticate(ctx context.Context, key string) (payment.Principal, error) {
	hash := payment.HashSecret(key)
	if c, ok := svc.authCache.Load(hash); ok && time.Now().Before(c.(cachedPrincipal).until) {
		return c.(cachedPrincipal).principal, nil
	}
	k, err := svc.store.Checkout().APIKeyByHash(ctx, hash)
	if errors.Is(err, payment.ErrNotFound) {
		return payment.Principal{}, payment.ErrUnauthorized
	}
	if err != nil {
		return payment.Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p := payment.Principal{ProjectID: k.ProjectID, IsLive: k.IsLive, KeyID: k.ID}
	// Its last use, for the key list, kept to the minute; a verification
	// happens at most once per AuthCacheTTL per process.
	if err := svc.store.Access().TouchAPIKey(ctx, k.ID, svc.now()); err != nil {
		slog.WarnContext(ctx, "api key: last use not recorded", "key", k.ID, "err", err)
	}
	// Only verified keys are cached, so unknown keys cannot grow the cache.
	svc.authCache.Store(hash, cachedPrincipal{p, time.Now().Add(AuthCacheTTL)})
	return p, nil
}

// forgetKey drops a key from this process's cache of verified keys, so
// that its revocation takes effect here at once (elsewhere within
// AuthCacheTTL).
func (svc Checkout) forgetKey(keyID string) {
	svc.authCache.Range(func(hash, c any) bool {
		if c.(cachedPrincipal).principal.KeyID == keyID {
			svc.authCache.Delete(hash)
		}
		return true
	})
}

// GetProject returns the principal's project; another project is not found.
func (svc Checkout) GetProject(ctx context.Context, p payment.Principal, id string) (payment.Project, error) {
	if err := owns(p, id); err != nil {
		return payment.Project{}, err
	}
	return svc.store.Checkout().GetProject(ctx, id)
}
