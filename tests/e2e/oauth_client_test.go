package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/api"
)

// The authorization server as a strict third-party client sees it:
// oauth4webapi (npm, by panva; it checks every response against the
// RFCs), driven by tests/oauthclient/client.mjs under Node. A public
// client runs the code flow with PKCE and no state (OAuth 2.1 makes state
// optional with PKCE), reads RFC 9207's iss in every authorization
// response, calls the API, refreshes (the refresh token rotates) and
// revokes; a confidential client introspects its access and refresh
// tokens (each with its own expiry). The errors are the RFCs': a
// WWW-Authenticate challenge on the API's 401 and 403, invalid_client with
// a Basic challenge on the token and introspection endpoints,
// unsupported_grant_type for the password and client credentials grants,
// unauthorized_client for a client revoking another client's token.
func TestOAuthStrictThirdPartyClient(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the OAuth client test runs where Node.js is (.ci/run installs it)")
	}
	dir, err := filepath.Abs("../oauthclient")
	if err != nil {
		t.Fatal(err)
	}
	if !npmInstalled(dir) {
		cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	ts, _ := newAPI(t, apiOptions{})
	base := ts.URL
	owner, keys := ownedProject(t, base, "Strict client shop")
	register := func(confidential bool) (id, secret string) {
		r := owner.call(t, base, http.MethodPost, "/api/v1/projects/"+keys.id+"/oauth-clients", map[string]any{
			"name": "Strict client", "redirectUris": []string{"http://127.0.0.1/callback"}, "confidential": confidential})
		mustStatus(t, r, http.StatusCreated)
		return str(r.data()["client"].(map[string]any)["id"]), str(r.data()["clientSecret"])
	}
	publicID, _ := register(false)
	confidentialID, secret := register(true)

	cmd := exec.Command("node", "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OAUTH_BASE="+base, "OAUTH_ISSUER=https://pay.example.test", "PROJECT_ID="+keys.id,
		"SESSION_COOKIE="+api.SessionCookie+"="+owner.cookie, "REDIRECT_URI=http://127.0.0.1:8719/callback",
		"PUBLIC_CLIENT_ID="+publicID, "CONFIDENTIAL_CLIENT_ID="+confidentialID, "CONFIDENTIAL_CLIENT_SECRET="+secret)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s\n%s", err, raw, stderr.String())
	}
	var steps map[string]clientStep
	if err := json.Unmarshal(raw, &steps); err != nil {
		t.Fatalf("the client's output: %v\n%s", err, raw)
	}
	t.Logf("the client's steps: %s", raw)
	step := func(name string) clientStep {
		t.Helper()
		s, ok := steps[name]
		if !ok {
			t.Fatalf("the client did not run %s", name)
		}
		return s
	}
	succeeded := func(name string) clientStep {
		t.Helper()
		s := step(name)
		if !s.OK {
			t.Errorf("%s: the client refused or failed: %+v", name, s.Thrown)
		}
		return s
	}
	// refused is a step the library threw on, with the OAuth error code
	// and (for an HTTP error) the status.
	refused := func(name, kind, code string, status int) clientStep {
		t.Helper()
		s := step(name)
		if s.OK || s.Thrown.Name != kind || s.Thrown.Error != code || s.Thrown.Status != status {
			t.Errorf("%s: %+v; want %s with %s (%d)", name, s, kind, code, status)
		}
		return s
	}
	challenge := func(name, scheme string, params map[string]string) {
		t.Helper()
		s := step(name)
		if len(s.Thrown.Challenges) != 1 || s.Thrown.Challenges[0].Scheme != scheme {
			t.Errorf("%s: challenges %+v; want one %s", name, s.Thrown.Challenges, scheme)
			return
		}
		for k, v := range params {
			if got := s.Thrown.Challenges[0].Parameters[k]; got != v {
				t.Errorf("%s: challenge parameter %s = %q; want %q", name, k, got, v)
			}
		}
	}

	if d := succeeded("discovery"); d.Issuer != "https://pay.example.test" || !d.IssParameterSupported {
		t.Errorf("discovery: %+v", d)
	}
	if a := succeeded("publicAuthorization"); a.StateSent || a.Iss != "https://pay.example.test" || a.RedirectHost != "127.0.0.1:8719" ||
		a.TokenType != "bearer" || a.ExpiresIn < 3500 || a.ExpiresIn > 3600 || a.Scope != "plans:read project:read" ||
		a.AccessToken != "svc_at_" || a.RefreshToken != "svc_rt_" {
		t.Errorf("the public client's authorization without state: %+v", a)
	}
	if c := succeeded("publicApiCall"); c.Status != http.StatusOK {
		t.Errorf("the API with the access token: %d", c.Status)
	}
	refused("insufficientScope", "WWWAuthenticateChallengeError", "", http.StatusForbidden)
	challenge("insufficientScope", "bearer", map[string]string{"error": "insufficient_scope", "scope": "webhooks:read"})
	if m := succeeded("missingToken"); m.Status != http.StatusUnauthorized || m.Challenge != "Bearer" {
		t.Errorf("the API without a token: %d, WWW-Authenticate %q; want 401 and a bare Bearer challenge", m.Status, m.Challenge)
	}
	if r := succeeded("publicRefresh"); !r.Rotated {
		t.Errorf("refresh: %+v; want a new access and refresh token", r)
	}
	refused("retiredAccessToken", "WWWAuthenticateChallengeError", "", http.StatusUnauthorized)
	challenge("retiredAccessToken", "bearer", map[string]string{"error": "invalid_token"})
	succeeded("refreshedApiCall")
	refused("deniedWithoutState", "AuthorizationResponseError", "access_denied", 0)
	refused("errorWithoutState", "AuthorizationResponseError", "invalid_scope", 0)

	if c := succeeded("confidentialAuthorization"); !c.StateReturned {
		t.Errorf("the confidential client's state: %+v", c)
	}
	const day = 24 * 3600
	if i := succeeded("introspectAccess"); !i.Active || i.ExpiresIn < 3500 || i.ExpiresIn > 3605 || i.ClientID != confidentialID {
		t.Errorf("introspecting the access token: %+v; want active, expiring in an hour", i)
	}
	if i := succeeded("introspectRefresh"); !i.Active || i.ExpiresIn < 90*day-100 || i.ExpiresIn > 90*day+5 {
		t.Errorf("introspecting the refresh token: %+v; want active, expiring in 90 days", i)
	}
	if i := succeeded("introspectOthersToken"); i.Active {
		t.Errorf("introspecting another client's token: %+v; want inactive", i)
	}
	refused("introspectWrongSecret", "WWWAuthenticateChallengeError", "invalid_client", http.StatusUnauthorized)
	challenge("introspectWrongSecret", "basic", map[string]string{"realm": "paymentsd"})
	refused("tokenWrongSecret", "WWWAuthenticateChallengeError", "invalid_client", http.StatusUnauthorized)
	challenge("tokenWrongSecret", "basic", map[string]string{"realm": "paymentsd"})
	refused("passwordGrant", "ResponseBodyError", "unsupported_grant_type", http.StatusBadRequest)
	refused("clientCredentialsGrant", "ResponseBodyError", "unsupported_grant_type", http.StatusBadRequest)

	refused("revokeOthersToken", "ResponseBodyError", "unauthorized_client", http.StatusBadRequest)
	if c := succeeded("afterOthersRevocation"); c.Status != http.StatusOK {
		t.Errorf("the token another client tried to revoke: %d; want it still working", c.Status)
	}
	succeeded("revokeOwnToken")
	refused("afterOwnRevocation", "WWWAuthenticateChallengeError", "", http.StatusUnauthorized)
	challenge("afterOwnRevocation", "bearer", map[string]string{"error": "invalid_token"})
	if i := succeeded("introspectRevoked"); i.Active {
		t.Errorf("introspecting a revoked grant's refresh token: %+v; want inactive", i)
	}
}

