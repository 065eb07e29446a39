package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/webhook"
)

// sudoWorld is the API over a real Postgres, without Temporal: a project
// with its API keys, and its owner.
type sudoWorld struct {
	st       *store.Store
	svc      *service.Service
	base     string
	project  payment.Project
	key      string // the project's sandbox API key
	email    string
	password string
}

func newSudoWorld(t *testing.T) sudoWorld {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewStore(t)
	sealer, err := webhook.NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Deps{Store: st, Sealer: sealer})
	limits := map[Tier]uint64{}
	for tier := range DefaultLimits {
		limits[tier] = 1000 // the limits decide nothing here
	}
	s, err := New(svc, Config{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	w := sudoWorld{st: st, svc: svc, base: ts.URL, email: "owner@sudo.example", password: "the owner's long password"}
	u, err := svc.Identity().CreateUser(ctx, w.email, w.password)
	if err != nil {
		t.Fatal(err)
	}
	created, err := svc.Checkout().CreateProject(ctx, "Sudo shop")
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Access().AddOwner(ctx, created.Project.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	w.project, w.key = created.Project, created.SandboxKey
	return w
}

// reply is a response of the API: its status, and its envelope's error
// code and data.
type reply struct {
	status int
	code   string
	data   map[string]any
	raw    string
}

// credential is how a call authenticates: a session cookie, or a bearer
// token (an API key or an access token).
type credential struct{ cookie, bearer string }

func (w sudoWorld) call(t *testing.T, c credential, method, path string, body any) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.base+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cookie != "" {
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: c.cookie})
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var env struct {
		Data  any
		Error *struct{ Code string }
	}
	_ = json.Unmarshal(raw, &env)
	a := reply{status: res.StatusCode, raw: string(raw)}
	a.data, _ = env.Data.(map[string]any)
	if env.Error != nil {
		a.code = env.Error.Code
	}
	return a
}

// signIn signs the owner in with the password: a new session, freshly
// authenticated.
func (w sudoWorld) signIn(t *testing.T) credential {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"email": w.email, "password": w.password})
	res, err := http.Post(w.base+"/api/v1/auth/login", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == SessionCookie && c.Value != "" {
			return credential{cookie: c.Value}
		}
	}
	t.Fatalf("sign-in: %d, no session cookie", res.StatusCode)
	return credential{}
}

// goStale makes every session of the owner's last proof of identity an
// hour old: past REAUTH_WINDOW.
func (w sudoWorld) goStale(t *testing.T) {
	t.Helper()
	if _, err := w.st.Pool().Exec(context.Background(), `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour'
		WHERE user_id = (SELECT id FROM users WHERE email = $1)`, w.email); err != nil {
		t.Fatal(err)
	}
}

func (w sudoWorld) reauthenticate(t *testing.T, c credential) {
	t.Helper()
	if a := w.call(t, c, http.MethodPost, "/api/v1/auth/reauthenticate", map[string]string{"password": w.password}); a.status != http.StatusOK {
		t.Fatalf("re-authenticate: %d %s", a.status, a.raw)
	}
}

func str(v any) string { s, _ := v.(string); return s }

