package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
)

// A project's owners register OAuth applications with the session
// cookie: a confidential one gets its secret once (kept as a hash), a
// public one none; redirect URIs are https, or http on a loopback address,
// with no fragment; developers, API keys and other projects are refused;
// a revoked application stays listed, revoked, and each change is audited.
func TestRegisterAndRevokeOAuthApplications(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Apps"}).data()["id"])
	base := "/api/v1/projects/" + projectID + "/oauth-clients"

	server := owner.call(t, ts.URL, http.MethodPost, base, map[string]any{"name": "Ledger sync",
		"redirectUris": []string{"https://ledger.example/callback"}, "confidential": true})
	mustStatus(t, server, http.StatusCreated)
	client, secret := server.data()["client"].(map[string]any), str(server.data()["clientSecret"])
	if !strings.HasPrefix(str(client["id"]), "app_") || !strings.HasPrefix(secret, "svc_cs_") || client["confidential"] != true {
		t.Fatalf("a confidential client = %s", server.Raw)
	}
	var stored string
	if err := st.Pool().QueryRow(context.Background(), `SELECT secret_hash FROM oauth_clients WHERE id = $1`, client["id"]).Scan(&stored); err != nil ||
		stored != payment.HashSecret(secret) {
		t.Fatalf("the secret is stored as %q (%v); want its hash", stored, err)
	}
	native := owner.call(t, ts.URL, http.MethodPost, base, map[string]any{"name": "Shop plugin",
		"redirectUris": []string{"http://127.0.0.1/callback", "http://[::1]:8123/cb", "http://localhost/cb"}, "confidential": false})
	mustStatus(t, native, http.StatusCreated)
	if native.data()["clientSecret"] != nil {
		t.Fatalf("a public client got a secret: %s", native.Raw)
	}

	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "redirectUris": []string{"http://app.example/cb"}, "confidential": true}, "redirectUris[0]"},
		{map[string]any{"name": "x", "redirectUris": []string{"https://app.example/cb#frag"}, "confidential": true}, "redirectUris[0]"},
		{map[string]any{"name": "x", "redirectUris": []string{"https://ok.example/cb", "javascript:alert(1)"}, "confidential": true}, "redirectUris[1]"},
		{map[string]any{"name": "x", "redirectUris": []string{"https://user:pw@app.example/cb"}, "confidential": true}, "redirectUris[0]"},
		{map[string]any{"name": "x", "redirectUris": []string{}, "confidential": true}, "redirectUris"},
		{map[string]any{"name": " ", "redirectUris": []string{"https://app.example/cb"}, "confidential": true}, "name"},
		{map[string]any{"name": "x", "redirectUris": []string{"https://app.example/cb"}}, "confidential"},
		{map[string]any{"name": "x", "redirectUris": []string{"https://app.example/cb"}, "confidential": "yes"}, "confidential"},
		{map[string]any{"name": "x", "redirectUris": []string{"https://app.example/cb"}, "confidential": true, "scopes": "all"}, "scopes"},
	} {
		r := owner.call(t, ts.URL, http.MethodPost, base, bad.body)
		if r.Status != http.StatusUnprocessableEntity || !slices.Contains(r.detailFields(), bad.field) {
			t.Errorf("%v: %d %s; want a 422 naming %s", bad.body, r.Status, r.Raw, bad.field)
		}
	}

	list := owner.call(t, ts.URL, http.MethodGet, base, nil).list()
	if len(list) != 2 || list[0].(map[string]any)["name"] != "Shop plugin" {
		t.Fatalf("applications = %v", list)
	}

	// Developers, API keys and other projects' owners are refused.
	dev := signup(t, ts.URL)
	me := dev.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil).data()
	if err := st.Access().AddMember(context.Background(), projectID, str(me["user"].(map[string]any)["id"]), payment.RoleDeveloper, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := dev.call(t, ts.URL, http.MethodGet, base, nil); r.Status != http.StatusForbidden {
		t.Fatalf("a developer listing applications = %d", r.Status)
	}
	key := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil).data()["secret"])
	if r := get(t, ts.URL, base, key); r.Status != http.StatusForbidden {
		t.Fatalf("an API key listing applications = %d", r.Status)
	}
	if r := signup(t, ts.URL).call(t, ts.URL, http.MethodGet, base, nil); r.Status != http.StatusNotFound {
		t.Fatalf("another user listing them = %d", r.Status)
	}

	// Revoked, twice: the same answer, one audit entry.
	revoke := base + "/" + str(client["id"]) + "/revoke"
	r := owner.call(t, ts.URL, http.MethodPost, revoke, nil)
	mustStatus(t, r, http.StatusOK)
	if r.data()["revokedAt"] == nil {
		t.Fatalf("revoked = %s", r.Raw)
	}
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, revoke, nil), http.StatusOK)
	if r := owner.call(t, ts.URL, http.MethodPost, base+"/app_01m80h0jzc3psaavehj57fnh3h/revoke", nil); r.Status != http.StatusNotFound {
		t.Fatalf("revoking an unknown application = %d", r.Status)
	}
	audit := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/audit-log?limit=100", nil).list()
	var actions []string
	for _, e := range audit {
		if e.(map[string]any)["target"].(map[string]any)["id"] == client["id"] {
			actions = append(actions, str(e.(map[string]any)["action"]))
		}
	}
	if strings.Join(actions, ",") != "oauth_client.revoked,oauth_client.created" {
		t.Fatalf("audit entries of the application = %v", actions)
	}
}
