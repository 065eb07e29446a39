package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/webhook"
)

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, webhook.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// A key rotation from a deployment that sealed with one bare key: with
// the new key added before the old one, `paymentsd admin
// reseal-webhook-secrets` seals every secret (current, previous, deleted
// endpoints') under the new key, in batches, with an audit entry each;
// a second run changes nothing; then every secret opens with the old key
// removed, and deliveries can be signed.
func TestAdminResealWebhookSecrets(t *testing.T) {
	ctx := context.Background()
	st := adminStore(t)
	oldKey, newKey := randomKey(t), randomKey(t)
	old, err := webhook.NewSealer(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	before := service.New(service.Deps{Store: st, Sealer: old})
	p, err := before.Checkout().CreateProject(ctx, "Rotating shop")
	if err != nil {
		t.Fatal(err)
	}
	sandbox := payment.Principal{ProjectID: p.Project.ID}
	plain := map[string][]string{} // endpoint ID: its secrets, current first
	for i := range 5 {
		u := "http://example.com/hooks"
		ep, err := before.Webhooks().CreateWebhook(ctx, sandbox, p.Project.ID, payment.WebhookInput{URL: &u, EnabledEvents: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		plain[ep.ID] = []string{ep.Secret}
		switch i {
		case 1: // rotated: its previous secret still signs
			r, err := before.Webhooks().RotateWebhookSecret(ctx, sandbox, p.Project.ID, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			plain[ep.ID] = []string{r.Secret, ep.Secret}
		case 2:
			if err := before.Webhooks().DeleteWebhook(ctx, sandbox, p.Project.ID, ep.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	stored := func(id string) (secret, previous string) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1`, id).
			Scan(&secret, &previous); err != nil {
			t.Fatal(err)
		}
		return secret, previous
	}
	newOnly, err := webhook.NewKeyring([]webhook.Key{{ID: "k1", Secret: newKey}})
	if err != nil {
		t.Fatal(err)
	}
	for id := range plain {
		secret, _ := stored(id)
		var unknown *webhook.UnknownKeyError
		if _, err := newOnly.Open(id, secret); !errors.As(err, &unknown) || unknown.KeyID != webhook.LegacyKeyID {
			t.Fatalf("before the reseal, the new key alone: %v; want an unknown key %q", err, webhook.LegacyKeyID)
		}
	}

	t.Setenv("WEBHOOK_SECRET_KEY", "k1:"+base64.StdEncoding.EncodeToString(newKey)+","+base64.StdEncoding.EncodeToString(oldKey))
	var out strings.Builder
	if err := runResealWebhookSecrets(ctx, &out, []string{"--batch", "2"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || lines[0] != "2 endpoints so far: 2 resealed, 0 failed" ||
		lines[3] != `5 endpoints: 5 resealed under key "k1", 0 current already, 0 failed` {
		t.Fatalf("output:\n%s", out.String())
	}
	for id, secrets := range plain {
		if strings.Contains(out.String(), secrets[0]) {
			t.Fatal("the output shows a secret")
		}
		secret, previous := stored(id)
		got, err := newOnly.Open(id, secret)
		if err != nil || got != secrets[0] {
			t.Errorf("%s: with the old key removed, Open = %q, %v", id, got, err)
		}
		if len(secrets) > 1 {
			if got, err := newOnly.Open(id, previous); err != nil || got != secrets[1] {
				t.Errorf("%s: previous secret with the old key removed: %q, %v", id, got, err)
			}
		}
	}
	audit, _, err := st.Access().ListAudit(ctx, sandbox, payment.ListQuery{Page: 1, Limit: 100, Status: payment.AuditWebhookSecretResealed})
	if err != nil || len(audit) != 5 {
		t.Fatalf("audit entries: %d, %v; want one per endpoint", len(audit), err)
	}
	if a := audit[0]; a.ActorKind != payment.AuditActorAdmin || a.TargetType != "webhook_endpoint" || string(a.Details) != `{"keyId": "k1"}` {
		t.Errorf("audit entry = %+v (%s)", a, a.Details)
	}

	out.Reset()
	if err := runResealWebhookSecrets(ctx, &out, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), `5 endpoints: 0 resealed under key "k1", 5 current already, 0 failed`+"\n") {
		t.Errorf("second run:\n%s", out.String())
	}

	// Only the new key configured: new secrets are sealed under it, and a
	// secret whose key is gone is reported by endpoint and key ID, and
	// fails the command.
	t.Setenv("WEBHOOK_SECRET_KEY", "k1:"+base64.StdEncoding.EncodeToString(newKey))
	after := service.New(service.Deps{Store: st, Sealer: newOnly})
	u := "http://example.com/later"
	ep, err := after.Webhooks().CreateWebhook(ctx, sandbox, p.Project.ID, payment.WebhookInput{URL: &u, EnabledEvents: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if secret, _ := stored(ep.ID); !strings.HasPrefix(secret, "v3:k1:") {
		t.Errorf("a new secret is stored as %.8q…, want under k1", secret)
	}
	stray, _ := old.Seal(ep.ID, "whsec_stray")
	if _, err := st.Pool().Exec(ctx, `UPDATE webhook_endpoints SET previous_secret = $2 WHERE id = $1`, ep.ID, stray); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err = runResealWebhookSecrets(ctx, &out, nil)
	if err == nil || !strings.Contains(out.String(), ep.ID+": ") || !strings.Contains(out.String(), `key ID "0"`) ||
		strings.Contains(out.String(), "whsec_") {
		t.Fatalf("a secret under a removed key: %v\n%s", err, out.String())
	}
	if !strings.HasSuffix(out.String(), `6 endpoints: 0 resealed under key "k1", 5 current already, 1 failed`+"\n") {
		t.Errorf("output:\n%s", out.String())
	}
}
