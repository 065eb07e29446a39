package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// An API key acts for its project and environment; revoked, it stops at
// once in the process that revoked it; rolled with a grace period, the
// old key works until the period ends, beside the new one.
func TestAPIKeysActForTheirEnvironmentUntilRevokedOrRolled(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.owner(t, "Keyed shop")
	project := owner.principal.ProjectID

	info, secret, err := e.svc.Access().CreateAPIKey(ctx, owner.principal, project)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, service.SandboxKeyPrefix) || info.IsLive || strings.Contains(info.Hint, secret[len(service.SandboxKeyPrefix)+4:len(secret)-4]) {
		t.Fatalf("sandbox key %+v, secret %q", info, secret)
	}
	p, err := e.svc.Checkout().Authenticate(ctx, secret)
	if err != nil || p.ProjectID != project || p.IsLive || p.KeyID != info.ID || p.UserID != "" {
		t.Fatalf("the key's principal = %+v, %v", p, err)
	}
	live := owner.principal
	live.IsLive = true
	liveInfo, liveSecret, err := e.svc.Access().CreateAPIKey(ctx, live, project)
	if err != nil || !liveInfo.IsLive || !strings.HasPrefix(liveSecret, service.LiveKeyPrefix) {
		t.Fatalf("live key %+v, %v", liveInfo, err)
	}
	if p, err := e.svc.Checkout().Authenticate(ctx, liveSecret); err != nil || !p.IsLive {
		t.Fatalf("the live key's principal = %+v, %v", p, err)
	}
	keys, err := e.svc.Access().APIKeys(ctx, owner.principal, project)
	if err != nil || len(keys) != 1 || keys[0].ID != info.ID {
		t.Fatalf("the sandbox's keys = %+v, %v; want the sandbox key alone", keys, err)
	}

	// Revoked: refused at once (the cache of verified keys forgets it).
	if err := e.svc.Access().RevokeAPIKey(ctx, owner.principal, project, info.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Checkout().Authenticate(ctx, secret)
	wantKind(t, "a revoked key", err, payment.KindUnauthenticated)
	err = e.svc.Access().RevokeAPIKey(ctx, owner.principal, project, info.ID)
	wantKind(t, "revoking a key twice", err, payment.KindNotFound)
	err = e.svc.Access().RevokeAPIKey(ctx, owner.principal, project, liveInfo.ID)
	wantKind(t, "revoking the live key from the sandbox", err, payment.KindNotFound)

	// Rolled with an hour's grace: both work.
	_, _, err = e.svc.Access().RollAPIKey(ctx, live, project, liveInfo.ID, service.MaxKeyGrace+time.Second)
	wantField(t, "a grace past the maximum", err, "gracePeriodSeconds")
	rolled, rolledSecret, err := e.svc.Access().RollAPIKey(ctx, live, project, liveInfo.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{liveSecret, rolledSecret} {
		if _, err := e.svc.Checkout().Authenticate(ctx, s); err != nil {
			t.Fatalf("during the grace period: %v", err)
		}
	}
	// Rolled again with no grace: the replaced key ends now.
	_, newest, err := e.svc.Access().RollAPIKey(ctx, live, project, rolled.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Checkout().Authenticate(ctx, rolledSecret)
	wantKind(t, "a key rolled without grace", err, payment.KindUnauthenticated)
	if _, err := e.svc.Checkout().Authenticate(ctx, newest); err != nil {
		t.Fatal(err)
	}

	log := e.audit(t, owner)
	created, details := findAudit(t, log, payment.AuditAPIKeyCreated)
	if created.TargetID != liveInfo.ID && created.TargetID != info.ID || details["hint"] == nil {
		t.Fatalf("api_key.created = %+v %v", created, details)
	}
	if strings.Contains(string(created.Details), secret) || strings.Contains(string(created.Details), liveSecret) {
		t.Fatalf("the audit log holds a key's secret: %s", created.Details)
	}
	if revoked, _ := findAudit(t, log, payment.AuditAPIKeyRevoked); revoked.TargetID != info.ID {
		t.Fatalf("api_key.revoked = %+v", revoked)
	}
	// The live environment's entries are the live log's.
	liveLog, err := e.svc.Access().ListAudit(ctx, live, project, payment.ListQuery{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, details := findAudit(t, liveLog.Items, payment.AuditAPIKeyRolled); details["newKeyId"] == nil || details["oldKeyWorksUntil"] == nil {
		t.Fatalf("api_key.rolled details = %v", details)
	}
}

// Only an owner signed in manages keys: not a developer, not a viewer,
// not an API key, not another project's owner.
func TestOnlyOwnersManageAPIKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.owner(t, "Keyed shop")
	project := owner.principal.ProjectID
	info, _, err := e.svc.Access().CreateAPIKey(ctx, owner.principal, project)
	if err != nil {
		t.Fatal(err)
	}
	dev := e.join(t, owner, payment.RoleDeveloper)
	other := e.owner(t, "Other shop")
	apiKey := payment.Principal{ProjectID: project, KeyID: info.ID}
	for _, c := range []struct {
		name string
		p    payment.Principal
		kind payment.Kind
	}{
		{"a developer", dev.principal, payment.KindForbidden},
		{"an API key", apiKey, payment.KindForbidden},
		{"another project's owner", other.principal, payment.KindNotFound},
	} {
		_, _, err := e.svc.Access().CreateAPIKey(ctx, c.p, project)
		wantKind(t, c.name+" creating a key", err, c.kind)
		_, err = e.svc.Access().APIKeys(ctx, c.p, project)
		wantKind(t, c.name+" listing keys", err, c.kind)
		err = e.svc.Access().RevokeAPIKey(ctx, c.p, project, info.ID)
		wantKind(t, c.name+" revoking a key", err, c.kind)
		_, _, err = e.svc.Access().RollAPIKey(ctx, c.p, project, info.ID, 0)
		wantKind(t, c.name+" rolling a key", err, c.kind)
	}
	// Another project's owner naming the key under their own project
	// finds nothing.
	err = e.svc.Access().RevokeAPIKey(ctx, other.principal, other.principal.ProjectID, info.ID)
	wantKind(t, "revoking another project's key under one's own", err, payment.KindNotFound)
	if keys, err := e.svc.Access().APIKeys(ctx, owner.principal, project); err != nil || len(keys) != 1 {
		t.Fatalf("keys after the refusals = %+v, %v", keys, err)
	}
}
