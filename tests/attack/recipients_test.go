package attack

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// secondShape starts an API of the second shape (plans paid to a shared
// recipient) on the suite's engine, for the test.
func secondShape(t *testing.T) string {
	t.Helper()
	limits := map[api.Tier]uint64{}
	for tier := range api.DefaultLimits {
		limits[tier] = 1_000_000
	}
	s, err := api.New(eng, api.Config{Limits: limits, PublicURL: "https://pay.example.test", Shape: api.ShapeSecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv.URL
}

// callAt is call on another API's URL; body is marshalled to JSON.
func callAt(t *testing.T, url, method, path, key string, body any, headers map[string]string) (int, []byte) {
	t.Helper()
	raw := []byte{}
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	res, out := send(t, url, method, path, key, raw, headers)
	return res.StatusCode, out
}

// dataOf is the envelope's data of a response with the wanted status.
func dataOf(t *testing.T, what string, want int) func(int, []byte) map[string]any {
	return func(status int, raw []byte) map[string]any {
		t.Helper()
		if status != want {
			t.Fatalf("%s: %d %s; want %d", what, status, raw, want)
		}
		var env struct{ Data map[string]any }
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatalf("%s: %v %s", what, err, raw)
		}
		return env.Data
	}
}

// detailFields are the fields a 422 names.
func detailFields(raw []byte) []string {
	var env struct {
		Error struct{ Details []struct{ Field string } }
	}
	_ = json.Unmarshal(raw, &env)
	var out []string
	for _, d := range env.Error.Details {
		out = append(out, d.Field)
	}
	return out
}

// claimAndVerify makes owner's sandbox the verified owner of key's
// address through the API, with the owner's session.
func claimAndVerify(t *testing.T, owner tenant, key *ecdsa.PrivateKey) string {
	t.Helper()
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	path := "/api/v1/projects/" + owner.Project.ID + "/recipients"
	claim := mustJSON(t, http.StatusCreated)(call(t, "POST", path, "", []byte(`{"address":"`+addr+`"}`), owner.cookie))
	sig := stacktest.PersonalSign(t, key, str(claim["challenge"]))
	mustJSON(t, http.StatusOK)(call(t, "POST", path+"/"+addr+"/verify", "", []byte(`{"signature":"`+sig+`"}`), owner.cookie))
	return addr
}

// A project verifies an address; another project that claimed it too
// (anyone may claim an unowned address) then verifies with a valid
// signature of its own challenge, made by the address's key: 409, and a
// new claim is a 409 too. The other project cannot read, remove or
// verify the owner's recipient (404), nor make a plan paying it (422).
func TestAnotherProjectCannotTakeAVerifiedRecipient(t *testing.T) {
	owner, thief := newTenant(t, "Recipient owner"), newTenant(t, "Recipient thief")
	second := secondShape(t)
	key, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	thiefPath := "/api/v1/projects/" + thief.Project.ID + "/recipients"
	ownerPath := "/api/v1/projects/" + owner.Project.ID + "/recipients"
	thiefClaim := mustJSON(t, http.StatusCreated)(call(t, "POST", thiefPath, "", []byte(`{"address":"`+addr+`"}`), thief.cookie))
	claimAndVerify(t, owner, key)

	res, raw := call(t, "POST", thiefPath+"/"+addr+"/verify", "", []byte(`{"signature":"`+stacktest.PersonalSign(t, key, str(thiefClaim["challenge"]))+`"}`), thief.cookie)
	if res.StatusCode != http.StatusConflict {
		t.Errorf("another project verifies an owned recipient with a valid signature of its own challenge: %d %s; want 409", res.StatusCode, raw)
	}
	assertEnvelopeError(t, "verify an owned recipient", raw)
	tally.add("tenancy: recipients", fmt.Sprintf("another project verifies an owned address, its own challenge validly signed → %d", res.StatusCode))
	for _, a := range []string{addr, strings.ToLower(addr), "0x" + strings.ToUpper(addr[2:])} {
		res, raw = call(t, "POST", thiefPath, "", []byte(`{"address":"`+a+`"}`), thief.cookie)
		if res.StatusCode != http.StatusConflict {
			t.Errorf("another project claims an owned recipient (%s): %d %s; want 409", a, res.StatusCode, raw)
		}
		assertEnvelopeError(t, "claim an owned recipient", raw)
		tally.add("tenancy: recipients", fmt.Sprintf("another project claims an owned address → %d", res.StatusCode))
	}

	// The owner's recipient is not the thief's to read or change.
	for _, c := range []struct{ method, path, body string }{
		{"GET", ownerPath, ""},
		{"GET", ownerPath + "/" + addr, ""},
		{"POST", ownerPath, `{"address":"` + addr + `"}`},
		{"POST", ownerPath + "/" + addr + "/verify", `{"signature":"0x00"}`},
		{"DELETE", ownerPath + "/" + addr, ""},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		for who, cred := range map[string]struct {
			key string
			h   map[string]string
		}{"another project's key": {thief.SandboxKey, nil}, "another project's owner": {"", thief.cookie}} {
			if c.method != "GET" && cred.key != "" {
				continue // keys change no recipient, of any project
			}
			res, raw := call(t, c.method, c.path, cred.key, body, cred.h)
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s by %s: %d %s; want 404", c.method, c.path, who, res.StatusCode, raw)
			}
			assertEnvelopeError(t, c.method+" "+c.path, raw)
			answer, _, _ := strings.Cut(string(raw), `"meta"`) // the meta echoes the path
			if strings.Contains(strings.ToLower(answer), strings.ToLower(addr[2:])) {
				t.Errorf("%s %s by %s names the recipient: %s", c.method, c.path, who, raw)
			}
			tally.add("tenancy: recipients", fmt.Sprintf("%s on another project's recipient, by %s → %d", c.method, who, res.StatusCode))
		}
	}
	// The thief's own list holds its pending claim only, never verified.
	for _, v := range listOf(t)(call(t, "GET", thiefPath, thief.SandboxKey, nil, nil)) {
		if v["status"] != "pending" {
			t.Errorf("the thief's recipients: %v", v)
		}
	}
	// And it cannot make a plan paying the address.
	status, raw := callAt(t, second, "POST", "/api/v1/projects/"+thief.Project.ID+"/payment-plans", thief.SandboxKey, planTo(addr, "1"), nil)
	if status != http.StatusUnprocessableEntity || !slices.Contains(detailFields(raw), "recipientAddress") {
		t.Errorf("another project's plan paying an owned recipient: %d %s; want 422 on recipientAddress", status, raw)
	}
	tally.add("tenancy: recipients", fmt.Sprintf("another project's plan paying an owned recipient → %d", status))
	// The owner still owns it.
	got := mustJSON(t, http.StatusOK)(call(t, "GET", ownerPath+"/"+addr, owner.SandboxKey, nil, nil))
	if got["status"] != "verified" {
		t.Fatalf("the owner's recipient: %v", got)
	}
}

