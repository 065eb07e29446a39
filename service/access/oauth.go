package access

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/service/oauth"
	"github.com/paymentsd/paymentsd/store"
)

// CreateOAuthClient registers a third-party application for the project
// (owners only). A confidential client's secret is returned this once and
// kept as its hash.
func (svc Service) CreateOAuthClient(ctx context.Context, p payment.Principal, projectID string, in payment.OAuthClientInput) (payment.OAuthClient, string, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.OAuthClient{}, "", err
	}
	name, uris, confidential, err := payment.CheckOAuthClient(in)
	if err != nil {
		return payment.OAuthClient{}, "", err
	}
	now := svc.Now()
	c := payment.OAuthClient{ID: payment.NewID(payment.PrefixOAuthClient, now), ProjectID: projectID, Name: name,
		RedirectURIs: uris, Confidential: confidential, CreatedAt: now}
	secret := ""
	if confidential {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		secret = payment.OAuthClientSecretPrefix + base64.RawURLEncoding.EncodeToString(b)
		c.SecretHash = payment.HashSecret(secret)
	}
	if err := svc.Audited(ctx, projectID, p.IsLive, payment.AuditOAuthClientCreated, "oauth_client", c.ID,
		map[string]any{"name": name, "redirectUris": uris, "confidential": confidential},
		func(ctx context.Context) error { return svc.Store.Access().InsertOAuthClient(ctx, c) }); err != nil {
		return payment.OAuthClient{}, "", err
	}
	return c, secret, nil
}

// OAuthClients lists the project's registered applications (owners only).
func (svc Service) OAuthClients(ctx context.Context, p payment.Principal, projectID string) ([]payment.OAuthClient, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return nil, err
	}
	return svc.Store.Access().OAuthClients(ctx, projectID)
}

// RevokeOAuthClient ends an application: it can no longer be authorized
// or exchange its codes and tokens.
func (svc Service) RevokeOAuthClient(ctx context.Context, p payment.Principal, projectID, id string) (payment.OAuthClient, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.OAuthClient{}, err
	}
	if !payment.ValidID(payment.PrefixOAuthClient, id) {
		return payment.OAuthClient{}, payment.NotFound("OAuth client")
	}
	var c payment.OAuthClient
	err := svc.Store.InTx(ctx, func(ctx context.Context) error {
		var revoked bool
		var err error
		if c, revoked, err = svc.Store.Access().RevokeOAuthClient(ctx, projectID, id, svc.Now()); err != nil || !revoked {
			return err // revoked already: nothing changed
		}
		return svc.AuditIn(ctx, projectID, p.IsLive, payment.AuditOAuthClientRevoked, "oauth_client", id, nil)
	})
	if errors.Is(err, payment.ErrNotFound) {
		return c, payment.NotFound("OAuth client")
	}
	return c, err
}

// AuthenticateOAuth resolves an OAuth access token (svc_at_…) to the
// principal it acts as.
func (svc Service) AuthenticateOAuth(ctx context.Context, token string) (payment.Principal, error) {
	if svc.OAuth == nil {
		return payment.Principal{}, payment.ErrUnauthorized
	}
	p, err := svc.OAuth.Authenticate(ctx, token)
	if errors.Is(err, oauth.ErrInvalidToken) {
		return p, payment.ErrUnauthorized
	}
	return p, err
}

// OAuthClientForConsent reads a working application, for the consent
// page.
func (svc Service) OAuthClientForConsent(ctx context.Context, id string) (payment.OAuthClient, error) {
	c, err := svc.Store.Access().OAuthClient(ctx, id)
	if err == nil && c.RevokedAt != nil {
		err = payment.ErrNotFound
	}
	if errors.Is(err, payment.ErrNotFound) {
		return c, payment.NotFound("OAuth client")
	}
	return c, err
}

