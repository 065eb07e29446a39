package e2e

import (
	"context"
	"net/http"
	"net/netip"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/payment"
)

// ageSignIn makes an account's session look signed in an hour ago, as a
// session cookie stolen from a browser left open would be.
func ageSignIn(t *testing.T, a account) {
	t.Helper()
	tag, err := st.Pool().Exec(context.Background(), `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour' WHERE token_hash = $1`,
		payment.HashSecret(a.cookie))
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("age the session: %v (%d rows)", err, tag.RowsAffected())
	}
}

func userIDOf(t *testing.T, base string, a account) string {
	t.Helper()
	return str(a.call(t, base, http.MethodGet, "/api/v1/auth/me", nil).data()["user"].(map[string]any)["id"])
}

func invite(t *testing.T, base string, by account, projectID, email, role string) (id, token string) {
	t.Helper()
	r := by.call(t, base, http.MethodPost, "/api/v1/projects/"+projectID+"/invitations", map[string]any{"email": email, "role": role})
	mustStatus(t, r, http.StatusCreated)
	return str(r.data()["invitation"].(map[string]any)["id"]), str(r.data()["token"])
}

func accept(t *testing.T, base string, a account, token string) response {
	t.Helper()
	return a.call(t, base, http.MethodPost, "/api/v1/invitations/accept", map[string]any{"token": token})
}

// Invitations do not outlive the people they were meant for: owners list
// and revoke them; removing a member revokes the invitations they sent
// and those addressed to them; an invitation whose inviter is no longer
// an owner joins no one. A viewer may leave.
func TestInvitationsEndWithTheirPeople(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Invitations"}).data()["id"])
	base := "/api/v1/projects/" + projectID

	// A second owner joins, and mints invitations; the first owner mints
	// one more for the second owner (an owner invitation kept in reserve).
	second := signup(t, ts.URL)
	_, tok := invite(t, ts.URL, owner, projectID, second.email, "owner")
	mustStatus(t, accept(t, ts.URL, second, tok), http.StatusOK)
	secondID := userIDOf(t, ts.URL, second)
	friend := signup(t, ts.URL)
	_, friendToken := invite(t, ts.URL, second, projectID, friend.email, "owner")
	_, comeback := invite(t, ts.URL, owner, projectID, second.email, "owner")
	pending := owner.call(t, ts.URL, http.MethodGet, base+"/invitations", nil)
	mustStatus(t, pending, http.StatusOK)
	if n := len(pending.list()); n != 2 {
		t.Fatalf("pending invitations = %v; want 2", pending.list())
	}
	for _, inv := range pending.list() {
		if _, leaked := inv.(map[string]any)["token"]; leaked {
			t.Fatalf("the list shows a token: %v", inv)
		}
	}

	// The second owner is removed: both the invitation they sent and the
	// one addressed to them are revoked.
	mustStatus(t, owner.call(t, ts.URL, http.MethodDelete, base+"/members/"+secondID, nil), http.StatusOK)
	if r := accept(t, ts.URL, second, comeback); r.Status != http.StatusNotFound {
		t.Fatalf("a removed member came back through an invitation minted before: %d %s", r.Status, r.Raw)
	}
	if r := accept(t, ts.URL, friend, friendToken); r.Status != http.StatusNotFound {
		t.Fatalf("a removed member's invitation was accepted: %d %s", r.Status, r.Raw)
	}
	if n := len(owner.call(t, ts.URL, http.MethodGet, base+"/invitations", nil).list()); n != 0 {
		t.Fatalf("%d invitations still pending after the removal", n)
	}

	// An owner revokes a pending invitation; it joins no one.
	invited := signup(t, ts.URL)
	id, token := invite(t, ts.URL, owner, projectID, invited.email, "developer")
	revoked := owner.call(t, ts.URL, http.MethodDelete, base+"/invitations/"+id, nil)
	mustStatus(t, revoked, http.StatusOK)
	if r := accept(t, ts.URL, invited, token); r.Status != http.StatusNotFound {
		t.Fatalf("a revoked invitation was accepted: %d", r.Status)
	}
	if r := owner.call(t, ts.URL, http.MethodDelete, base+"/invitations/"+id, nil); r.Status != http.StatusNotFound {
		t.Fatalf("an invitation revoked twice: %d", r.Status)
	}

	// An inviter demoted before the invitee answers: the invitation no
	// longer joins.
	third := signup(t, ts.URL)
	_, tok = invite(t, ts.URL, owner, projectID, third.email, "owner")
	mustStatus(t, accept(t, ts.URL, third, tok), http.StatusOK)
	late := signup(t, ts.URL)
	_, lateToken := invite(t, ts.URL, third, projectID, late.email, "owner")
	mustStatus(t, owner.call(t, ts.URL, http.MethodPatch, base+"/members/"+userIDOf(t, ts.URL, third), map[string]any{"role": "developer"}), http.StatusOK)
	if r := accept(t, ts.URL, late, lateToken); r.Status != http.StatusNotFound {
		t.Fatalf("an invitation of an inviter no longer owner was accepted: %d", r.Status)
	}

	// Only owners list invitations; a viewer may leave.
	viewer := signup(t, ts.URL)
	_, tok = invite(t, ts.URL, owner, projectID, viewer.email, "viewer")
	mustStatus(t, accept(t, ts.URL, viewer, tok), http.StatusOK)
	if r := viewer.call(t, ts.URL, http.MethodGet, base+"/invitations", nil); r.Status != http.StatusForbidden {
		t.Fatalf("a viewer lists invitations: %d", r.Status)
	}
	if r := viewer.call(t, ts.URL, http.MethodDelete, base+"/members/"+userIDOf(t, ts.URL, viewer), nil); r.Status != http.StatusOK {
		t.Fatalf("a viewer cannot leave: %d %s", r.Status, r.Raw)
	}

	// Each revocation is in the audit log.
	log := owner.call(t, ts.URL, http.MethodGet, base+"/audit-log?action=invitation.revoked", nil)
	mustStatus(t, log, http.StatusOK)
	if n := len(log.list()); n != 3 {
		t.Fatalf("invitation.revoked entries = %d; want 3 (two at the removal, one by hand)", n)
	}
}

