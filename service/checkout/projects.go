package checkout

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/store"
)

// MaxSessionLifetime bounds a project's checkout session lifetime.
const MaxSessionLifetime = 7 * 24 * time.Hour

// MaxLatePaymentWindow bounds a project's late-payment window.
const MaxLatePaymentWindow = 30 * 24 * time.Hour

// ProjectInput is a change of a project's name and settings; nil fields
// stay as they are.
type ProjectInput struct {
	Name                         *string
	CompleteOn                   *string
	UnderpaymentTolerancePercent *string
	LatePaymentWindowSeconds     *int64
	// SessionLifetimeSeconds: 0 is the deployment's.
	SessionLifetimeSeconds *int64
}

// UpdateProject changes a project's name and settings (owners).
func (svc Service) UpdateProject(ctx context.Context, p payment.Principal, projectID string, in ProjectInput) (payment.Project, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.Project{}, err
	}
	proj, err := svc.Store.Checkout().GetProject(ctx, projectID)
	if err != nil {
		return proj, err
	}
	var probs payment.Problems
	if in.Name != nil {
		if *in.Name == "" || len(*in.Name) > payment.MaxTitleLength {
			probs.Addf("name", "must be 1 to %d characters", payment.MaxTitleLength)
		}
		proj.Name = *in.Name
	}
	if in.CompleteOn != nil {
		switch payment.TransactionStatus(*in.CompleteOn) {
		case payment.TxConfirmed, payment.TxFinalized:
			proj.CompleteOn = payment.TransactionStatus(*in.CompleteOn)
		default:
			probs.Add("completeOn", "must be confirmed or finalized")
		}
	}
	if in.UnderpaymentTolerancePercent != nil {
		d, err := decimal.NewFromString(*in.UnderpaymentTolerancePercent)
		if err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(50)) || d.Exponent() < -2 {
			probs.Add("underpaymentTolerancePercent", "must be a decimal from 0 to 50 with at most 2 decimals")
		} else {
			proj.UnderpaymentTolerancePercent = d
		}
	}
	if in.LatePaymentWindowSeconds != nil {
		w := time.Duration(*in.LatePaymentWindowSeconds) * time.Second
		if *in.LatePaymentWindowSeconds < 0 || w > MaxLatePaymentWindow {
			probs.Addf("latePaymentWindowSeconds", "must be from 0 to %d", int64(MaxLatePaymentWindow/time.Second))
		} else {
			proj.LatePaymentWindow = w
		}
	}
	if in.SessionLifetimeSeconds != nil {
		secs := *in.SessionLifetimeSeconds
		if secs != 0 && (secs < 60 || secs > int64(MaxSessionLifetime/time.Second)) {
			probs.Addf("sessionLifetimeSeconds", "must be 0 (the deployment's) or from 60 to %d", int64(MaxSessionLifetime/time.Second))
		} else {
			proj.SessionLifetime = time.Duration(secs) * time.Second
		}
	}
	if err := probs.Err(); err != nil {
		return proj, err
	}
	proj.UpdatedAt = svc.Now()
	err = svc.Audited(ctx, projectID, p.IsLive, payment.AuditProjectUpdated, "project", projectID, nil,
		func(ctx context.Context) error { return svc.Store.Access().UpdateProject(ctx, proj) })
	return proj, err
}

// Projects lists the user's projects with their roles.
func (svc Service) Projects(ctx context.Context, userID string) ([]payment.Membership, error) {
	return svc.Store.Access().ProjectsOfUser(ctx, userID)
}

