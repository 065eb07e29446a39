package attack

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// signedIn signs an account in through the engine: its cookie.
func signedIn(t *testing.T, email, password string) (map[string]string, string) {
	t.Helper()
	in, err := eng.Identity().Login(context.Background(), email, password, service.Client{})
	if err != nil {
		t.Fatal(err)
	}
	secrets.add(in.Token)
	return map[string]string{"Cookie": api.SessionCookie + "=" + in.Token}, in.Token
}

func envelopeOf(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return env
}

// A member removed from a project does not come back as owner through an
// invitation minted while they were in, nor lets an accomplice in through
// one they sent.
func TestRemovedMemberCannotComeBackThroughAnInvitation(t *testing.T) {
	ctx := context.Background()
	victim := newTenant(t, "invitation victim")
	proj := "/api/v1/projects/" + victim.Project.ID
	for _, e := range []string{"insider@attack.test", "accomplice@attack.test"} {
		if _, err := eng.Identity().CreateUser(ctx, e, "a long enough password"); err != nil {
			t.Fatal(err)
		}
	}
	insider, _ := signedIn(t, "insider@attack.test", "a long enough password")
	accomplice, _ := signedIn(t, "accomplice@attack.test", "a long enough password")
	token := func(by map[string]string, email string) string {
		res, raw := call(t, "POST", proj+"/invitations", "", []byte(`{"email":"`+email+`","role":"owner"}`), by)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("invite %s: %d %s", email, res.StatusCode, raw)
		}
		tok := envelopeOf(t, raw)["data"].(map[string]any)["token"].(string)
		secrets.add(tok)
		return tok
	}
	accept := func(as map[string]string, tok string) int {
		res, _ := call(t, "POST", "/api/v1/invitations/accept", "", []byte(`{"token":"`+tok+`"}`), as)
		return res.StatusCode
	}
	if s := accept(insider, token(victim.cookie, "insider@attack.test")); s != http.StatusOK {
		t.Fatalf("the insider joins: %d", s)
	}
	comeback := token(victim.cookie, "insider@attack.test") // kept in reserve
	forAccomplice := token(insider, "accomplice@attack.test")
	var insiderID string
	if err := stack.Store.Pool().QueryRow(ctx, `SELECT id FROM users WHERE email = 'insider@attack.test'`).Scan(&insiderID); err != nil {
		t.Fatal(err)
	}
	if res, raw := call(t, "DELETE", proj+"/members/"+insiderID, "", nil, victim.cookie); res.StatusCode != http.StatusOK {
		t.Fatalf("remove the insider: %d %s", res.StatusCode, raw)
	}
	if s := accept(insider, comeback); s != http.StatusNotFound {
		t.Errorf("a removed member came back through an invitation minted before: %d", s)
	}
	if s := accept(accomplice, forAccomplice); s != http.StatusNotFound {
		t.Errorf("a removed member's accomplice joined through their invitation: %d", s)
	}
	tally.add("takeover: invitations", "removed member's invitations → 404")
}

// A session cookie stolen from a browser left open an hour ago adds no
// passkey, changes no password, makes no API key, sets no deposit key,
// invites no one, changes no payment setting, sends no event elsewhere,
// allows no application and approves no money out: each is 403
// REAUTHENTICATION_REQUIRED.
func TestStolenSessionCannotTakeTheAccount(t *testing.T) {
	ctx := context.Background()
	victim := newTenant(t, "stolen session victim")
	stolen, tok := signedIn(t, "stolen-session-victim@attack.test", "the owner's long password")
	if _, err := stack.Store.Pool().Exec(ctx, `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour' WHERE token_hash = $1`,
		payment.HashSecret(tok)); err != nil {
		t.Fatal(err)
	}
	proj := "/api/v1/projects/" + victim.Project.ID
	hook := str(mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/webhooks", victim.SandboxKey,
		[]byte(`{"url":"https://hooks.victim.test/paymentsd","enabledEvents":["*"]}`), nil))["id"])
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/auth/passkeys/registration-options", `{}`},
		{"POST", "/api/v1/auth/password", `{"currentPassword":"the owner's long password","newPassword":"the thief's new password"}`},
		{"POST", "/api/v1/auth/password", `{"newPassword":"the thief's new password","challengeId":"x","credential":{}}`},
		{"POST", proj + "/api-keys", `{}`},
		{"POST", proj + "/api-keys/" + victim.sandboxKeyID + "/roll", `{"gracePeriodSeconds":0}`},
		{"POST", proj + "/invitations", `{"email":"thief@attack.test","role":"owner"}`},
		{"PATCH", proj + "/members/" + victim.userID, `{"role":"developer"}`},
		{"POST", proj + "/oauth-clients", `{"name":"Thief","redirectUris":["https://thief.example/cb"],"confidential":true}`},
		// The payment policy, where the events go, an application's
		// lasting access, and money out.
		{"PATCH", proj, `{"underpaymentTolerancePercent":"50"}`},
		{"PATCH", proj, `{"name":"Renamed","completeOn":"confirmed"}`},
		{"POST", proj + "/webhooks", `{"url":"https://thief.example/hook","enabledEvents":["*"]}`},
		{"PATCH", proj + "/webhooks/" + hook, `{"url":"https://thief.example/hook"}`},
		{"DELETE", proj + "/webhooks/" + hook, ``},
		{"POST", proj + "/webhooks/" + hook + "/rotate-secret", `{}`},
		{"POST", "/api/v1/oauth/authorization?response_type=code&client_id=oc_x&redirect_uri=https://thief.example/cb",
			`{"decision":"allow","projectId":"` + victim.Project.ID + `","environment":"live"}`},
		{"POST", proj + "/payout-batches/" + payment.NewID(payment.PrefixPayoutBatch, time.Now()) + "/approve", `{}`},
		{"POST", proj + "/refunds/" + payment.NewID(payment.PrefixRefund, time.Now()) + "/approve", `{}`},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		res, raw := call(t, c.method, c.path, "", body, stolen)
		env := envelopeOf(t, raw)
		errObj, _ := env["error"].(map[string]any)
		code, _ := errObj["code"].(string)
		if res.StatusCode != http.StatusForbidden || code != api.ReauthenticationRequired {
			t.Errorf("%s %s with a stolen session: %d %s; want 403 %s", c.method, c.path, res.StatusCode, raw, api.ReauthenticationRequired)
		}
		tally.add("takeover: stale session", "sensitive action → 403 "+api.ReauthenticationRequired)
	}
	// The payment policy and the webhook endpoint are unchanged.
	if p, err := eng.Checkout().GetProject(ctx, payment.Principal{ProjectID: victim.Project.ID, UserID: victim.userID, Role: payment.RoleOwner}, victim.Project.ID); err != nil ||
		p.Name != victim.Project.Name || p.CompleteOn != victim.Project.CompleteOn || !p.UnderpaymentTolerancePercent.Equal(victim.Project.UnderpaymentTolerancePercent) {
		t.Errorf("the project after the stolen session's tries: %+v, %v", p, err)
	}
	if h := mustJSON(t, http.StatusOK)(call(t, "GET", proj+"/webhooks/"+hook, victim.SandboxKey, nil, nil)); h["url"] != "https://hooks.victim.test/paymentsd" {
		t.Errorf("the webhook endpoint after the stolen session's tries: %v", h)
	}
	// The password is unchanged and the victim's own session works.
	if _, err := eng.Identity().Login(ctx, "stolen-session-victim@attack.test", "the owner's long password", service.Client{}); err != nil {
		t.Fatalf("the owner's password changed: %v", err)
	}
}