// A stolen session is not a taken account: sensitive actions need a fresh
// sign-in, answered 403 REAUTHENTICATION_REQUIRED until the password (or
// a passkey) is confirmed again; the password change takes the current
// password whenever the account has one.
func TestSensitiveActionsNeedAFreshSignIn(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Sudo"}).data()["id"])
	base := "/api/v1/projects/" + projectID
	other := signup(t, ts.URL)
	otherID := userIDOf(t, ts.URL, other)
	_, tok := invite(t, ts.URL, owner, projectID, other.email, "viewer")
	mustStatus(t, accept(t, ts.URL, other, tok), http.StatusOK)
	keyID := str(owner.call(t, ts.URL, http.MethodPost, base+"/api-keys", nil).data()["apiKey"].(map[string]any)["id"])

	ageSignIn(t, owner) // the cookie, stolen
	_, xpub := walletOf(t, projectID, false)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/api/v1/auth/passkeys/registration-options", nil},
		{http.MethodPost, "/api/v1/auth/password", map[string]any{"currentPassword": owner.password, "newPassword": "the thief's password"}},
		{http.MethodPost, base + "/api-keys", nil},
		{http.MethodPost, base + "/api-keys/" + keyID + "/roll", map[string]any{"gracePeriodSeconds": 0}},
		{http.MethodPost, base + "/deposit-key", map[string]any{"xpub": xpub}},
		{http.MethodPost, base + "/bitcoin-deposit-key", map[string]any{"xpub": testnetAccount(t, projectID+"/bitcoin")}},
		{http.MethodPost, base + "/invitations", map[string]any{"email": "thief@example.com", "role": "owner"}},
		{http.MethodPatch, base + "/members/" + otherID, map[string]any{"role": "owner"}},
		{http.MethodDelete, base + "/members/" + otherID, nil},
		{http.MethodPost, base + "/oauth-clients", map[string]any{"name": "Thief", "redirectUris": []any{"https://thief.example/cb"}, "confidential": true}},
	} {
		r := owner.call(t, ts.URL, c.method, c.path, c.body)
		if r.Status != http.StatusForbidden || r.errorCode() != api.ReauthenticationRequired {
			t.Fatalf("%s %s with an old sign-in: %d %s; want 403 %s", c.method, c.path, r.Status, r.Raw, api.ReauthenticationRequired)
		}
	}
	// Everything else still works.
	mustStatus(t, owner.call(t, ts.URL, http.MethodGet, base+"/api-keys", nil), http.StatusOK)
	mustStatus(t, owner.call(t, ts.URL, http.MethodPatch, base, map[string]any{"name": "Sudo shop"}), http.StatusOK)

	// The first try of a key creation under an Idempotency-Key is refused;
	// re-authenticating, then retrying with the same key, runs it.
	h := []string{"Idempotency-Key", "sudo-" + projectID}
	if r := owner.call(t, ts.URL, http.MethodPost, base+"/api-keys", nil, h...); r.Status != http.StatusForbidden {
		t.Fatalf("key creation with an old sign-in: %d", r.Status)
	}
	if r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/auth/reauthenticate", map[string]any{"password": "not it at all"}); r.Status != 422 {
		t.Fatalf("re-authentication with a wrong password: %d %s", r.Status, r.Raw)
	}
	if r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/auth/reauthenticate", map[string]any{}); r.Status != 422 {
		t.Fatalf("re-authentication with nothing: %d %s", r.Status, r.Raw)
	}
	re := owner.call(t, ts.URL, http.MethodPost, "/api/v1/auth/reauthenticate", map[string]any{"password": owner.password})
	mustStatus(t, re, http.StatusOK)
	created := owner.call(t, ts.URL, http.MethodPost, base+"/api-keys", nil, h...)
	mustStatus(t, created, http.StatusCreated)
	if created.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry after re-authenticating replayed the refusal")
	}
	// An API key never reaches re-authentication or the sensitive routes.
	secret := str(created.data()["secret"])
	if r := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/reauthenticate", key: secret, body: map[string]any{"password": owner.password}}); r.Status != 401 {
		t.Fatalf("an API key re-authenticates: %d", r.Status)
	}
	if r := do(t, ts.URL, request{method: http.MethodPost, path: base + "/api-keys", key: secret}); r.Status != 403 {
		t.Fatalf("an API key creates a key: %d", r.Status)
	}

	// The password change: the current password, never a passkey's answer
	// in its place, for an account with a password.
	if r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/auth/password", map[string]any{"newPassword": "the thief's password",
		"challengeId": "chl_whatever", "credential": map[string]any{"id": "x"}}); r.Status != 422 || r.detailFields()[0] != "currentPassword" {
		t.Fatalf("a password change without the current password: %d %s", r.Status, r.Raw)
	}
	changed := owner.call(t, ts.URL, http.MethodPost, "/api/v1/auth/password", map[string]any{"currentPassword": owner.password, "newPassword": "a new long password"})
	mustStatus(t, changed, http.StatusOK)
	owner.cookie = sessionCookieOf(t, changed).Value

	// The account's security log has the re-authentication and the change.
	log := owner.call(t, ts.URL, http.MethodGet, "/api/v1/auth/security-log", nil)
	mustStatus(t, log, http.StatusOK)
	actions := map[string]bool{}
	for _, e := range log.list() {
		actions[str(e.(map[string]any)["action"])] = true
	}
	if !actions[payment.AccountReauthenticated] || !actions[payment.AccountPasswordChanged] {
		t.Fatalf("security log = %v", log.list())
	}
	// And the project's audit log the key created after re-authenticating.
	if n := len(owner.call(t, ts.URL, http.MethodGet, base+"/audit-log?action=api_key.created", nil).list()); n != 2 {
		t.Fatalf("api_key.created entries = %d; want 2", n)
	}
}