// clientStep is one step of tests/oauthclient/client.mjs: what it
// returned, or what oauth4webapi threw.
type clientStep struct {
	OK     bool `json:"ok"`
	Thrown struct {
		Name       string `json:"name"`
		Code       string `json:"code"`
		Message    string `json:"message"`
		Status     int    `json:"status"`
		Error      string `json:"error"`
		Challenges []struct {
			Scheme     string            `json:"scheme"`
			Parameters map[string]string `json:"parameters"`
		} `json:"challenges"`
	} `json:"thrown"`

	Issuer                string `json:"issuer"`
	IssParameterSupported bool   `json:"issParameterSupported"`
	RedirectHost          string `json:"redirectHost"`
	Iss                   string `json:"iss"`
	StateSent             bool   `json:"stateSent"`
	StateReturned         bool   `json:"stateReturned"`
	TokenType             string `json:"tokenType"`
	ExpiresIn             int64  `json:"expiresIn"`
	Scope                 string `json:"scope"`
	AccessToken           string `json:"accessToken"`
	RefreshToken          string `json:"refreshToken"`
	Status                int    `json:"status"`
	Challenge             string `json:"challenge"`
	Rotated               bool   `json:"rotated"`
	Active                bool   `json:"active"`
	ClientID              string `json:"clientId"`
}

// npmInstalled says whether dir's node_modules was installed from its
// current package-lock.json (npm records what it installed in
// node_modules/.package-lock.json).
func npmInstalled(dir string) bool {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	done, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	return err == nil && done.ModTime().After(lock.ModTime())
}
