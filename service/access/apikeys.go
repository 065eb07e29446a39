package access

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/checkout"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// MaxKeyGrace bounds a rolled API key's grace period.
const MaxKeyGrace = 30 * 24 * time.Hour

// APIKeys lists the working API keys of the principal's environment.
func (svc Service) APIKeys(ctx context.Context, p payment.Principal, projectID string) ([]payment.APIKeyInfo, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return nil, err
	}
	return svc.Store.Access().ListAPIKeys(ctx, projectID, p.IsLive, svc.Now())
}

// CreateAPIKey makes an API key of the principal's environment; its
// secret is returned this once.
func (svc Service) CreateAPIKey(ctx context.Context, p payment.Principal, projectID string) (payment.APIKeyInfo, string, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.APIKeyInfo{}, "", err
	}
	now := svc.Now()
	k, secret := checkout.NewAPIKey(p.IsLive, now)
	k.ProjectID = projectID
	if err := svc.Audited(ctx, projectID, p.IsLive, payment.AuditAPIKeyCreated, "api_key", k.ID, map[string]any{"hint": k.Hint},
		func(ctx context.Context) error { return svc.Store.Access().InsertAPIKey(ctx, k) }); err != nil {
		return payment.APIKeyInfo{}, "", err
	}
	return payment.APIKeyInfo{ID: k.ID, IsLive: k.IsLive, Hint: k.Hint, CreatedAt: now}, secret, nil
}

// RevokeAPIKey ends a key at once (within AuthCacheTTL for API
// processes that verified it just before).
func (svc Service) RevokeAPIKey(ctx context.Context, p payment.Principal, projectID, keyID string) error {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return err
	}
	if !payment.ValidID(payment.PrefixAPIKey, keyID) {
		return payment.NotFound("API key")
	}
	if err := svc.Audited(ctx, projectID, p.IsLive, payment.AuditAPIKeyRevoked, "api_key", keyID, nil, func(ctx context.Context) error {
		return svc.Store.Access().EndAPIKey(ctx, projectID, p.IsLive, keyID, nil, svc.Now())
	}); err != nil {
		if errors.Is(err, payment.ErrNotFound) {
			return payment.NotFound("API key")
		}
		return err
	}
	svc.checkout().ForgetKey(keyID)
	return nil
}

// RollAPIKey makes a new key and keeps the old one working for grace
// (0: it ends now), as a deploy switching keys needs.
func (svc Service) RollAPIKey(ctx context.Context, p payment.Principal, projectID, keyID string, grace time.Duration) (payment.APIKeyInfo, string, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.APIKeyInfo{}, "", err
	}
	if grace < 0 || grace > MaxKeyGrace {
		var probs payment.Problems
		probs.Addf("gracePeriodSeconds", "must be from 0 to %d", int(MaxKeyGrace/time.Second))
		return payment.APIKeyInfo{}, "", probs.Err()
	}
	if !payment.ValidID(payment.PrefixAPIKey, keyID) {
		return payment.APIKeyInfo{}, "", payment.NotFound("API key")
	}
	now := svc.Now()
	end := now.Add(grace)
	k, secret := checkout.NewAPIKey(p.IsLive, now)
	k.ProjectID = projectID
	// The old key's end, the new key and the entry: one transaction.
	if err := svc.Audited(ctx, projectID, p.IsLive, payment.AuditAPIKeyRolled, "api_key", keyID,
		map[string]any{"newKeyId": k.ID, "oldKeyWorksUntil": end.Format(time.RFC3339)}, func(ctx context.Context) error {
			if err := svc.Store.Access().EndAPIKey(ctx, projectID, p.IsLive, keyID, &end, now); err != nil {
				return err
			}
			return svc.Store.Access().InsertAPIKey(ctx, k)
		}); err != nil {
		if errors.Is(err, payment.ErrNotFound) {
			return payment.APIKeyInfo{}, "", payment.NotFound("API key")
		}
		return payment.APIKeyInfo{}, "", err
	}
	if grace == 0 {
		svc.checkout().ForgetKey(keyID)
	}
	return payment.APIKeyInfo{ID: k.ID, IsLive: k.IsLive, Hint: k.Hint, CreatedAt: now}, secret, nil
}