// Ten wrong passwords from one address do not lock the account's holder
// out: the right password from another address signs in (slowed, since
// the account is under attack), while the guessing address is refused.
func TestSignInCannotBeLockedOut(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{limits: map[api.Tier]uint64{api.Moderate: 10}, proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	a := signup(t, ts.URL)
	from := func(ip, password string) response {
		return do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": a.email, "password": password},
			headers: map[string]string{"X-Forwarded-For": ip}})
	}
	for i := range 10 {
		if r := from("203.0.113.1", "guess number "+string(rune('a'+i))); r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, r.Status)
		}
	}
	if r := from("203.0.113.1", a.password); r.Status != http.StatusTooManyRequests {
		t.Fatalf("the guessing address, right password: %d; want 429", r.Status)
	}
	if r := from("198.51.100.7", a.password); r.Status != http.StatusOK {
		t.Fatalf("the holder of the password from another address: %d %s; want 200", r.Status, r.Raw)
	}
	// A second guessing address gets no more than one guess while the
	// account is under attack.
	if r := from("192.0.2.9", "another guess"); r.Status != http.StatusUnauthorized {
		t.Fatalf("a new address's first guess: %d", r.Status)
	}
	if r := from("192.0.2.9", "a second guess"); r.Status != http.StatusTooManyRequests {
		t.Fatalf("a new address's second guess on an account under attack: %d; want 429", r.Status)
	}
}

