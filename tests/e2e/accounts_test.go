package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/payment"
)

// account is a signed-in user of the tests: its session cookie.
type account struct {
	email, password, cookie string
}

// call makes a request with the account's cookie (and headers).
func (a account) call(t *testing.T, base, method, path string, body any, headers ...string) response {
	t.Helper()
	h := map[string]string{"Cookie": api.SessionCookie + "=" + a.cookie}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	return do(t, base, request{method: method, path: path, body: body, headers: h})
}

// sessionCookieOf returns the session cookie a response sets.
func sessionCookieOf(t *testing.T, r response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == api.SessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie set: %v", api.SessionCookie, r.Header)
	return nil
}

var accounts int

func signup(t *testing.T, base string) account {
	t.Helper()
	accounts++
	a := account{email: fmt.Sprintf("merchant-%d-%d@example.com", time.Now().UnixNano(), accounts), password: "a long enough password"}
	r := do(t, base, request{method: http.MethodPost, path: "/api/v1/auth/signup", body: map[string]any{"email": a.email, "password": a.password}})
	mustStatus(t, r, http.StatusCreated)
	a.cookie = sessionCookieOf(t, r).Value
	return a
}

func login(t *testing.T, base string, a account) account {
	t.Helper()
	r := do(t, base, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": a.email, "password": a.password}})
	mustStatus(t, r, http.StatusOK)
	a.cookie = sessionCookieOf(t, r).Value
	return a
}

// A merchant signs up, gets a session cookie with the right attributes,
// makes a project and an API key without server access, and the cookie
// works on the project's routes in the environment the request names;
// a cross-site state change with the cookie is refused.
func TestSignUpMakeAProjectAndAKey(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	accounts++
	email := fmt.Sprintf("Owner-%d@Example.com", time.Now().UnixNano())
	r := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/signup", body: map[string]any{"email": email, "password": "a long enough password"}})
	mustStatus(t, r, http.StatusCreated)
	c := sessionCookieOf(t, r)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || !c.Secure || !strings.HasPrefix(c.Value, "svc_st_") ||
		len(strings.TrimPrefix(c.Value, "svc_st_")) != 64 || c.Expires.Before(time.Now().Add(6*24*time.Hour)) {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/, Secure (PUBLIC_URL is https), svc_st_ and 64 hex digits, a week's life", c)
	}
	owner := account{email: email, password: "a long enough password", cookie: c.Value}
	if again := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/signup",
		body: map[string]any{"email": strings.ToLower(email), "password": "another long password"}}); again.Status != http.StatusConflict {
		t.Fatalf("the same email in another case signed up again: %d", again.Status)
	}
	if weak := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/signup",
		body: map[string]any{"email": "not an email", "password": "short"}}); weak.Status != 422 || fmt.Sprint(weak.detailFields()) != "[email password]" {
		t.Fatalf("bad credentials: %d %v", weak.Status, weak.detailFields())
	}

	created := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "My shop"})
	mustStatus(t, created, http.StatusCreated)
	projectID := str(created.data()["id"])
	me := owner.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil).data()
	projects, _ := me["projects"].([]any)
	if len(projects) != 1 || projects[0].(map[string]any)["id"] != projectID || projects[0].(map[string]any)["role"] != "owner" {
		t.Fatalf("me = %v; want the new project, owned", me)
	}

	key := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil)
	mustStatus(t, key, http.StatusCreated)
	secret := str(key.data()["secret"])
	if !strings.HasPrefix(secret, "svc_test_") || key.data()["apiKey"].(map[string]any)["environment"] != "sandbox" {
		t.Fatalf("new key = %v; want a sandbox key (the default environment)", key.data())
	}
	mustStatus(t, get(t, ts.URL, "/api/v1/projects/"+projectID, secret), http.StatusOK)
	liveKey := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil, api.EnvironmentHeader, "live")
	if !strings.HasPrefix(str(liveKey.data()["secret"]), "svc_live_") {
		t.Fatalf("a key made in the live environment: %v", liveKey.data())
	}
	list := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/api-keys", nil)
	if keys := list.list(); len(keys) != 1 || keys[0].(map[string]any)["lastUsedAt"] == nil || strings.Contains(string(list.Raw), secret) {
		t.Fatalf("sandbox keys = %s; want the one key, its last use, never its secret", list.Raw)
	}

	// The cookie on the project's routes: sandbox by default, live on ask.
	plan := map[string]any{"title": "Cookie plan", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "any"}}}
	sandbox := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan)
	mustStatus(t, sandbox, http.StatusCreated)
	live := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan, api.EnvironmentHeader, "live")
	mustStatus(t, live, http.StatusCreated)
	if sandbox.data()["isLive"] != false || live.data()["isLive"] != true {
		t.Fatalf("plans made with the cookie: sandbox %v, live %v", sandbox.data()["isLive"], live.data()["isLive"])
	}
	if r := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/payment-plans", nil, api.EnvironmentHeader, "staging"); r.Status != 422 {
		t.Fatalf("an unknown environment: %d", r.Status)
	}
	// Audit: who did it.
	audit := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/audit-log?action=api_key.created", nil).list()
	if len(audit) != 1 || audit[0].(map[string]any)["actor"].(map[string]any)["type"] != "user" {
		t.Fatalf("audit of the key's creation = %v", audit)
	}

	// Cross-site: the browser says so (Sec-Fetch-Site) or the Origin is
	// not the host.
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
		r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan, h...)
		if r.Status != http.StatusForbidden || r.errorCode() != "FORBIDDEN" {
			t.Fatalf("cross-site POST with %v: %d %s", h, r.Status, r.Raw)
		}
	}
	if r := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/payment-plans", nil, "Sec-Fetch-Site", "cross-site"); r.Status != 200 {
		t.Fatalf("a cross-site read (safe): %d", r.Status)
	}
	// Another's project does not exist for this user.
	other := signup(t, ts.URL)
	if r := other.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID, nil); r.Status != 404 {
		t.Fatalf("a non-member reads the project: %d", r.Status)
	}
	// An API key never manages keys.
	if r := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/projects/" + projectID + "/api-keys", key: secret}); r.Status != 403 {
		t.Fatalf("an API key made a key: %d", r.Status)
	}
}

