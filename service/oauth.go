package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"

	"github.com/paymentsd/paymentsd/payment"
)

// CreateOAuthClient registers a third-party application for the project
// (owners only). A confidential client's secret is returned this once and
// kept as its hash.
func (svc *Service) CreateOAuthClient(ctx context.Context, p payment.Principal, projectID string, in payment.OAuthClientInput) (payment.OAuthClient, string, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return payment.OAuthClient{}, "", err
	}
	name, uris, confidential, err := payment.CheckOAuthClient(in)
	if err != nil {
		return payment.OAuthClient{}, "", err
	}
	now := svc.now()
	c := payment.OAuthClient{ID: payment.NewID(payment.PrefixOAuthClient, now), ProjectID: projectID, Name: name,
		RedirectURIs: uris, Confidential: confidential, CreatedAt: now}
	secret := ""
	if confidential {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		secret = payment.OAuthClientSecretPrefix + base64.RawURLEncoding.EncodeToString(b)
		c.SecretHash = payment.HashSecret(secret)
	}
	if err := svc.store.InsertOAuthClient(ctx, c); err != nil {
		return payment.OAuthClient{}, "", err
	}
	svc.audit(ctx, projectID, p.IsLive, payment.AuditOAuthClientCreated, "oauth_client", c.ID,
		map[string]any{"name": name, "redirectUris": uris, "confidential": confidential})
	return c, secret, nil
}

// OAuthClients lists the project's registered applications (owners only).
func (svc *Service) OAuthClients(ctx context.Context, p payment.Principal, projectID string) ([]payment.OAuthClient, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return nil, err
	}
	return svc.store.OAuthClients(ctx, projectID)
}

// RevokeOAuthClient ends an application: it can no longer be authorized
// or exchange its codes and tokens.
func (svc *Service) RevokeOAuthClient(ctx context.Context, p payment.Principal, projectID, id string) (payment.OAuthClient, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return payment.OAuthClient{}, err
	}
	if !payment.ValidID(payment.PrefixOAuthClient, id) {
		return payment.OAuthClient{}, payment.NotFound("OAuth client")
	}
	c, revoked, err := svc.store.RevokeOAuthClient(ctx, projectID, id, svc.now())
	if errors.Is(err, payment.ErrNotFound) {
		return c, payment.NotFound("OAuth client")
	}
	if revoked {
		svc.audit(ctx, projectID, p.IsLive, payment.AuditOAuthClientRevoked, "oauth_client", id, nil)
	}
	return c, err
}