// An Idempotency-Key reused with the cookie in the other environment runs
// there: it never answers with the first environment's record.
func TestIdempotencyKeyPerEnvironment(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Environments"}).data()["id"])
	plan := map[string]any{"title": "Both", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "any"}}}
	key := "same-key-" + projectID
	sandbox := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan, "Idempotency-Key", key)
	mustStatus(t, sandbox, http.StatusCreated)
	live := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan, "Idempotency-Key", key, api.EnvironmentHeader, "live")
	mustStatus(t, live, http.StatusCreated)
	if live.Header.Get("Idempotent-Replayed") != "" || live.data()["id"] == sandbox.data()["id"] || live.data()["isLive"] != true {
		t.Fatalf("live answered with the sandbox record: %s", live.Raw)
	}
	again := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan, "Idempotency-Key", key)
	if again.Header.Get("Idempotent-Replayed") != "true" || again.data()["id"] != sandbox.data()["id"] {
		t.Fatalf("sandbox replay: %s", again.Raw)
	}
}

// An audit entry is committed with its change, or neither is: a change
// whose entry the database refuses is not made.
func TestAuditEntryAndItsChangeTogether(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Atomic"}).data()["id"])
	ctx := context.Background()
	refuseAuditEntries(t, projectID)
	if r := owner.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID, map[string]any{"name": "Renamed"}); r.Status != 500 {
		t.Fatalf("a change whose audit entry is refused: %d %s", r.Status, r.Raw)
	}
	if r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil); r.Status != 500 {
		t.Fatalf("a key whose audit entry is refused: %d %s", r.Status, r.Raw)
	}
	if name := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID, nil).data()["name"]; name != "Atomic" {
		t.Fatalf("the project was renamed without its audit entry: %v", name)
	}
	if n := len(owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/api-keys", nil).list()); n != 0 {
		t.Fatalf("%d API keys made without their audit entries", n)
	}

	// A plan, a webhook endpoint, a deposit key (EVM and Bitcoin), a
	// recipient's claim, an OAuth application: each refused with its
	// entry, none made.
	base := "/api/v1/projects/" + projectID
	_, xpub := walletOf(t, projectID, false)
	recipient, _ := crypto.GenerateKey()
	for _, c := range []struct {
		what, path string
		body       any
	}{
		{"a plan", base + "/payment-plans", map[string]any{"title": "Unrecorded", "amountUsd": "5",
			"acceptedAssetPolicies": []any{map[string]any{"policyType": "any"}}}},
		{"a webhook endpoint", base + "/webhooks", map[string]any{"url": newReceiver(t).URL, "enabledEvents": []string{"*"}}},
		{"a deposit key", base + "/deposit-key", map[string]any{"xpub": xpub}},
		{"a Bitcoin deposit key", base + "/bitcoin-deposit-key", map[string]any{"xpub": testnetAccount(t, projectID+"/bitcoin")}},
		{"a recipient's claim", base + "/recipients", map[string]any{"address": crypto.PubkeyToAddress(recipient.PublicKey).Hex()}},
		{"an OAuth application", base + "/oauth-clients", map[string]any{"name": "Unrecorded", "redirectUris": []any{"https://app.example/cb"}, "confidential": true}},
	} {
		if r := owner.call(t, ts.URL, http.MethodPost, c.path, c.body); r.Status != 500 {
			t.Fatalf("%s whose audit entry is refused: %d %s", c.what, r.Status, r.Raw)
		}
	}
	for table, q := range map[string]string{
		"payment_plans":          `SELECT count(*) FROM payment_plans WHERE project_id = $1`,
		"webhook_endpoints":      `SELECT count(*) FROM webhook_endpoints WHERE project_id = $1`,
		"project_deposit_keys":   `SELECT count(*) FROM project_deposit_keys WHERE project_id = $1`,
		"project_bitcoin_keys":   `SELECT count(*) FROM project_bitcoin_keys WHERE project_id = $1`,
		"deposit_key_identities": `SELECT count(*) FROM deposit_key_identities WHERE project_id = $1`,
		"recipients":             `SELECT count(*) FROM recipients WHERE project_id = $1`,
		"events":                 `SELECT count(*) FROM events WHERE project_id = $1`,
		"oauth_clients":          `SELECT count(*) FROM oauth_clients WHERE project_id = $1`,
	} {
		var n int
		if err := st.Pool().QueryRow(ctx, q, projectID).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d rows of %s made without their audit entries (%v)", n, table, err)
		}
	}
}