// Revoking a key refuses it at once; rolling keeps the old one for its
// grace period, and a roll without grace ends it at once.
func TestRevokeAndRollAnAPIKey(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Keys"}).data()["id"])
	newKey := func() (string, string) {
		r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil)
		mustStatus(t, r, http.StatusCreated)
		return str(r.data()["apiKey"].(map[string]any)["id"]), str(r.data()["secret"])
	}
	works := func(secret string) bool {
		return get(t, ts.URL, "/api/v1/projects/"+projectID, secret).Status == http.StatusOK
	}
	id, secret := newKey()
	if !works(secret) {
		t.Fatal("a new key does not work")
	}
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys/"+id+"/revoke", nil), http.StatusOK)
	if works(secret) {
		t.Fatal("a revoked key still works")
	}
	if r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys/"+id+"/revoke", nil); r.Status != 404 {
		t.Fatalf("revoking it again: %d", r.Status)
	}

	id, secret = newKey()
	rolled := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys/"+id+"/roll", map[string]any{"gracePeriodSeconds": 3600})
	mustStatus(t, rolled, http.StatusCreated)
	next := str(rolled.data()["secret"])
	if !works(secret) || !works(next) {
		t.Fatal("during the grace period both keys must work")
	}
	keys := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/api-keys", nil).list()
	if len(keys) != 2 || keys[0].(map[string]any)["expiresAt"] == nil || keys[1].(map[string]any)["expiresAt"] != nil {
		t.Fatalf("keys after the roll = %v; want the old one with its end, the new one without", keys)
	}
	nextID := str(rolled.data()["apiKey"].(map[string]any)["id"])
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys/"+nextID+"/roll", map[string]any{}), http.StatusCreated)
	if works(next) {
		t.Fatal("a key rolled without grace still works")
	}
	if r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys/"+nextID+"/roll", map[string]any{"gracePeriodSeconds": -1}); r.Status != 422 {
		t.Fatalf("a negative grace: %d", r.Status)
	}
}

