package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/payment"
)

// A passkey's fresh answer re-authenticates a session whose sign-in is
// old, opening the sensitive actions to it; a passkey whose signature
// counter goes backwards (a copy of its key answering) is refused, at
// re-authentication and at sign-in, with a message that says why, and
// each refusal is in the account's security log. Driven in a real
// Chromium with the DevTools virtual authenticator.
func TestPasskeyReauthenticationAndClonedPasskeys(t *testing.T) {
	path := chromium(t)
	base, svc := localhostAPI(t)
	b := passkeyBrowser(t, path, base)
	ctx := b.ctx
	envelope := func(what, out string, err error) map[string]any {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatalf("%s: %s", what, out)
		}
		return env
	}
	fetchJSON := func(method, path string, body any) map[string]any {
		t.Helper()
		js := "undefined"
		if body != nil {
			b, _ := json.Marshal(body)
			js = "JSON.stringify(" + string(b) + ")"
		}
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('`+path+`', {method: '`+method+`',
			headers: {'Content-Type': 'application/json'}, body: `+js+`}).then(r => r.text())`, chromedp.EvalAwaitPromise))
		return envelope(method+" "+path, out, err)
	}
	ceremony := func(begin, finish string, create bool, extra map[string]any) map[string]any {
		t.Helper()
		x, _ := json.Marshal(extra)
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string]("("+passkeyScript+")('"+begin+"', '"+finish+"', "+
			fmt.Sprint(create)+", "+string(x)+")", chromedp.EvalAwaitPromise))
		return envelope(finish, out, err)
	}
	db := st.Pool()
	bg := context.Background()

	// An account without a password, its passkey added in the browser.
	email := fmt.Sprintf("passkey-sudo-%d@example.com", time.Now().UnixNano())
	made := fetchJSON("POST", "/api/v1/auth/signup", map[string]any{"email": email})
	if made["success"] != true {
		t.Fatalf("signup: %v", made)
	}
	added := ceremony("/api/v1/auth/passkeys/registration-options", "/api/v1/auth/passkeys", true, map[string]any{"name": "Laptop"})
	if added["success"] != true {
		t.Fatalf("adding a passkey: %v", added)
	}
	passkeyID := str(added["data"].(map[string]any)["id"])
	var userID string
	if err := db.QueryRow(bg, `SELECT id FROM users WHERE email = $1`, email).Scan(&userID); err != nil {
		t.Fatal(err)
	}
	ageSignIns := func() {
		t.Helper()
		if _, err := db.Exec(bg, `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour' WHERE user_id = $1`, userID); err != nil {
			t.Fatal(err)
		}
	}
	sensitive := func() map[string]any {
		t.Helper()
		return fetchJSON("POST", "/api/v1/auth/passkeys/registration-options", nil)
	}

	// The sign-in grows old: the sensitive action is refused until the
	// passkey answers a fresh challenge at the re-authentication door.
	ageSignIns()
	if r := sensitive(); r["statusCode"] != float64(403) || r["error"].(map[string]any)["code"] != api.ReauthenticationRequired {
		t.Fatalf("a sensitive action with an old sign-in: %v", r)
	}
	re := ceremony("/api/v1/auth/passkeys/login-options", "/api/v1/auth/reauthenticate", false, nil)
	if re["success"] != true || re["data"].(map[string]any)["sensitiveActionsUntil"] == nil {
		t.Fatalf("re-authentication with a passkey: %v", re)
	}
	if r := sensitive(); r["success"] != true {
		t.Fatalf("a sensitive action after re-authenticating with a passkey: %v", r)
	}
	events := func() map[string]int {
		t.Helper()
		list, err := svc.Identity().AccountEvents(bg, userID)
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, e := range list {
			n[e.Action]++
			if e.Action == payment.AccountPasskeyCloneRefused && e.Details["passkeyId"] != passkeyID {
				t.Fatalf("the refusal names passkey %v; want %s", e.Details["passkeyId"], passkeyID)
			}
		}
		return n
	}
	if n := events(); n[payment.AccountReauthenticated] != 1 {
		t.Fatalf("security log = %v; want the re-authentication", n)
	}

	// A copy of the key answers: its counter is behind the one recorded.
	tag, err := db.Exec(bg, `UPDATE passkeys SET credential = jsonb_set(credential, '{authenticator,signCount}', '1000000')
		WHERE id = $1`, passkeyID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("raise the sign count: %v", err)
	}
	cloned := func(what string, r map[string]any) {
		t.Helper()
		msg := fmt.Sprint(r["message"])
		if r["statusCode"] != float64(401) || !strings.Contains(msg, "signature counter went backwards") ||
			!strings.Contains(msg, "remove this passkey") {
			t.Fatalf("%s with a passkey whose counter went backwards: %v", what, r)
		}
	}
	ageSignIns()
	cloned("re-authentication", ceremony("/api/v1/auth/passkeys/login-options", "/api/v1/auth/reauthenticate", false, nil))
	if r := sensitive(); r["statusCode"] != float64(403) {
		t.Fatalf("a sensitive action after the refused re-authentication: %v", r)
	}
	if n := events(); n[payment.AccountPasskeyCloneRefused] != 1 || n[payment.AccountReauthenticated] != 1 {
		t.Fatalf("security log = %v; want the refusal and no second re-authentication", n)
	}
	// Signed out, it signs no one in.
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	cloned("sign-in", ceremony("/api/v1/auth/passkeys/login-options", "/api/v1/auth/passkeys/login", false, nil))
	if r := fetchJSON("GET", "/api/v1/auth/me", nil); r["statusCode"] != float64(401) {
		t.Fatalf("signed in after the refusal: %v", r)
	}
	if n := events(); n[payment.AccountPasskeyCloneRefused] != 2 {
		t.Fatalf("security log = %v; want the two refusals", n)
	}
	// The counter recorded is the one it had: the copy moved nothing.
	var count int64
	if err := db.QueryRow(bg, `SELECT (credential->'authenticator'->>'signCount')::bigint FROM passkeys WHERE id = $1`, passkeyID).Scan(&count); err != nil || count != 1000000 {
		t.Fatalf("sign count after the refusals = %d %v; want 1000000", count, err)
	}
}
