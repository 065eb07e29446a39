package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/service"
)

// localhostAPI starts an API server over the shared stack on a localhost
// address, its public URL (passkeys need a domain name as relying party),
// with generous rate limits.
func localhostAPI(t *testing.T) (string, *service.Service) {
	t.Helper()
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://localhost:" + strings.Split(ln.Addr().String(), ":")[1]
	e := service.New(stack.Deps(0))
	a, err := api.New(e, api.Config{PublicURL: base, Limits: map[api.Tier]uint64{api.Relaxed: 10000, api.SemiRelaxed: 10000,
		api.Standard: 10000, api.Moderate: 10000, api.Strict: 10000}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(a.Handler())
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(func() { ts.Close(); a.Close() })
	return base, e
}

// passkeyScript runs in the page: it asks the API for a ceremony's
// options, hands them to the browser's WebAuthn (the virtual
// authenticator answers), and posts the credential back.
const passkeyScript = `async (begin, finish, create, extra) => {
	const opts = await (await fetch(begin, {method: 'POST'})).json();
	if (!opts.success) return JSON.stringify(opts);
	const publicKey = create ? PublicKeyCredential.parseCreationOptionsFromJSON(opts.data.publicKey)
		: PublicKeyCredential.parseRequestOptionsFromJSON(opts.data.publicKey);
	const cred = create ? await navigator.credentials.create({publicKey}) : await navigator.credentials.get({publicKey});
	const res = await fetch(finish, {method: 'POST', headers: {'Content-Type': 'application/json'},
		body: JSON.stringify(Object.assign({challengeId: opts.data.challengeId, credential: cred.toJSON()}, extra))});
	return JSON.stringify(await res.json());
}`

// passkeyBrowser is a Chromium on the API at base with a virtual
// authenticator (a platform one that verifies its user and keeps
// resident keys) standing in for the phone or security key.
func passkeyBrowser(t *testing.T, path, base string) browser {
	t.Helper()
	b := newBrowser(t, path, "")
	b.run(chromedp.Navigate(base + "/api/v1/assets"))
	if _, err := chromedp.Call(b.ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}}); err != nil {
		t.Fatal(err)
	}
	return b
}

// An account made without a password adds a passkey in a real Chromium
// (the DevTools virtual authenticator stands in for the phone or security
// key), then, signed out, signs in with it without typing an email, and
// sets a password with a fresh answer of it; the passkey is listed,
// renamed and deleted, and a challenge is answered only once.
func TestPasskeysInARealBrowser(t *testing.T) {
	path := chromium(t)
	// WebAuthn needs a domain name as relying party: the API's public URL
	// is on localhost, where the page is served too.
	base, _ := localhostAPI(t)
	b := passkeyBrowser(t, path, base)
	ctx := b.ctx
	fetchJSON := func(method, path string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('`+path+`', {method: '`+method+`',
			headers: {'Content-Type': 'application/json'}, body: `+map[bool]string{true: "undefined", false: "JSON.stringify(" + string(b) + ")"}[body == nil]+`}).then(r => r.text())`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatalf("%s %s: %s", method, path, out)
		}
		return env
	}

	// An account with no password, made in the browser: it signs in with
	// the passkey it adds.
	email := fmt.Sprintf("passkey-%d@example.com", time.Now().UnixNano())
	made := fetchJSON("POST", "/api/v1/auth/signup", map[string]any{"email": email})
	if made["success"] != true || made["data"].(map[string]any)["hasPassword"] != false {
		t.Fatalf("an account without a password: %v", made)
	}
	ceremony := func(begin, finish string, create bool, extra map[string]any) map[string]any {
		t.Helper()
		x, _ := json.Marshal(extra)
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string]("("+passkeyScript+")('"+begin+"', '"+finish+"', "+
			map[bool]string{true: "true", false: "false"}[create]+", "+string(x)+")", chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatalf("%s: %s", finish, out)
		}
		return env
	}

	added := ceremony("/api/v1/auth/passkeys/registration-options", "/api/v1/auth/passkeys", true, map[string]any{"name": "Laptop"})
	if added["success"] != true || added["data"].(map[string]any)["name"] != "Laptop" {
		t.Fatalf("adding a passkey: %v", added)
	}
	passkeyID := str(added["data"].(map[string]any)["id"])

	// Signed out, sign in with it: no email typed.
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	signedIn := ceremony("/api/v1/auth/passkeys/login-options", "/api/v1/auth/passkeys/login", false, nil)
	if signedIn["success"] != true || signedIn["data"].(map[string]any)["email"] != email {
		t.Fatalf("signing in with the passkey: %v", signedIn)
	}
	me, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('/api/v1/auth/me').then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.Contains(me, email) {
		t.Fatalf("the browser's session after the passkey sign-in: %s %v", me, err)
	}

	// No password signs this account in; a passkey's fresh answer sets
	// one (in place of the current password it does not have).
	if r := do(t, base, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": "any password at all"}}); r.Status != 401 {
		t.Fatalf("a password signed in an account without one: %d", r.Status)
	}
	if r := fetchJSON("POST", "/api/v1/auth/password", map[string]any{"newPassword": "a password at last"}); r["statusCode"] != float64(422) {
		t.Fatalf("a password set with no proof: %v", r)
	}
	changed := ceremony("/api/v1/auth/passkeys/login-options", "/api/v1/auth/password", false, map[string]any{"newPassword": "a password at last"})
	if changed["success"] != true || changed["data"].(map[string]any)["hasPassword"] != true {
		t.Fatalf("a password set with a passkey's answer: %v", changed)
	}
	owner := login(t, base, account{email: email, password: "a password at last"})

	// The passkey in the list, used; renamed; a challenge answered twice.
	list := owner.call(t, base, http.MethodGet, "/api/v1/auth/passkeys", nil).list()
	if len(list) != 1 || list[0].(map[string]any)["lastUsedAt"] == nil {
		t.Fatalf("passkeys = %v; want the one, used", list)
	}
	mustStatus(t, owner.call(t, base, http.MethodPatch, "/api/v1/auth/passkeys/"+passkeyID, map[string]any{"name": "Work laptop"}), 200)
	replay, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
		const opts = await (await fetch('/api/v1/auth/passkeys/login-options', {method: 'POST'})).json();
		const cred = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(opts.data.publicKey)});
		const body = JSON.stringify({challengeId: opts.data.challengeId, credential: cred.toJSON()});
		const post = () => fetch('/api/v1/auth/passkeys/login', {method: 'POST', headers: {'Content-Type': 'application/json'}, body}).then(r => r.status);
		return (await post()) + ',' + (await post());
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || replay != "200,422" {
		t.Fatalf("one answer posted twice: %q %v; want 200 then 422", replay, err)
	}
	// Deleted, it signs in no more.
	mustStatus(t, owner.call(t, base, http.MethodDelete, "/api/v1/auth/passkeys/"+passkeyID, nil), 200)
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	refused := ceremony("/api/v1/auth/passkeys/login-options", "/api/v1/auth/passkeys/login", false, nil)
	if refused["success"] != false || refused["statusCode"] != float64(401) {
		t.Fatalf("a deleted passkey signed in: %v", refused)
	}
}
