package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
)

// oauthApp is a third-party application under test: registered in a
// project, with a real HTTP server at its loopback redirect URI that
// records the codes (or errors) the browser brings back.
type oauthApp struct {
	conf      *oauth2.Config
	callbacks chan url.Values
}

func newOAuthApp(t *testing.T, owner account, base, projectID string, confidential bool, scopes ...string) oauthApp {
	t.Helper()
	app := oauthApp{callbacks: make(chan url.Values, 4)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/callback" {
			app.callbacks <- r.URL.Query()
		}
		_, _ = w.Write([]byte("<!doctype html><title>Ledger sync</title><h1>Connected</h1>"))
	}))
	t.Cleanup(srv.Close)
	// Registered without a port: a native app listens on any loopback
	// port (RFC 8252).
	reg := owner.call(t, base, http.MethodPost, "/api/v1/projects/"+projectID+"/oauth-clients", map[string]any{
		"name": "Ledger sync", "redirectUris": []string{"http://127.0.0.1/callback"}, "confidential": confidential})
	mustStatus(t, reg, http.StatusCreated)
	app.conf = &oauth2.Config{
		ClientID:    str(reg.data()["client"].(map[string]any)["id"]),
		Endpoint:    oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader},
		RedirectURL: srv.URL + "/callback",
		Scopes:      scopes,
	}
	if confidential {
		app.conf.ClientSecret = str(reg.data()["clientSecret"])
	} else {
		app.conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	return app
}

// authURL is where the app sends the browser, with a fresh state and
// PKCE verifier.
func (a oauthApp) authURL() (u, state, verifier string) {
	state, verifier = oauth2.GenerateVerifier()[:24], oauth2.GenerateVerifier()
	return a.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), state, verifier
}

func (a oauthApp) callback(t *testing.T) url.Values {
	t.Helper()
	select {
	case q := <-a.callbacks:
		return q
	case <-time.After(20 * time.Second):
		t.Fatal("the browser never came back to the application")
		return nil
	}
}

// consent answers the consent page through its API, as the page does,
// and returns where the browser would go.
func consent(t *testing.T, base string, who account, authURL string, body map[string]any) string {
	t.Helper()
	u, _ := url.Parse(authURL)
	r := who.call(t, base, http.MethodPost, "/api/v1/oauth/authorization?"+u.RawQuery, body)
	mustStatus(t, r, http.StatusOK)
	return str(r.data()["redirectTo"])
}

// bearer calls a REST route with an access token.
func bearer(t *testing.T, base, method, path, token string, body any) response {
	t.Helper()
	return do(t, base, request{method: method, path: path, key: token, body: body})
}

// tokenError posts a form to the token endpoint and returns the OAuth
// error it answers with ("" for a 200).
func tokenError(t *testing.T, base string, form url.Values, user, pass string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode == http.StatusOK {
		return ""
	}
	return out.Error
}