// ConsentOAuth records a member's authorization of an application: issue
// stores what the authorization server issues for it (its code), in one
// transaction with the project's audit entry. The session that consents
// (p's) is held live through the transaction: a password change or a
// sign-out everywhere that ended it first refuses the consent, and one
// that comes after waits for it and ends its code (EndUserOAuthGrants).
func (svc Service) ConsentOAuth(ctx context.Context, p payment.Principal, grantID, clientID string, scopes []string,
	issue func(ctx context.Context) error) error {
	return svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditOAuthGrantCreated, "oauth_grant", grantID,
		map[string]any{"clientId": clientID, "scopes": scopes}, func(ctx context.Context) error {
			live, err := svc.Store.Access().SessionLive(ctx, p.SessionID)
			if err != nil {
				return err
			}
			if !live {
				return payment.ErrUnauthorized
			}
			tx, _ := store.TxOf(ctx)
			return issue(oauth.WithTx(ctx, tx))
		})
}

// Why every grant of a user ends at once (oauth_grants.revoked_reason).
const (
	GrantsEndPasswordChanged     = "password_changed"
	GrantsEndSignedOutEverywhere = "signed_out_everywhere"
)

// EndUserOAuthGrants ends every application's access on the user's
// consent (store.RevokeUserOAuthGrants: grants, tokens, codes not yet
// exchanged), each grant's end an entry of its project's audit log, in
// ctx's transaction. It returns how many grants it ended.
func (svc Service) EndUserOAuthGrants(ctx context.Context, userID, reason string) (int, error) {
	ended, err := svc.Store.Access().RevokeUserOAuthGrants(ctx, userID, reason, svc.Now())
	if err != nil {
		return 0, err
	}
	for _, g := range ended {
		if err := svc.AuditIn(ctx, g.ProjectID, g.IsLive, payment.AuditOAuthGrantRevoked, "oauth_grant", g.ID,
			map[string]any{"clientId": g.ClientID, "reason": reason}); err != nil {
			return 0, err
		}
	}
	return len(ended), nil
}

// ProjectOAuthGrants lists the applications the project's members have
// authorized: for its owners.
func (svc Service) ProjectOAuthGrants(ctx context.Context, p payment.Principal, projectID string) ([]payment.OAuthGrant, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return nil, err
	}
	return svc.Store.Access().OAuthGrants(ctx, projectID, "")
}

// UserOAuthGrants lists the applications a user has authorized.
func (svc Service) UserOAuthGrants(ctx context.Context, userID string) ([]payment.OAuthGrant, error) {
	return svc.Store.Access().OAuthGrants(ctx, "", userID)
}

// RevokeProjectOAuthGrant ends a grant of the project, for its owners.
func (svc Service) RevokeProjectOAuthGrant(ctx context.Context, p payment.Principal, projectID, grantID string) (payment.OAuthGrant, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.OAuthGrant{}, err
	}
	return svc.revokeOAuthGrant(ctx, grantID, "owner", func(g payment.OAuthGrant) bool { return g.ProjectID == projectID })
}

// RevokeUserOAuthGrant ends a grant the user gave.
func (svc Service) RevokeUserOAuthGrant(ctx context.Context, userID, grantID string) (payment.OAuthGrant, error) {
	return svc.revokeOAuthGrant(ctx, grantID, "user", func(g payment.OAuthGrant) bool { return g.UserID == userID })
}

func (svc Service) revokeOAuthGrant(ctx context.Context, grantID, reason string, mine func(payment.OAuthGrant) bool) (payment.OAuthGrant, error) {
	if !payment.ValidID(payment.PrefixOAuthGrant, grantID) {
		return payment.OAuthGrant{}, payment.NotFound("OAuth grant")
	}
	g, err := svc.Store.Access().OAuthGrant(ctx, grantID)
	if errors.Is(err, payment.ErrNotFound) || err == nil && !mine(g) {
		return payment.OAuthGrant{}, payment.NotFound("OAuth grant")
	}
	if err != nil {
		return g, err
	}
	now := svc.Now()
	a := svc.AuditEntry(ctx, g.ProjectID, g.IsLive, payment.AuditOAuthGrantRevoked, "oauth_grant", g.ID,
		map[string]any{"clientId": g.ClientID, "reason": reason})
	revoked, err := svc.Store.Access().RevokeOAuthGrantAudited(ctx, g.ID, reason, now, a)
	if err != nil {
		return g, err
	}
	if revoked {
		g.RevokedAt, g.RevokedReason = &now, reason
	}
	return g, nil
}