// CreateProjectFor creates a project whose owner is the user; it has no
// API key until its owner creates one.
func (svc Service) CreateProjectFor(ctx context.Context, userID, name string) (payment.Project, error) {
	var probs payment.Problems
	if name == "" || len(name) > payment.MaxTitleLength {
		probs.Addf("name", "must be 1 to %d characters", payment.MaxTitleLength)
	}
	if err := probs.Err(); err != nil {
		return payment.Project{}, err
	}
	now := svc.Now()
	p := payment.Project{ID: payment.NewID(payment.PrefixProject, now), Name: name, CompleteOn: payment.TxFinalized,
		LatePaymentWindow: 24 * time.Hour, CreatedAt: now, UpdatedAt: now}
	if err := svc.Store.Checkout().CreateProjectWithOwner(ctx, p, nil, userID); err != nil {
		return p, fmt.Errorf("create project: %w", err)
	}
	return p, nil
}

// CreatedProject is a new project with its API keys, shown only once.
type CreatedProject struct {
	Project    payment.Project
	LiveKey    string
	SandboxKey string
}

// CreateProject creates a project with one live and one sandbox API key.
func (svc Service) CreateProject(ctx context.Context, name string) (CreatedProject, error) {
	var probs payment.Problems
	if name == "" || len(name) > payment.MaxTitleLength {
		probs.Addf("name", "must be 1 to %d characters", payment.MaxTitleLength)
	}
	if err := probs.Err(); err != nil {
		return CreatedProject{}, err
	}
	now := svc.Now()
	p := payment.Project{ID: payment.NewID(payment.PrefixProject, now), Name: name, CompleteOn: payment.TxFinalized,
		LatePaymentWindow: 24 * time.Hour, CreatedAt: now, UpdatedAt: now}
	live, liveKey := NewAPIKey(true, now)
	test, testKey := NewAPIKey(false, now)
	if err := svc.Store.Checkout().CreateProject(ctx, p, []store.APIKey{live, test}); err != nil {
		return CreatedProject{}, fmt.Errorf("create project: %w", err)
	}
	return CreatedProject{Project: p, LiveKey: liveKey, SandboxKey: testKey}, nil
}

// API key prefixes: the environment is part of the key.
const (
	LiveKeyPrefix    = "svc_live_"
	SandboxKeyPrefix = "svc_test_"
)

// NewAPIKey mints an API key of the environment: its record, and the
// secret shown once.
func NewAPIKey(isLive bool, now time.Time) (store.APIKey, string) {
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
func (svc Service) Authenticate(ctx context.Context, key string) (payment.Principal, error) {
	hash := payment.HashSecret(key)
	if c, ok := svc.AuthCache.Load(hash); ok && time.Now().Before(c.(cachedPrincipal).until) {
		return c.(cachedPrincipal).principal, nil
	}
	k, err := svc.Store.Checkout().APIKeyByHash(ctx, hash)
	if errors.Is(err, payment.ErrNotFound) {
		return payment.Principal{}, payment.ErrUnauthorized
	}
	if err != nil {
		return payment.Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p := payment.Principal{ProjectID: k.ProjectID, IsLive: k.IsLive, KeyID: k.ID}
	// Its last use, for the key list, kept to the minute; a verification
	// happens at most once per AuthCacheTTL per process.
	if err := svc.Store.Access().TouchAPIKey(ctx, k.ID, svc.Now()); err != nil {
		slog.WarnContext(ctx, "api key: last use not recorded", "key", k.ID, "err", err)
	}
	// Only verified keys are cached, so unknown keys cannot grow the cache.
	svc.AuthCache.Store(hash, cachedPrincipal{p, time.Now().Add(AuthCacheTTL)})
	return p, nil
}

// ForgetKey drops a key from this process's cache of verified keys, so
// that its revocation takes effect here at once (elsewhere within
// AuthCacheTTL).
func (svc Service) ForgetKey(keyID string) {
	svc.AuthCache.Range(func(hash, c any) bool {
		if c.(cachedPrincipal).principal.KeyID == keyID {
			svc.AuthCache.Delete(hash)
		}
		return true
	})
}

// GetProject returns the principal's project; another project is not found.
func (svc Service) GetProject(ctx context.Context, p payment.Principal, id string) (payment.Project, error) {
	if err := core.Owns(p, id); err != nil {
		return payment.Project{}, err
	}
	return svc.Store.Checkout().GetProject(ctx, id)
}