func listOf(t *testing.T) func(*http.Response, []byte) []map[string]any {
	return func(res *http.Response, raw []byte) []map[string]any {
		t.Helper()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("a list: %d %s", res.StatusCode, raw)
		}
		var env struct{ Data []map[string]any }
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		return env.Data
	}
}

// planTo is a second-shape plan paying amount of the dev chain's USDC to
// recipient.
func planTo(recipient, amount string) map[string]any {
	return map[string]any{"name": "Shared recipient", "recipientAddress": recipient,
		"paymentOptions": []any{map[string]any{"networkId": "devnet", "tokenAddress": stack.Chain.Token.Hex(), "amount": amount}}}
}

// usdcAmount is a second-shape session's amount in the dev chain's USDC.
func usdcAmount(t *testing.T, s map[string]any) string {
	t.Helper()
	opts, _ := s["paymentOptions"].([]any)
	for _, o := range opts {
		if m, _ := o.(map[string]any); strings.EqualFold(str(m["tokenAddress"]), stack.Chain.Token.Hex()) {
			return str(m["amountBaseUnits"])
		}
	}
	t.Fatalf("no USDC option: %v", s)
	return ""
}

// Another project cannot hold amounts on a recipient it does not own: a
// plan of its that pays the owner's recipient (made before the rule, set
// here in the database) opens no session, so the owner's customers are
// asked exactly the plan's amount. A transfer to the owner's recipient that
// no hold matches is the owner's alone: the other project neither lists
// it nor reads nor assigns it.
func TestAnotherProjectCannotHoldOrSeeTheOwnersTransfers(t *testing.T) {
	ctx := context.Background()
	owner, thief := newTenant(t, "Holds owner"), newTenant(t, "Holds thief")
	second := secondShape(t)
	key, _ := crypto.GenerateKey()
	addr := claimAndVerify(t, owner, key)
	thiefKey, _ := crypto.GenerateKey()
	thiefAddr := claimAndVerify(t, thief, thiefKey)

	ownerPlan := dataOf(t, "the owner's plan", http.StatusCreated)(callAt(t, second, "POST", "/api/v1/projects/"+owner.Project.ID+"/payment-plans", owner.SandboxKey, planTo(addr, "3"), nil))
	thiefPlan := dataOf(t, "the thief's plan", http.StatusCreated)(callAt(t, second, "POST", "/api/v1/projects/"+thief.Project.ID+"/payment-plans", thief.SandboxKey, planTo(thiefAddr, "3"), nil))
	if _, err := stack.Store.Pool().Exec(ctx, `UPDATE payment_plans SET recipient_address = $2 WHERE id = $1`, str(thiefPlan["id"]), strings.ToLower(addr)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		status, raw := callAt(t, second, "POST", "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": thiefPlan["id"]}, nil)
		if status != http.StatusUnprocessableEntity || !slices.Contains(detailFields(raw), "paymentPlanId") {
			t.Errorf("session %d of another project's plan paying the owner's recipient: %d %s; want 422", i, status, raw)
		}
		tally.add("tenancy: recipients", fmt.Sprintf("a session holding an amount on another project's recipient → %d", status))
	}
	var held int
	if err := stack.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM amount_reservations WHERE project_id = $1 AND recipient = $2`,
		thief.Project.ID, strings.ToLower(addr)).Scan(&held); err != nil || held != 0 {
		t.Fatalf("the thief's holds on the owner's recipient: %d, %v", held, err)
	}
	// The owner's customers: the plan's amount, then one base unit more
	// for the second open session (its own hold only).
	a := dataOf(t, "the owner's first session", http.StatusCreated)(callAt(t, second, "POST", "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": ownerPlan["id"]}, nil))
	b := dataOf(t, "the owner's second session", http.StatusCreated)(callAt(t, second, "POST", "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": ownerPlan["id"]}, nil))
	secrets.add(str(a["token"]), str(b["token"]))
	if usdcAmount(t, a) != "3000000" || usdcAmount(t, b) != "3000001" {
		t.Fatalf("the owner's sessions ask %s and %s; want 3000000 and 3000001", usdcAmount(t, a), usdcAmount(t, b))
	}
	tally.add("tenancy: recipients", "the owner's sessions after another project's attempts → the plan's amount")

	// A transfer nobody holds, to the owner's recipient.
	hash, err := stack.Chain.TransferToken(ctx, stack.Chain.Accounts[len(stack.Chain.Accounts)-1], common.HexToAddress(addr), big.NewInt(2_999_000))
	if err != nil {
		t.Fatal(err)
	}
	txs := "/api/v1/projects/" + owner.Project.ID + "/transactions"
	var stray map[string]any
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		status, raw := callAt(t, second, "GET", txs+"?unexpected=true", owner.SandboxKey, nil, nil)
		var env struct{ Data []map[string]any }
		_ = json.Unmarshal(raw, &env)
		for _, tx := range env.Data {
			if tx["txHash"] == hash.Hex() {
				stray = tx
			}
		}
		return stray != nil, fmt.Sprintf("the unmatched transfer is not the owner's: %d %s", status, raw)
	})
	if stray["checkoutSessionId"] != nil {
		t.Fatalf("the unmatched transfer: %v", stray)
	}
	txID := str(stray["id"])
	thiefTxs := "/api/v1/projects/" + thief.Project.ID + "/transactions"
	status, raw := callAt(t, second, "GET", thiefTxs+"?unexpected=true", thief.SandboxKey, nil, nil)
	if status != http.StatusOK || strings.Contains(string(raw), hash.Hex()) || strings.Contains(string(raw), txID) {
		t.Errorf("the other project's unmatched transfers: %d %s", status, raw)
	}
	tally.add("tenancy: recipients", fmt.Sprintf("another project lists its unmatched transfers → %d without the owner's", status))
	thiefSession := dataOf(t, "the thief's own session", http.StatusCreated)(callAt(t, second, "POST", "/api/v1/checkout/sessions", "",
		map[string]any{"paymentPlanId": dataOf(t, "the thief's second plan", http.StatusCreated)(callAt(t, second, "POST", "/api/v1/projects/"+thief.Project.ID+"/payment-plans",
			thief.SandboxKey, planTo(thiefAddr, "2.999"), nil))["id"]}, nil))
	secrets.add(str(thiefSession["token"]))
	for _, c := range []struct {
		what, method, path string
		body               any
	}{
		{"reads the owner's transactions", "GET", txs, nil},
		{"reads the unmatched transfer", "GET", txs + "/" + txID, nil},
		{"assigns it in the owner's project", "POST", txs + "/" + txID + "/assign", map[string]any{"checkoutSessionId": thiefSession["id"]}},
		{"assigns it to its own session", "POST", thiefTxs + "/" + txID + "/assign", map[string]any{"checkoutSessionId": thiefSession["id"]}},
		{"reads it in its own project", "GET", thiefTxs + "/" + txID, nil},
	} {
		for who, cred := range map[string]struct {
			key string
			h   map[string]string
		}{"its key": {thief.SandboxKey, nil}, "its owner": {"", thief.cookie}} {
			status, raw := callAt(t, second, c.method, c.path, cred.key, c.body, cred.h)
			if status != http.StatusNotFound {
				t.Errorf("another project %s (%s): %d %s; want 404", c.what, who, status, raw)
			}
			assertEnvelopeError(t, c.what, raw)
			tally.add("tenancy: recipients", fmt.Sprintf("another project %s, by %s → %d", c.what, who, status))
		}
	}
	// Still the owner's, unassigned.
	got := dataOf(t, "the owner reads it", http.StatusOK)(callAt(t, second, "GET", txs+"/"+txID, owner.SandboxKey, nil, nil))
	if got["checkoutSessionId"] != nil {
		t.Fatalf("the unmatched transfer was assigned: %v", got)
	}
}

// A session's deposit address (derived from its project's deposit key)
// cannot be claimed as a recipient, by another project or its own: 422
// on address.
func TestADepositAddressCannotBeClaimed(t *testing.T) {
	victim, thief := newTenant(t, "Deposit address victim"), newTenant(t, "Deposit address thief")
	plan := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/projects/"+victim.Project.ID+"/payment-plans", victim.SandboxKey,
		[]byte(`{"title":"Deposit","amountUsd":"10"}`), nil))
	s := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "", []byte(`{"paymentPlanId":"`+str(plan["id"])+`"}`), nil))
	secrets.add(str(s["token"]))
	deposit := str(s["depositAddress"])
	for who, p := range map[string]tenant{"another project": thief, "its own project": victim} {
		for _, live := range []bool{false, true} {
			res, raw := call(t, "POST", "/api/v1/projects/"+p.Project.ID+"/recipients", "", []byte(`{"address":"`+strings.ToLower(deposit)+`"}`), envHeaders(p, live))
			var fields []string
			if res.StatusCode == http.StatusUnprocessableEntity {
				fields = detailFields(raw)
			}
			if !slices.Contains(fields, "address") {
				t.Errorf("%s claims a session's deposit address (%s): %d %s; want 422 on address", who, envOf(live), res.StatusCode, raw)
			}
			assertEnvelopeError(t, "claim a deposit address", raw)
			tally.add("tenancy: recipients", fmt.Sprintf("%s claims a deposit address → %d", who, res.StatusCode))
		}
	}
}

// Only the project's owners, signed in, change its recipients: a
// developer's or viewer's session and the project's API keys are refused
// (403) claiming, verifying and removing; an owner's session signed in
// long ago must sign in again (403 REAUTHENTICATION_REQUIRED).
func TestOnlyOwnersChangeRecipients(t *testing.T) {
	ctx := context.Background()
	p := newTenant(t, "Recipient roles")
	key, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	path := "/api/v1/projects/" + p.Project.ID + "/recipients"
	claim := mustJSON(t, http.StatusCreated)(call(t, "POST", path, "", []byte(`{"address":"`+addr+`"}`), p.cookie))
	sig := stacktest.PersonalSign(t, key, str(claim["challenge"]))
	other, _ := crypto.GenerateKey()
	otherAddr := crypto.PubkeyToAddress(other.PublicKey).Hex()

	callers := map[string]map[string]string{
		"the project's sandbox key": {"Authorization": "Bearer " + p.SandboxKey},
		"the project's live key":    {"Authorization": "Bearer " + p.LiveKey},
	}
	maps.Copy(callers, p.memberSessions(t, "viewer", "developer"))
	stale, tok := signedIn(t, strings.ToLower(strings.ReplaceAll("Recipient roles", " ", "-"))+"@attack.test", "the owner's long password")
	if _, err := stack.Store.Pool().Exec(ctx, `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour' WHERE token_hash = $1`,
		payment.HashSecret(tok)); err != nil {
		t.Fatal(err)
	}
	actions := []struct{ what, method, path, body string }{
		{"claims", "POST", path, `{"address":"` + otherAddr + `"}`},
		{"verifies", "POST", path + "/" + addr + "/verify", `{"signature":"` + sig + `"}`},
		{"removes", "DELETE", path + "/" + addr, ""},
	}
	for who, h := range callers {
		for _, a := range actions {
			var body []byte
			if a.body != "" {
				body = []byte(a.body)
			}
			res, raw := call(t, a.method, a.path, "", body, h)
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s a recipient: %d %s; want 403", who, a.what, res.StatusCode, raw)
			}
			assertEnvelopeError(t, who+" "+a.what, raw)
			tally.add("tenancy: recipients", fmt.Sprintf("%s %s a recipient → %d", who, a.what, res.StatusCode))
		}
	}
	for _, a := range actions {
		var body []byte
		if a.body != "" {
			body = []byte(a.body)
		}
		res, raw := call(t, a.method, a.path, "", body, stale)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(string(raw), api.ReauthenticationRequired) {
			t.Errorf("an owner's stale session %s a recipient: %d %s; want 403 %s", a.what, res.StatusCode, raw, api.ReauthenticationRequired)
		}
		tally.add("takeover: stale session", "a recipient change → 403 "+api.ReauthenticationRequired)
	}
	// Nothing changed: the claim is pending, the other address unclaimed;
	// the owner signed in verifies it.
	got := listOf(t)(call(t, "GET", path, p.SandboxKey, nil, nil))
	if len(got) != 1 || got[0]["address"] != addr || got[0]["status"] != "pending" {
		t.Fatalf("the recipients after the attempts: %v", got)
	}
	done := mustJSON(t, http.StatusOK)(call(t, "POST", path+"/"+addr+"/verify", "", []byte(`{"signature":"`+sig+`"}`), p.cookie))
	if done["status"] != "verified" {
		t.Fatalf("the owner verifies: %v", done)
	}
}