// refuseAuditEntries makes the database refuse the project's audit entries
// until the returned function (or the test's end) stops it.
func refuseAuditEntries(t *testing.T, projectID string) (stop func()) {
	t.Helper()
	ctx := context.Background()
	fn, trigger := "refuse_audit_"+projectID, "refuse_audit_"+projectID
	for _, q := range []string{
		`CREATE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
			IF NEW.project_id = '` + projectID + `' THEN RAISE EXCEPTION 'audit refused'; END IF; RETURN NEW; END $$`,
		`CREATE TRIGGER ` + trigger + ` BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION ` + fn + `()`,
	} {
		if _, err := st.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	stop = func() {
		_, _ = st.Pool().Exec(ctx, `DROP TRIGGER IF EXISTS `+trigger+` ON audit_log`)
		_, _ = st.Pool().Exec(ctx, `DROP FUNCTION IF EXISTS `+fn+`()`)
	}
	t.Cleanup(stop)
	return stop
}

// A change a running session's workflow records (here a cancel) commits
// with its audit entry too: refused with it, then made with exactly one.
func TestARunningSessionsChangeAndItsAuditEntryTogether(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	base := "/api/v1/projects/" + keys.id
	call := func(method, path string, body any) response {
		return do(t, ts.URL, request{method: method, path: path, key: keys.key, body: body})
	}
	plan := call("POST", base+"/payment-plans", map[string]any{"title": "Canceled once", "amountUsd": "5"})
	mustStatus(t, plan, http.StatusCreated)
	session := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": str(plan.data()["id"])})
	mustStatus(t, session, http.StatusCreated)
	id := str(session.data()["id"])

	stop := refuseAuditEntries(t, keys.id)
	if r := call("POST", base+"/checkout-sessions/"+id+"/cancel", map[string]any{}); r.Status != http.StatusInternalServerError {
		t.Fatalf("a cancel whose audit entry is refused: %d %s", r.Status, r.Raw)
	}
	if s := call("GET", base+"/checkout-sessions/"+id, nil); str(s.data()["status"]) != "open" {
		t.Fatalf("the session changed without its audit entry: %s", s.Raw)
	}
	stop()
	mustStatus(t, call("POST", base+"/checkout-sessions/"+id+"/cancel", map[string]any{}), http.StatusOK)
	if s := call("GET", base+"/checkout-sessions/"+id, nil); str(s.data()["status"]) != "canceled" {
		t.Fatalf("after the refusal ended, the cancel = %s", s.Raw)
	}
	log := call("GET", base+"/audit-log?action=checkout_session.canceled", nil)
	if n := len(log.list()); n != 1 {
		t.Fatalf("%d checkout_session.canceled entries; want 1: %s", n, log.Raw)
	}
}