// Each role does what docs/identity.md says, with the cookie: a viewer
// reads, a developer also writes but never manages keys, an owner does
// everything.
func TestRolesWithTheSessionCookie(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Roles"}).data()["id"])
	plan := map[string]any{"title": "Role plan", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "any"}}}
	// Each route family, in the order of want below: read records, write
	// records, manage keys, read members, invite members, change settings.
	families := func(member account) []int {
		return []int{
			member.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/payment-plans", nil).Status,
			member.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan).Status,
			member.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil).Status,
			member.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/members", nil).Status,
			member.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/invitations",
				map[string]any{"email": "someone@example.com", "role": "viewer"}).Status,
			member.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID, map[string]any{"name": "Renamed"}).Status,
		}
	}
	for _, tc := range []struct {
		role payment.Role
		want []int
	}{
		{payment.RoleViewer, []int{200, 403, 403, 200, 403, 403}},
		{payment.RoleDeveloper, []int{200, 201, 403, 200, 403, 403}},
		{payment.RoleOwner, []int{200, 201, 201, 200, 201, 200}},
	} {
		member := signup(t, ts.URL)
		me := member.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil).data()
		if err := st.Access().AddMember(context.Background(), projectID, str(me["user"].(map[string]any)["id"]), tc.role, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := families(member); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("%s: read, write, keys, members, invite, settings = %v; want %v", tc.role, got, tc.want)
		}
	}
	if got := families(signup(t, ts.URL)); fmt.Sprint(got) != "[404 404 404 404 404 404]" {
		t.Fatalf("a non-member: %v; want 404 everywhere", got)
	}
}

// Sign-in failures never say which part was wrong and are throttled per
// account; signing out, ending a session, signing out everywhere else and
// changing the password end sessions at once.
func TestSignInAndSessions(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	a := signup(t, ts.URL)
	wrong := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": a.email, "password": "not the password"}})
	unknown := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": "nobody-" + a.email, "password": a.password}})
	if wrong.Status != 401 || unknown.Status != 401 || wrong.Body["message"] != unknown.Body["message"] {
		t.Fatalf("wrong password %d %q, unknown email %d %q: want the same 401", wrong.Status, wrong.Body["message"], unknown.Status, unknown.Body["message"])
	}
	// Guessing is throttled (Moderate: 3 a minute here).
	guessed, _ := newAPI(t, apiOptions{limits: map[api.Tier]uint64{api.Moderate: 3}})
	for i := 0; ; i++ {
		r := do(t, guessed.URL, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": strings.ToUpper(a.email), "password": "guess " + fmt.Sprint(i)}})
		if r.Status == http.StatusTooManyRequests {
			if r.Header.Get("Retry-After") == "" || i != 3 {
				t.Fatalf("throttled after %d guesses, Retry-After %q; want after 3", i, r.Header.Get("Retry-After"))
			}
			break
		}
		if r.Status != 401 || i > 3 {
			t.Fatalf("guess %d: %d; guessing a password is not throttled", i, r.Status)
		}
	}

	b := login(t, ts.URL, a) // a second session (another device)
	sessions := a.call(t, ts.URL, http.MethodGet, "/api/v1/auth/sessions", nil).list()
	if len(sessions) != 2 {
		t.Fatalf("sessions = %v; want 2", sessions)
	}
	current := 0
	for _, s := range sessions {
		if s.(map[string]any)["current"] == true {
			current++
		}
	}
	if current != 1 {
		t.Fatalf("sessions = %v; want one marked current", sessions)
	}
	revoked := a.call(t, ts.URL, http.MethodPost, "/api/v1/auth/sessions/revoke-others", nil)
	if revoked.data()["revoked"] != float64(1) {
		t.Fatalf("sign out everywhere else = %s", revoked.Raw)
	}
	if r := b.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil); r.Status != 401 {
		t.Fatalf("the other session after sign-out everywhere else: %d", r.Status)
	}
	mustStatus(t, a.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil), 200)

	// Password change: the current one is required; every session ends and
	// this one gets a new cookie.
	c := login(t, ts.URL, a)
	if r := a.call(t, ts.URL, http.MethodPost, "/api/v1/auth/password", map[string]any{"currentPassword": "wrong", "newPassword": "a brand new password"}); r.Status != 422 {
		t.Fatalf("a change with the wrong current password: %d", r.Status)
	}
	changed := a.call(t, ts.URL, http.MethodPost, "/api/v1/auth/password", map[string]any{"currentPassword": a.password, "newPassword": "a brand new password"})
	mustStatus(t, changed, 200)
	fresh := account{email: a.email, password: "a brand new password", cookie: sessionCookieOf(t, changed).Value}
	for name, old := range map[string]account{"this session's old cookie": a, "another session": c} {
		if r := old.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil); r.Status != 401 {
			t.Fatalf("%s after the password change: %d", name, r.Status)
		}
	}
	mustStatus(t, fresh.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil), 200)
	if r := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": a.email, "password": a.password}}); r.Status != 401 {
		t.Fatalf("the old password still signs in: %d", r.Status)
	}

	// Ending a session by its ID, then signing out.
	d := login(t, ts.URL, fresh)
	var dID string
	for _, s := range d.call(t, ts.URL, http.MethodGet, "/api/v1/auth/sessions", nil).list() {
		if s.(map[string]any)["current"] == true {
			dID = str(s.(map[string]any)["id"])
		}
	}
	mustStatus(t, fresh.call(t, ts.URL, http.MethodDelete, "/api/v1/auth/sessions/"+dID, nil), 200)
	if r := d.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil); r.Status != 401 {
		t.Fatalf("an ended session: %d", r.Status)
	}
	out := fresh.call(t, ts.URL, http.MethodPost, "/api/v1/auth/logout", nil)
	mustStatus(t, out, 200)
	if c := sessionCookieOf(t, out); c.MaxAge >= 0 {
		t.Fatalf("logout's cookie %+v: want it cleared", c)
	}
	if r := fresh.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil); r.Status != 401 {
		t.Fatalf("after logout: %d", r.Status)
	}
	if r := get(t, ts.URL, "/api/v1/auth/me", ""); r.Status != 401 {
		t.Fatalf("no cookie: %d", r.Status)
	}
}

