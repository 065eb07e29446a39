package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/paymentsd/paymentsd/api"
)

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
		status, _, out := postOAuthForm(t, base+"/oauth/introspect", url.Values{"token": {token}}, user, pass)
		return status, out
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
		form, basic := url.Values{"token": {token}}, user
		if pass == "" {
			form.Set("client_id", user)
			basic = ""
		}
		status, header, out := postOAuthForm(t, base+"/oauth/revoke", form, basic, pass)
		if status == http.StatusUnauthorized && header.Get("WWW-Authenticate") == "" {
			t.Errorf("revocation: 401 without a challenge")
		}
		return status, out
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
// postOAuthForm posts form to an OAuth endpoint, with user and pass as
// HTTP Basic credentials unless user is empty, and returns the answer's
// status, header and JSON body.
func postOAuthForm(t *testing.T, endpoint string, form url.Values, user, pass string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
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
	return res.StatusCode, res.Header, out
}

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
