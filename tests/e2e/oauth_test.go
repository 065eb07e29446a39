package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/paymentsd/paymentsd/api"
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

// Each OAuth 2.1 rule, refused as it should be: unregistered redirect
// URIs are never redirected to; missing or plain PKCE, a short state and
// the implicit grant go back with an error (and the issuer, RFC 9207); a
// request without state is accepted (PKCE protects it) and answered
// without one; the password and client credentials grants do not exist; a
// code works once (its reuse revokes what it gave), for its own client
// and verifier only; an expired token is refused with its challenge; a
// denied consent says so; introspection is for confidential clients and
// their own tokens, and revocation too.
func TestOAuthRulesAreEnforced(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	base := ts.URL
	owner, keys := ownedProject(t, base, "Rules shop")
	app := newOAuthApp(t, owner, base, keys.id, true, "plans:read")
	native := newOAuthApp(t, owner, base, keys.id, false, "plans:read")
	ctx := context.Background()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authorizeAt := func(query url.Values) *http.Response {
		t.Helper()
		res, err := noRedirect.Get(base + "/oauth/authorize?" + query.Encode())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	good := func() url.Values {
		u, _, _ := app.authURL()
		return mustQuery(t, u)
	}

	// A redirect URI that is not registered is never redirected to.
	q := good()
	q.Set("redirect_uri", "http://evil.example/callback")
	if res := authorizeAt(q); !strings.HasPrefix(res.Header.Get("Location"), "/dashboard/authorize?") {
		t.Errorf("unregistered redirect URI: %d to %q; want the consent page's error", res.StatusCode, res.Header.Get("Location"))
	}
	if r := owner.call(t, base, http.MethodGet, "/api/v1/oauth/authorization?"+q.Encode(), nil); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("the consent page's view of it: %d %s; want 422", r.Status, r.Raw)
	}
	// An https client registered on a path does not match another path.
	q = good()
	q.Set("redirect_uri", strings.Replace(q.Get("redirect_uri"), "/callback", "/callback/other", 1))
	if res := authorizeAt(q); !strings.HasPrefix(res.Header.Get("Location"), "/dashboard/authorize?") {
		t.Errorf("another path: redirected to %q", res.Header.Get("Location"))
	}

	for name, change := range map[string]func(url.Values){
		"missing PKCE": func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") },
		"plain PKCE": func(q url.Values) {
			q.Set("code_challenge_method", "plain")
			q.Set("code_challenge", strings.Repeat("a", 43))
		},
		"no method":     func(q url.Values) { q.Del("code_challenge_method") },
		"short state":   func(q url.Values) { q.Set("state", "1234567") },
		"implicit":      func(q url.Values) { q.Set("response_type", "token") },
		"unknown scope": func(q url.Values) { q.Set("scope", "plans:read admin") },
		"form_post":     func(q url.Values) { q.Set("response_mode", "form_post") },
	} {
		q := good()
		change(q)
		res := authorizeAt(q)
		loc := res.Header.Get("Location")
		back := mustQuery(t, loc)
		if !strings.HasPrefix(loc, app.conf.RedirectURL) || back.Get("error") == "" || back.Get("code") != "" ||
			back.Get("iss") != "https://pay.example.test" || back.Get("state") != q.Get("state") {
			t.Errorf("%s: %d to %q; want the application's redirect URI with an error, the issuer and the state", name, res.StatusCode, loc)
		}
	}
	// Without state (OAuth 2.1: PKCE is the protection): accepted, and
	// answered without state, errors as codes.
	q = good()
	q.Del("state")
	q.Set("response_mode", "query")
	if res := authorizeAt(q); !strings.HasPrefix(res.Header.Get("Location"), "/dashboard/authorize?") {
		t.Errorf("no state: %d to %q; want the consent page", res.StatusCode, res.Header.Get("Location"))
	}
	q.Set("scope", "plans:read admin")
	if back, _ := url.Parse(authorizeAt(q).Header.Get("Location")); back.Query().Get("error") != "invalid_scope" ||
		back.Query().Has("state") || back.Query().Get("iss") != "https://pay.example.test" {
		t.Errorf("an error without state: %v; want invalid_scope, the issuer and no state at all", back)
	}
	for _, grant := range []url.Values{
		{"grant_type": {"password"}, "username": {owner.email}, "password": {owner.password}},
		{"grant_type": {"client_credentials"}, "scope": {"plans:read"}},
	} {
		if e := tokenError(t, base, grant, app.conf.ClientID, app.conf.ClientSecret); e != "unsupported_grant_type" {
			t.Errorf("%s grant: %q; want unsupported_grant_type", grant.Get("grant_type"), e)
		}
	}
	if e := tokenError(t, base, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"svc_rt_x.y"}},
		app.conf.ClientID, "svc_cs_wrong"); e != "invalid_client" {
		t.Errorf("a wrong secret: %q; want invalid_client", e)
	}

	// Denied consent goes back with access_denied.
	u, state, _ := app.authURL()
	back := mustQuery(t, consent(t, base, owner, u, map[string]any{"decision": "deny"}))
	if back.Get("error") != "access_denied" || back.Get("state") != state || back.Get("iss") != "https://pay.example.test" {
		t.Errorf("denied: %v", back)
	}
	// A user who is not a member cannot grant the project.
	stranger := signup(t, base)
	u, _, _ = app.authURL()
	uu, _ := url.Parse(u)
	if r := stranger.call(t, base, http.MethodPost, "/api/v1/oauth/authorization?"+uu.RawQuery,
		map[string]any{"decision": "allow", "projectId": keys.id, "environment": "sandbox"}); r.Status != http.StatusNotFound {
		t.Errorf("a stranger granting the project: %d; want 404", r.Status)
	}

	allow := map[string]any{"decision": "allow", "projectId": keys.id, "environment": "sandbox"}
	// The wrong verifier, then another client, then the right one; then
	// the code again, which revokes the tokens it gave.
	u, _, _ = app.authURL()
	code := mustQuery(t, consent(t, base, owner, u, allow)).Get("code")
	if _, err := app.conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); retrieveError(err) != "invalid_grant" {
		t.Errorf("wrong verifier: %v", err)
	}
	u, _, verifier := app.authURL()
	code = mustQuery(t, consent(t, base, owner, u, allow)).Get("code")
	if _, err := native.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); retrieveError(err) != "invalid_grant" {
		t.Errorf("another client's code: %v; want invalid_grant", err)
	}
	if e := tokenError(t, base, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {app.conf.RedirectURL},
		"client_id": {app.conf.ClientID}, "code_verifier": {verifier}}, "", ""); e != "invalid_client" {
		t.Errorf("a confidential client without its secret: %q; want invalid_client", e)
	}
	tok, err := app.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	plans := "/api/v1/projects/" + keys.id + "/payment-plans"
	if r := bearer(t, base, http.MethodGet, plans, tok.AccessToken, nil); r.Status != http.StatusOK {
		t.Fatalf("token: %d %s", r.Status, r.Raw)
	}
	if r := bearer(t, base, http.MethodPost, plans, tok.AccessToken, map[string]any{"title": "x"}); r.Status != http.StatusForbidden ||
		!slices.ContainsFunc(r.detailFields(), func(f string) bool { return f == "scope" }) ||
		r.Header.Get("WWW-Authenticate") != `Bearer error="insufficient_scope", scope="plans:write"` {
		t.Errorf("a write with plans:read only: %d %s %q; want 403 with the scope in the details and the challenge", r.Status, r.Raw,
			r.Header.Get("WWW-Authenticate"))
	}
	// 401s on the API's routes carry their challenge (RFC 6750 §3): bare
	// without a credential, invalid_token for one refused, API keys alike.
	for name, c := range map[string]struct{ key, header, want string }{
		"no credential":  {"", "", "Bearer"},
		"another scheme": {"", "Basic dXNlcjpwYXNz", "Bearer"},
		"unknown token":  {"svc_at_unknown.token", "", `Bearer error="invalid_token"`},
		"unknown key":    {"svc_test_unknown", "", `Bearer error="invalid_token"`},
	} {
		req := request{method: http.MethodGet, path: plans, key: c.key}
		if c.header != "" {
			req.headers = map[string]string{"Authorization": c.header}
		}
		if r := do(t, base, req); r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), c.want) ||
			c.want == "Bearer" && r.Header.Get("WWW-Authenticate") != "Bearer" || r.errorCode() == "" {
			t.Errorf("%s: %d %q %s; want 401 in the envelope with %s", name, r.Status, r.Header.Get("WWW-Authenticate"), r.Raw, c.want)
		}
	}

	// Introspection: the confidential client sees its token; a wrong
	// secret or a public client is refused.
	introspect := func(user, pass, token string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, base+"/oauth/introspect", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	if status, out := introspect(app.conf.ClientID, app.conf.ClientSecret, tok.AccessToken); status != http.StatusOK || out["active"] != true ||
		out["scope"] != "plans:read" || out["client_id"] != app.conf.ClientID || out["project_id"] != keys.id || out["environment"] != "sandbox" {
		t.Errorf("introspection: %d %v", status, out)
	}
	if status, out := introspect(app.conf.ClientID, "svc_cs_wrong", tok.AccessToken); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Errorf("introspection with a wrong secret: %d %v; want 401 invalid_client", status, out)
	}
	if status, out := introspect(native.conf.ClientID, "", tok.AccessToken); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Errorf("introspection by a public client: %d %v", status, out)
	}
	if status, out := introspect("", "", tok.AccessToken); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Errorf("introspection without credentials: %d %v", status, out)
	}
	if status, out := introspect(app.conf.ClientID, app.conf.ClientSecret, tok.RefreshToken); status != http.StatusOK || out["active"] != true ||
		int64(num(out["exp"]))-time.Now().Unix() < 89*24*3600 {
		t.Errorf("introspecting the refresh token: %d %v; want its own expiry, in 90 days", status, out)
	}
	// Another client revoking the token is refused (RFC 7009 §2.1), and
	// the token keeps working.
	revoke := func(user, pass, token string) (int, map[string]any) {
		form := url.Values{"token": {token}}
		if pass == "" {
			form.Set("client_id", user)
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/oauth/revoke", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if pass != "" {
			req.SetBasicAuth(user, pass)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode == http.StatusUnauthorized && res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("revocation: 401 without a challenge")
		}
		return res.StatusCode, out
	}
	if status, out := revoke(native.conf.ClientID, "", tok.RefreshToken); status != http.StatusBadRequest || out["error"] != "unauthorized_client" {
		t.Errorf("another client revoking the token: %d %v; want 400 unauthorized_client", status, out)
	}
	if status, out := revoke(app.conf.ClientID, "svc_cs_wrong", tok.RefreshToken); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Errorf("revoking with a wrong secret: %d %v; want 401 invalid_client", status, out)
	}
	if status, out := revoke(app.conf.ClientID, app.conf.ClientSecret, ""); status != http.StatusBadRequest || out["error"] != "invalid_request" {
		t.Errorf("revoking no token: %d %v; want 400 invalid_request", status, out)
	}
	if status, _ := revoke(app.conf.ClientID, app.conf.ClientSecret, "svc_rt_unknown.token"); status != http.StatusOK {
		t.Errorf("revoking an unknown token: %d; want 200 (RFC 7009 §2.2)", status)
	}
	if r := bearer(t, base, http.MethodGet, plans, tok.AccessToken, nil); r.Status != http.StatusOK {
		t.Errorf("the token another client tried to revoke: %d", r.Status)
	}
	if status, out := introspect(app.conf.ClientID, app.conf.ClientSecret, "svc_at_unknown.token"); status != http.StatusOK || out["active"] != false {
		t.Errorf("introspecting an unknown token: %d %v", status, out)
	}

	// An expired token is refused.
	if _, err := st.Pool().Exec(ctx, `UPDATE oauth_tokens SET expires_at = now() - interval '1 second'
		WHERE kind = 'access_token' AND client_id = $1`, app.conf.ClientID); err != nil {
		t.Fatal(err)
	}
	if r := bearer(t, base, http.MethodGet, plans, tok.AccessToken, nil); r.Status != http.StatusUnauthorized ||
		!strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer error="invalid_token"`) {
		t.Errorf("expired token: %d %q; want 401 with the invalid_token challenge", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	// The code again: refused, and what it gave is revoked.
	fresh, err := app.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); retrieveError(err) != "invalid_grant" {
		t.Errorf("code reuse: %v; want invalid_grant", err)
	}
	if r := bearer(t, base, http.MethodGet, plans, fresh.AccessToken, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("after the code's reuse, its grant's token: %d; want 401", r.Status)
	}

	// A public client: PKCE alone, and a viewer's token cannot write.
	viewer := signup(t, base)
	me := viewer.call(t, base, http.MethodGet, "/api/v1/auth/me", nil).data()
	if err := st.Access().AddMember(ctx, keys.id, str(me["user"].(map[string]any)["id"]), "viewer", time.Now()); err != nil {
		t.Fatal(err)
	}
	writer := newOAuthApp(t, owner, base, keys.id, false, "plans:read", "plans:write")
	u, _, verifier = writer.authURL()
	code = mustQuery(t, consent(t, base, viewer, u, allow)).Get("code")
	vt, err := writer.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if r := bearer(t, base, http.MethodPost, plans, vt.AccessToken, map[string]any{"title": "x"}); r.Status != http.StatusForbidden {
		t.Errorf("a viewer's application writing: %d; want 403", r.Status)
	}
	if r := bearer(t, base, http.MethodGet, plans, vt.AccessToken, nil); r.Status != http.StatusOK {
		t.Errorf("a viewer's application reading: %d", r.Status)
	}
	// A user removed from the project takes the access with them.
	if r := owner.call(t, base, http.MethodDelete, "/api/v1/projects/"+keys.id+"/members/"+str(me["user"].(map[string]any)["id"]), nil); r.Status != http.StatusOK {
		t.Fatalf("remove member: %d %s", r.Status, r.Raw)
	}
	if r := bearer(t, base, http.MethodGet, plans, vt.AccessToken, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("the token of a removed member: %d; want 401", r.Status)
	}

	// The metadata document (RFC 8414).
	res, err := http.Get(base + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var meta map[string]any
	_ = json.NewDecoder(res.Body).Decode(&meta)
	if meta["token_endpoint"] != "https://pay.example.test/oauth/token" || !slices.Contains(anyStrings(meta["code_challenge_methods_supported"]), "S256") ||
		slices.Contains(anyStrings(meta["code_challenge_methods_supported"]), "plain") || !slices.Contains(anyStrings(meta["scopes_supported"]), "webhooks:write") ||
		meta["issuer"] != "https://pay.example.test" || meta["authorization_response_iss_parameter_supported"] != true {
		t.Errorf("metadata: %v", meta)
	}
}

// num is a JSON number, or 0.
func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// Rate limits count per grant: an application's calls spend neither the
// project's API key budget nor another grant's, and a refresh does not
// start a new budget. A user revokes what they authorized, and only that.
func TestOAuthRateLimitsCountPerGrant(t *testing.T) {
	const perMinute = 4
	ts, _ := newAPI(t, apiOptions{limits: map[api.Tier]uint64{api.Relaxed: perMinute, api.SemiRelaxed: 10000,
		api.Standard: 10000, api.Moderate: 10000, api.Strict: 10000}})
	base := ts.URL
	owner, keys := ownedProject(t, base, "Limits shop")
	app := newOAuthApp(t, owner, base, keys.id, true, "plans:read")
	ctx := context.Background()
	grant := func() *oauth2.Token {
		u, _, verifier := app.authURL()
		code := mustQuery(t, consent(t, base, owner, u, map[string]any{"decision": "allow", "projectId": keys.id, "environment": "sandbox"})).Get("code")
		tok, err := app.conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	plans := "/api/v1/projects/" + keys.id + "/payment-plans"
	first := grant()
	for i := range perMinute {
		if r := bearer(t, base, http.MethodGet, plans, first.AccessToken, nil); r.Status != http.StatusOK {
			t.Fatalf("call %d: %d", i+1, r.Status)
		}
	}
	if r := bearer(t, base, http.MethodGet, plans, first.AccessToken, nil); r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("call %d: %d; want 429 with Retry-After", perMinute+1, r.Status)
	}
	refreshed, err := app.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: first.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if r := bearer(t, base, http.MethodGet, plans, refreshed.AccessToken, nil); r.Status != http.StatusTooManyRequests {
		t.Errorf("the refreshed token of a spent grant: %d; want 429", r.Status)
	}
	if r := get(t, base, plans, keys.key); r.Status != http.StatusOK {
		t.Errorf("the project's API key after the grant spent its budget: %d", r.Status)
	}
	second := grant()
	if r := bearer(t, base, http.MethodGet, plans, second.AccessToken, nil); r.Status != http.StatusOK {
		t.Errorf("another grant: %d", r.Status)
	}

	// The user revokes the grants they gave from their account: at once.
	for _, g := range owner.call(t, base, http.MethodGet, "/api/v1/auth/oauth-grants", nil).list() {
		id := str(g.(map[string]any)["id"])
		r := owner.call(t, base, http.MethodPost, "/api/v1/auth/oauth-grants/"+id+"/revoke", nil)
		mustStatus(t, r, http.StatusOK)
		if r.data()["revokedReason"] != "user" {
			t.Errorf("revoked grant: %s", r.Raw)
		}
	}
	if r := bearer(t, base, http.MethodGet, plans, second.AccessToken, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("after the user revoked it: %d; want 401", r.Status)
	}
	if r := owner.call(t, base, http.MethodGet, "/api/v1/auth/oauth-grants", nil); len(r.list()) != 0 {
		t.Errorf("grants left: %s", r.Raw)
	}
	stranger := signup(t, base)
	if r := stranger.call(t, base, http.MethodPost, "/api/v1/auth/oauth-grants/"+str(owner.call(t, base, http.MethodGet,
		"/api/v1/projects/"+keys.id+"/audit-log", nil).list()[0].(map[string]any)["target"].(map[string]any)["id"])+"/revoke", nil); r.Status != http.StatusNotFound {
		t.Errorf("another user's grant: %d; want 404", r.Status)
	}
}