func retrieveError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// A merchant authorizes a third-party application in a real Chromium,
// through sign-in and the consent page; the application (golang.org/x/
// oauth2 with PKCE) exchanges the code and calls the REST and Connect
// APIs within its scopes, in its project and environment only; it
// refreshes (the refresh token rotates), and the reuse of an old refresh
// token revokes the whole grant. Authorized again, it is listed to the
// owner and the user, and revoked by the owner in the dashboard, then by
// RFC 7009: each time its token stops working at once.
func TestOAuthApplicationAuthorizedInARealBrowser(t *testing.T) {
	d := newDashboard(t)
	base := d.base
	owner, keys := ownedProject(t, base, "Ledger shop")
	_, other := ownedProject(t, base, "Someone else's shop")
	app := newOAuthApp(t, owner, base, keys.id, true,
		"project:read", "plans:read", "plans:write", "checkout_sessions:read", "checkout_sessions:write")
	d.expect(strings.TrimSuffix(app.conf.RedirectURL, "/callback") + "/") // the application itself
	ctx := context.Background()

	// Sign-in, then consent, in the browser.
	authURL, state, verifier := app.authURL()
	d.run(chromedp.Navigate(authURL))
	d.waitVisible("#main form", 10*time.Second)
	if !strings.Contains(d.location(), "/dashboard/login?next=") {
		t.Fatalf("a signed-out user is at %s; want the sign-in page", d.location())
	}
	d.fill("Email", owner.email)
	d.fill("Password", owner.password)
	d.click("Sign in")
	d.waitText("#main h1", "Authorize Ledger sync", 10*time.Second)
	for _, want := range []string{"Create, change and archive payment plans", "Open, cancel and resolve checkout sessions",
		"Ledger shop", "127.0.0.1", "Sandbox (test data)"} {
		d.waitText("#main", want, 5*time.Second)
	}
	if got := d.eval(`document.querySelector('#main').innerText`); strings.Contains(got, "webhook") {
		t.Errorf("the consent page lists a scope not asked for: %s", got)
	}
	d.screens("oauth-consent")
	d.click("Allow")
	cb := app.callback(t)
	if cb.Get("state") != state || !strings.HasPrefix(cb.Get("code"), "svc_ac_") {
		t.Fatalf("the application got %v; want its state and a code", cb)
	}

	tok, err := app.conf.Exchange(ctx, cb.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.AccessToken, "svc_at_") || !strings.HasPrefix(tok.RefreshToken, "svc_rt_") ||
		time.Until(tok.Expiry) < 55*time.Minute || time.Until(tok.Expiry) > 61*time.Minute {
		t.Fatalf("token = %+v; want svc_at_/svc_rt_ and an hour", tok)
	}
	if tok.Extra("scope") != "project:read plans:read plans:write checkout_sessions:read checkout_sessions:write" {
		t.Errorf("granted scope = %v", tok.Extra("scope"))
	}
	// The token itself is never stored.
	var stored int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE signature = $1 OR signature = $2 OR form::text LIKE '%svc_at_%'`,
		tok.AccessToken, strings.TrimPrefix(tok.AccessToken, "svc_at_")).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("%d rows hold the token itself (%v)", stored, err)
	}

	// REST within its scopes, in its project and environment.
	plans := "/api/v1/projects/" + keys.id + "/payment-plans"
	made := bearer(t, base, http.MethodPost, plans, tok.AccessToken, map[string]any{"title": "Made by an app", "amountUsd": "5.00",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet", "priority": 1}}})
	mustStatus(t, made, http.StatusCreated)
	planID := str(made.data()["id"])
	if r := get(t, base, plans+"/"+planID, keys.key); r.Status != http.StatusOK || r.data()["isLive"] != false {
		t.Fatalf("the plan the app made, read with the project's sandbox key: %d %s", r.Status, r.Raw)
	}
	audit := get(t, base, "/api/v1/projects/"+keys.id+"/audit-log", keys.key).list()
	if len(audit) == 0 || audit[0].(map[string]any)["action"] != "payment_plan.created" ||
		audit[0].(map[string]any)["actor"].(map[string]any)["type"] != "oauth_app" {
		t.Errorf("latest audit entry = %v; want the plan made by oauth_app", audit[0])
	}
	if r := bearer(t, base, http.MethodGet, "/api/v1/projects/"+keys.id+"/webhooks", tok.AccessToken, nil); r.Status != http.StatusForbidden ||
		!strings.Contains(string(r.Raw), "webhooks:read") {
		t.Errorf("webhooks without the scope: %d %s; want 403 naming webhooks:read", r.Status, r.Raw)
	}
	if r := bearer(t, base, http.MethodGet, "/api/v1/projects/"+other.id+"/payment-plans", tok.AccessToken, nil); r.Status != http.StatusNotFound {
		t.Errorf("another project's plans: %d; want 404", r.Status)
	}
	liveKey := owner.call(t, base, http.MethodPost, "/api/v1/projects/"+keys.id+"/api-keys", nil, "Paymentsd-Environment", "live")
	mustStatus(t, liveKey, http.StatusCreated)
	livePlan := post(t, base, plans, str(liveKey.data()["secret"]), map[string]any{"title": "Live plan", "amountUsd": "5.00",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-base", "priority": 1}}})
	mustStatus(t, livePlan, http.StatusCreated)
	if r := bearer(t, base, http.MethodGet, plans+"/"+str(livePlan.data()["id"]), tok.AccessToken, nil); r.Status != http.StatusNotFound {
		t.Errorf("a live plan with a sandbox grant: %d; want 404", r.Status)
	}
	if r := bearer(t, base, http.MethodGet, "/api/v1/projects/"+keys.id+"/api-keys", tok.AccessToken, nil); r.Status != http.StatusForbidden {
		t.Errorf("an access token listing API keys: %d; want 403", r.Status)
	}

	// Connect, the same token.
	payments := paymentsdv1connect.NewPaymentsServiceClient(http.DefaultClient, base)
	listReq := connect.NewRequest(&v1.ListPaymentPlansRequest{ProjectId: keys.id})
	listReq.Header().Set("Authorization", "Bearer "+tok.AccessToken)
	if res, err := payments.ListPaymentPlans(ctx, listReq); err != nil || len(res.Msg.GetPaymentPlans()) == 0 {
		t.Fatalf("Connect ListPaymentPlans with the token: %v", err)
	}
	txReq := connect.NewRequest(&v1.ListTransactionsRequest{ProjectId: keys.id})
	txReq.Header().Set("Authorization", "Bearer "+tok.AccessToken)
	if _, err := payments.ListTransactions(ctx, txReq); connect.CodeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), "transactions:read") {
		t.Errorf("Connect ListTransactions without the scope: %v; want permission denied naming transactions:read", err)
	}

	// Refresh: a new pair; the old access token stops working.
	fresh, err := app.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken || !strings.HasPrefix(fresh.RefreshToken, "svc_rt_") {
		t.Fatalf("refresh gave %+v", fresh)
	}
	if r := bearer(t, base, http.MethodGet, plans, tok.AccessToken, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("the access token before the refresh: %d; want 401", r.Status)
	}
	if r := bearer(t, base, http.MethodGet, plans, fresh.AccessToken, nil); r.Status != http.StatusOK {
		t.Fatalf("the refreshed token: %d %s", r.Status, r.Raw)
	}
	// Reusing the old refresh token revokes the grant: the new tokens die.
	_, err = app.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if retrieveError(err) != "invalid_grant" {
		t.Fatalf("reused refresh token: %v; want invalid_grant", err)
	}
	if r := bearer(t, base, http.MethodGet, plans, fresh.AccessToken, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("after a refresh token's reuse, the newest access token: %d; want 401", r.Status)
	}
	_, err = app.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if retrieveError(err) != "invalid_grant" {
		t.Errorf("after a reuse, the newest refresh token: %v; want invalid_grant", err)
	}
	var reason string
	if err := st.Pool().QueryRow(ctx, `SELECT revoked_reason FROM oauth_grants WHERE client_id = $1`, app.conf.ClientID).Scan(&reason); err != nil ||
		reason != "refresh_token_reused" {
		t.Errorf("the grant's revocation: %q %v", reason, err)
	}

	// Authorized again, already signed in: listed to the owner and the
	// user; the owner revokes it in the dashboard.
	authURL, state, verifier = app.authURL()
	d.run(chromedp.Navigate(authURL))
	d.waitText("#main h1", "Authorize Ledger sync", 10*time.Second)
	d.click("Allow")
	cb = app.callback(t)
	if cb.Get("state") != state {
		t.Fatalf("second authorization: %v", cb)
	}
	second, err := app.conf.Exchange(ctx, cb.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	mine := owner.call(t, base, http.MethodGet, "/api/v1/auth/oauth-grants", nil).list()
	project := owner.call(t, base, http.MethodGet, "/api/v1/projects/"+keys.id+"/oauth-grants", nil).list()
	if len(mine) != 1 || len(project) != 1 || mine[0].(map[string]any)["clientName"] != "Ledger sync" ||
		project[0].(map[string]any)["userEmail"] != owner.email || project[0].(map[string]any)["environment"] != "sandbox" {
		t.Fatalf("grants: the user's %v, the project's %v", mine, project)
	}
	d.open("/dashboard/projects/" + keys.id + "/sandbox/apps")
	d.waitText("#main", owner.email, 10*time.Second)
	d.screens("oauth-apps-grants")
	d.clickIn("#main section", "Revoke")
	d.clickIn("dialog", "Revoke")
	d.waitText("#main", "No application is authorized.", 10*time.Second)
	if r := bearer(t, base, http.MethodGet, plans, second.AccessToken, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("after the owner revoked the grant: %d; want 401", r.Status)
	}

	// A third time, revoked by the application itself (RFC 7009).
	authURL, _, verifier = app.authURL()
	redirect := consent(t, base, owner, authURL, map[string]any{"decision": "allow", "projectId": keys.id, "environment": "sandbox"})
	code := mustQuery(t, redirect).Get("code")
	third, err := app.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if r := bearer(t, base, http.MethodGet, plans, third.AccessToken, nil); r.Status != http.StatusOK {
		t.Fatalf("third grant: %d", r.Status)
	}
	rev, _ := http.NewRequest(http.MethodPost, base+"/oauth/revoke", strings.NewReader(url.Values{"token": {third.RefreshToken}}.Encode()))
	rev.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rev.SetBasicAuth(app.conf.ClientID, app.conf.ClientSecret)
	res, err := http.DefaultClient.Do(rev)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %v %v", res, err)
	}
	res.Body.Close()
	if r := bearer(t, base, http.MethodGet, plans, third.AccessToken, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("after RFC 7009 revocation: %d; want 401", r.Status)
	}
	listReq = connect.NewRequest(&v1.ListPaymentPlansRequest{ProjectId: keys.id})
	listReq.Header().Set("Authorization", "Bearer "+third.AccessToken)
	if _, err := payments.ListPaymentPlans(ctx, listReq); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Connect after revocation: %v; want unauthenticated", err)
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