// A session signed in over REAUTH_WINDOW ago changes no payment setting,
// no webhook endpoint and grants no application: each is 403
// REAUTHENTICATION_REQUIRED and changes nothing; the same request, after
// the password is confirmed, runs. Renaming the project and denying an
// application take nothing and need no fresh sign-in. API keys and access tokens change webhook
// endpoints as before, whatever the session's age.
func TestStaleSessionReauthenticatesForPolicyWebhooksAndConsent(t *testing.T) {
	w := newSudoWorld(t)
	owner := w.signIn(t)
	key := credential{bearer: w.key}
	proj := "/api/v1/projects/" + w.project.ID

	// refusedThenRuns: stale, the request is refused and changes nothing
	// (unchanged reads the record); re-authenticated, the same request
	// answers want.
	refusedThenRuns := func(name, method, path string, body any, unchanged func() bool, want int) reply {
		t.Helper()
		w.goStale(t)
		if a := w.call(t, owner, method, path, body); a.status != http.StatusForbidden || a.code != ReauthenticationRequired {
			t.Errorf("%s with a stale session: %d %s; want 403 %s", name, a.status, a.raw, ReauthenticationRequired)
		} else if !unchanged() {
			t.Fatalf("%s: refused, yet it changed", name)
		}
		w.reauthenticate(t, owner)
		a := w.call(t, owner, method, path, body)
		if a.status != want {
			t.Fatalf("%s after re-authenticating: %d %s; want %d", name, a.status, a.raw, want)
		}
		return a
	}

	// The project's payment policy.
	policy := map[string]any{"underpaymentTolerancePercent": "12.5", "completeOn": "confirmed", "latePaymentWindowSeconds": 60,
		"sessionLifetimeSeconds": 600}
	project := func() map[string]any { return w.call(t, key, http.MethodGet, proj, nil).data }
	before := project()
	refusedThenRuns("changing the payment policy", http.MethodPatch, proj, policy, func() bool {
		p := project()
		return p["underpaymentTolerancePercent"] == before["underpaymentTolerancePercent"] && p["completeOn"] == before["completeOn"]
	}, http.StatusOK)
	if p := project(); p["underpaymentTolerancePercent"] != "12.5" || p["completeOn"] != "confirmed" {
		t.Fatalf("the policy after the change: %v", p)
	}
	// Each setting alone, as well.
	for _, one := range []map[string]any{{"underpaymentTolerancePercent": "3"}, {"completeOn": "finalized"},
		{"latePaymentWindowSeconds": 120}, {"sessionLifetimeSeconds": 900}} {
		before := project()
		refusedThenRuns("PATCH the project "+string(mustJSON(one)), http.MethodPatch, proj, one, func() bool {
			return string(mustJSON(project())) == string(mustJSON(before))
		}, http.StatusOK)
	}

	// The name alone is no payment setting: renamed with the stale
	// session; a rename with a setting is refused.
	w.goStale(t)
	if a := w.call(t, owner, http.MethodPatch, proj, map[string]any{"name": "Renamed shop"}); a.status != http.StatusOK {
		t.Fatalf("renaming the project with a stale session: %d %s", a.status, a.raw)
	}
	if a := w.call(t, owner, http.MethodPatch, proj, map[string]any{"name": "Renamed again", "completeOn": "confirmed"}); a.status != http.StatusForbidden ||
		a.code != ReauthenticationRequired {
		t.Fatalf("renaming with a setting, stale: %d %s; want 403 %s", a.status, a.raw, ReauthenticationRequired)
	}
	if p := project(); p["name"] != "Renamed shop" {
		t.Fatalf("the name after the refused change: %v", p["name"])
	}

	// Webhook endpoints: created, changed, their secret rotated, deleted.
	hooks := proj + "/webhooks"
	count := func() int {
		a := w.call(t, key, http.MethodGet, hooks, nil)
		var env struct{ Data []any }
		_ = json.Unmarshal([]byte(a.raw), &env)
		return len(env.Data)
	}
	made := refusedThenRuns("creating a webhook endpoint", http.MethodPost, hooks,
		map[string]any{"url": "https://shop.example/hooks", "enabledEvents": []string{"*"}}, func() bool { return count() == 0 }, http.StatusCreated)
	hook := hooks + "/" + str(made.data["id"])
	hookURL := func() string { return str(w.call(t, key, http.MethodGet, hook, nil).data["url"]) }
	refusedThenRuns("changing a webhook endpoint's URL", http.MethodPatch, hook, map[string]any{"url": "https://thief.example/hooks"},
		func() bool { return hookURL() == "https://shop.example/hooks" }, http.StatusOK)
	refusedThenRuns("disabling a webhook endpoint", http.MethodPatch, hook, map[string]any{"status": "disabled"},
		func() bool { return str(w.call(t, key, http.MethodGet, hook, nil).data["status"]) == "enabled" }, http.StatusOK)
	secrets := func() int {
		var n int
		if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM audit_log WHERE project_id = $1 AND action = $2`,
			w.project.ID, payment.AuditWebhookSecretRotated).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	rotated := refusedThenRuns("rotating a webhook endpoint's secret", http.MethodPost, hook+"/rotate-secret", nil,
		func() bool { return secrets() == 0 }, http.StatusOK)
	if str(rotated.data["secret"]) == "" {
		t.Fatalf("the rotation shows no new secret: %s", rotated.raw)
	}
	refusedThenRuns("deleting a webhook endpoint", http.MethodDelete, hook, nil, func() bool { return count() == 1 }, http.StatusOK)

	// An API key, with no session, changes webhook endpoints as before.
	w.goStale(t)
	a := w.call(t, key, http.MethodPost, hooks, map[string]any{"url": "https://shop.example/k", "enabledEvents": []string{"*"}})
	if a.status != http.StatusCreated {
		t.Fatalf("an API key creating a webhook endpoint: %d %s", a.status, a.raw)
	}
	byKey := hooks + "/" + str(a.data["id"])
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPatch, byKey, map[string]any{"url": "https://shop.example/k2"}},
		{http.MethodPost, byKey + "/rotate-secret", nil},
		{http.MethodDelete, byKey, nil},
	} {
		if a := w.call(t, key, c.method, c.path, c.body); a.status != http.StatusOK {
			t.Fatalf("an API key: %s %s: %d %s", c.method, c.path, a.status, a.raw)
		}
	}

	// OAuth consent: an application registered (freshly signed in), then
	// allowed by a stale session.
	w.reauthenticate(t, owner)
	app := w.registerApp(t, owner, "webhooks:read", "webhooks:write")
	authURL, verifier := app.authURL()
	w.goStale(t)
	// Denying takes nothing: no fresh sign-in.
	if a := w.consent(t, owner, authURL, map[string]any{"decision": "deny"}); a.status != http.StatusOK ||
		mustQuery(t, str(a.data["redirectTo"])).Get("error") != "access_denied" {
		t.Fatalf("denying with a stale session: %d %s", a.status, a.raw)
	}
	grants := func() int {
		var n int
		if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM oauth_tokens t JOIN oauth_clients c ON c.id = t.client_id
			WHERE c.project_id = $1`, w.project.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	allow := map[string]any{"decision": "allow", "projectId": w.project.ID, "environment": "sandbox"}
	w.goStale(t)
	if a := w.consent(t, owner, authURL, allow); a.status != http.StatusForbidden || a.code != ReauthenticationRequired {
		t.Fatalf("allowing an application with a stale session: %d %s; want 403 %s", a.status, a.raw, ReauthenticationRequired)
	}
	if n := grants(); n != 0 {
		t.Fatalf("refused, yet %d codes or tokens were issued", n)
	}
	w.reauthenticate(t, owner)
	a = w.consent(t, owner, authURL, allow)
	if a.status != http.StatusOK {
		t.Fatalf("allowing after re-authenticating: %d %s", a.status, a.raw)
	}
	tok, err := app.exchange(t, str(a.data["redirectTo"]), verifier)
	if err != nil {
		t.Fatal(err)
	}
	// The application's access token changes webhook endpoints as an API
	// key does, the owner's session stale or not.
	w.goStale(t)
	if a := w.call(t, credential{bearer: tok.AccessToken}, http.MethodPost, hooks,
		map[string]any{"url": "https://shop.example/app", "enabledEvents": []string{"*"}}); a.status != http.StatusCreated {
		t.Fatalf("an access token creating a webhook endpoint: %d %s", a.status, a.raw)
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// testApp is a confidential application of the project, driven with
// golang.org/x/oauth2 (PKCE, HTTP Basic at the token endpoint).
type testApp struct {
	conf *oauth2.Config
}

const appRedirect = "https://app.example.test/callback"

func (w sudoWorld) registerApp(t *testing.T, owner credential, scopes ...string) testApp {
	t.Helper()
	a := w.call(t, owner, http.MethodPost, "/api/v1/projects/"+w.project.ID+"/oauth-clients",
		map[string]any{"name": "Ledger sync", "redirectUris": []string{appRedirect}, "confidential": true})
	if a.status != http.StatusCreated {
		t.Fatalf("registering the application: %d %s", a.status, a.raw)
	}
	client, _ := a.data["client"].(map[string]any)
	return testApp{conf: &oauth2.Config{ClientID: str(client["id"]), ClientSecret: str(a.data["clientSecret"]),
		Endpoint:    oauth2.Endpoint{AuthURL: w.base + "/oauth/authorize", TokenURL: w.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader},
		RedirectURL: appRedirect, Scopes: scopes}}
}

// authURL is where the application sends the browser, with its PKCE
// verifier.
func (a testApp) authURL() (string, string) {
	verifier := oauth2.GenerateVerifier()
	return a.conf.AuthCodeURL(oauth2.GenerateVerifier()[:24], oauth2.S256ChallengeOption(verifier)), verifier
}

// consent answers the consent page as the dashboard does.
func (w sudoWorld) consent(t *testing.T, c credential, authURL string, body map[string]any) reply {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return w.call(t, c, http.MethodPost, "/api/v1/oauth/authorization?"+u.RawQuery, body)
}

// exchange trades the code the browser brought back for tokens.
func (a testApp) exchange(t *testing.T, redirectTo, verifier string) (*oauth2.Token, error) {
	t.Helper()
	code := mustQuery(t, redirectTo).Get("code")
	if code == "" {
		t.Fatalf("no code in %s", redirectTo)
	}
	return a.conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
}