// An owner invites by email; the invitee, signed in with that email,
// accepts once and acts with the role; the owner changes the role and
// removes members, but never the last owner; members are not an API
// key's to see. Owners change the project's settings and deposit keys.
func TestMembersInvitationsAndSettings(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	owner := signup(t, ts.URL)
	projectID := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Team"}).data()["id"])
	invitee := signup(t, ts.URL)
	stranger := signup(t, ts.URL)

	inv := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/invitations", map[string]any{"email": strings.ToUpper(invitee.email), "role": "viewer"})
	mustStatus(t, inv, http.StatusCreated)
	token := str(inv.data()["token"])
	if r := stranger.call(t, ts.URL, http.MethodPost, "/api/v1/invitations/accept", map[string]any{"token": token}); r.Status != 404 {
		t.Fatalf("another account took the invitation: %d", r.Status)
	}
	accepted := invitee.call(t, ts.URL, http.MethodPost, "/api/v1/invitations/accept", map[string]any{"token": token})
	mustStatus(t, accepted, http.StatusOK)
	if accepted.data()["projectId"] != projectID || accepted.data()["role"] != "viewer" {
		t.Fatalf("accepted = %v", accepted.data())
	}
	if r := invitee.call(t, ts.URL, http.MethodPost, "/api/v1/invitations/accept", map[string]any{"token": token}); r.Status != 404 {
		t.Fatalf("an invitation accepted twice: %d", r.Status)
	}
	members := owner.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID+"/members", nil).list()
	if len(members) != 2 {
		t.Fatalf("members = %v", members)
	}
	inviteeID := ""
	for _, m := range members {
		if m.(map[string]any)["email"] == invitee.email {
			inviteeID = str(m.(map[string]any)["userId"])
		}
	}
	plan := map[string]any{"title": "Team plan", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "any"}}}
	if r := invitee.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan); r.Status != 403 {
		t.Fatalf("a viewer wrote: %d", r.Status)
	}
	if r := invitee.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID+"/members/"+inviteeID, map[string]any{"role": "owner"}); r.Status != 403 {
		t.Fatalf("a viewer made themselves owner: %d", r.Status)
	}
	mustStatus(t, owner.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID+"/members/"+inviteeID, map[string]any{"role": "developer"}), 200)
	teamPlan := invitee.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/payment-plans", plan)
	mustStatus(t, teamPlan, http.StatusCreated)

	// The last owner stays.
	ownerID := str(owner.call(t, ts.URL, http.MethodGet, "/api/v1/auth/me", nil).data()["user"].(map[string]any)["id"])
	if r := owner.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID+"/members/"+ownerID, map[string]any{"role": "viewer"}); r.Status != 409 {
		t.Fatalf("the last owner demoted: %d", r.Status)
	}
	if r := owner.call(t, ts.URL, http.MethodDelete, "/api/v1/projects/"+projectID+"/members/"+ownerID, nil); r.Status != 409 {
		t.Fatalf("the last owner removed: %d", r.Status)
	}
	// A member leaves; then the project is not theirs.
	mustStatus(t, invitee.call(t, ts.URL, http.MethodDelete, "/api/v1/projects/"+projectID+"/members/"+inviteeID, nil), 200)
	if r := invitee.call(t, ts.URL, http.MethodGet, "/api/v1/projects/"+projectID, nil); r.Status != 404 {
		t.Fatalf("a member who left still reads the project: %d", r.Status)
	}
	// API keys neither see nor manage members.
	key := str(owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil).data()["secret"])
	if r := get(t, ts.URL, "/api/v1/projects/"+projectID+"/members", key); r.Status != 403 {
		t.Fatalf("an API key lists members: %d", r.Status)
	}

	// Settings.
	updated := owner.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID, map[string]any{"name": "Team shop", "completeOn": "confirmed",
		"underpaymentTolerancePercent": "1.5", "latePaymentWindowSeconds": 3600})
	mustStatus(t, updated, 200)
	if u := updated.data(); u["name"] != "Team shop" || u["completeOn"] != "confirmed" || u["underpaymentTolerancePercent"] != "1.5" || u["latePaymentWindow"] != "1h0m0s" {
		t.Fatalf("updated project = %v", u)
	}
	// The project's own session lifetime (sessions need the sandbox
	// deposit key, set through the API too).
	_, sandboxXpub := walletOf(t, projectID, false)
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/deposit-key", map[string]any{"xpub": sandboxXpub}), 200)
	mustStatus(t, owner.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID, map[string]any{"sessionLifetimeSeconds": 120}), 200)
	opened := do(t, ts.URL, request{method: http.MethodPost, path: "/api/v1/checkout/sessions", body: map[string]any{"paymentPlanId": teamPlan.data()["id"]}})
	mustStatus(t, opened, http.StatusCreated)
	if expires, err := time.Parse(time.RFC3339Nano, str(opened.data()["expiresAt"])); err != nil || time.Until(expires) > 2*time.Minute || time.Until(expires) < time.Minute {
		t.Fatalf("a session of a project with a 2-minute lifetime expires at %v (%v)", opened.data()["expiresAt"], err)
	}
	if r := owner.call(t, ts.URL, http.MethodPatch, "/api/v1/projects/"+projectID, map[string]any{"completeOn": "pending", "underpaymentTolerancePercent": "80", "sessionLifetimeSeconds": 5}); r.Status != 422 ||
		fmt.Sprint(r.detailFields()) != "[completeOn underpaymentTolerancePercent sessionLifetimeSeconds]" {
		t.Fatalf("bad settings: %d %v", r.Status, r.detailFields())
	}
	if r := do(t, ts.URL, request{method: http.MethodPatch, path: "/api/v1/projects/" + projectID, key: key, body: map[string]any{"name": "By key"}}); r.Status != 403 {
		t.Fatalf("an API key changed the settings: %d", r.Status)
	}
	// The deposit key of each environment.
	_, xpub := walletOf(t, projectID, true)
	set := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/deposit-key", map[string]any{"xpub": xpub}, api.EnvironmentHeader, "live")
	mustStatus(t, set, 200)
	if set.data()["environment"] != "live" {
		t.Fatalf("deposit key set = %v", set.data())
	}
	if r := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/deposit-key", map[string]any{"xpub": "xprv-not-a-key"}); r.Status != 422 {
		t.Fatalf("a bad key: %d", r.Status)
	}
}
