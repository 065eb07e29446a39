package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/payment"
)

// paidSessionOf opens a session of a fresh plan of the tenant and records
// it paid 10 USDC in a finalized transfer, as the scanner would: there is
// something to refund.
func paidSessionOf(t *testing.T, tn tenant) string {
	t.Helper()
	proj := "/api/v1/projects/" + tn.Project.ID
	plan := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/payment-plans", tn.SandboxKey, []byte(`{"title":"Refunded","amountUsd":"10"}`), nil))
	session := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "",
		[]byte(`{"paymentPlanId":"`+str(plan["id"])+`","email":"buyer@refunds.test"}`), nil))
	secrets.add(str(session["token"]))
	now := time.Now().UTC()
	if err := stack.Store.Payments().InsertTransaction(context.Background(), payment.Transaction{ID: payment.NewID(payment.PrefixTx, now),
		ProjectID: tn.Project.ID, CheckoutSessionID: str(session["id"]), PaymentPlanID: str(plan["id"]), Status: payment.TxFinalized,
		Network: "devnet", ChainID: 1337, TxHash: fmt.Sprintf("0x%064x", now.UnixNano()), AssetDefinitionID: "usdc-devnet",
		Symbol: "USDC", Amount: "10", AmountBaseUnits: "10000000", AmountUSD: decimal.NewFromInt(10), Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return str(session["id"])
}

// ageSession makes a signed-in session's last proof of identity an hour
// old: past the re-authentication window, as a cookie stolen from a
// browser left open.
func ageSession(t *testing.T, cookie map[string]string) {
	t.Helper()
	token := strings.TrimPrefix(cookie["Cookie"], api.SessionCookie+"=")
	if _, err := stack.Store.Pool().Exec(context.Background(),
		`UPDATE user_sessions SET authenticated_at = now() - interval '1 hour' WHERE token_hash = $1`, payment.HashSecret(token)); err != nil {
		t.Fatal(err)
	}
}

func errorCode(t *testing.T, raw []byte) string {
	t.Helper()
	e, _ := envelopeOf(t, raw)["error"].(map[string]any)
	return str(e["code"])
}

// A replaced address. The customer's word stands and the merchant's word
// waits for an owner: the API key (a leaked one, or a careless
// integration) and a developer cannot replace the address the customer
// gave through the claim link, and a refund they make to an address of
// their own waits for an owner's approval, which neither the key nor the
// developer can give, nor the owner's session without a fresh sign-in;
// until then no transaction is taken for it. The owner, freshly signed
// in, approves the address they were shown, audited.
//
// Before the refund approval, a refund created with an address was
// awaiting_signature at once: the key's own address took "everything
// that remains" and its reported transaction was taken, and no approve
// route existed (404), so each check below failed.
func TestAReplacedAddressWaitsForTheOwnersFreshApproval(t *testing.T) {
	victim := newTenant(t, "Refund address victim")
	key, proj := victim.SandboxKey, "/api/v1/projects/"+victim.Project.ID
	dev := victim.memberSessions(t, "developer")["a developer's session"]
	const customer, thief = "0x00000000000000000000000000000000c0ffee01", "0x000000000000000000000000000000000000dEaD"

	// The customer gives the address through the claim link.
	claimed := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/refunds", key,
		[]byte(`{"checkoutSessionId":"`+paidSessionOf(t, victim)+`","amount":"4"}`), nil))
	link := str(claimed["claimUrl"])
	token := link[strings.LastIndex(link, "/")+1:]
	secrets.add(token)
	mustJSON(t, http.StatusOK)(call(t, "POST", "/api/v1/refund-claims/"+token+"/address", "",
		[]byte(`{"address":"`+customer+`","acceptContract":true}`), nil))
	for who, by := range map[string]struct {
		key     string
		headers map[string]string
	}{"the API key": {key, nil}, "a developer's session": {"", dev}} {
		res, raw := call(t, "POST", proj+"/refunds/"+str(claimed["id"])+"/address", by.key, []byte(`{"address":"`+thief+`"}`), by.headers)
		if res.StatusCode != http.StatusConflict {
			t.Errorf("%s replaced the customer's address: %d %s", who, res.StatusCode, raw)
		}
		tally.add("money out: a replaced address", who+" replaces the customer's address → 409")
	}
	if r := mustJSON(t, http.StatusOK)(call(t, "GET", proj+"/refunds/"+str(claimed["id"]), key, nil, nil)); !strings.EqualFold(str(r["toAddress"]), customer) {
		t.Fatalf("the customer's address was replaced: %v", r)
	}

	// The key refunds all that remains to an address of its own.
	own := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/refunds", key,
		[]byte(`{"checkoutSessionId":"`+paidSessionOf(t, victim)+`","address":"`+thief+`"}`), nil))
	id := str(own["id"])
	if own["status"] != "awaiting_approval" {
		t.Fatalf("a refund to the key's own address: %v; want it awaiting an owner's approval", own)
	}
	res, raw := call(t, "POST", proj+"/refunds/"+id+"/transaction", key, []byte(`{"txHash":"0x`+strings.Repeat("7", 64)+`"}`), nil)
	if res.StatusCode != http.StatusConflict {
		t.Errorf("a transaction reported for a refund not approved: %d %s", res.StatusCode, raw)
	}
	tally.add("money out: a replaced address", "a transaction reported before the approval → 409")
	approve := proj + "/refunds/" + id + "/approve"
	for who, by := range map[string]struct {
		key     string
		headers map[string]string
	}{"the API key": {key, nil}, "a developer's session": {"", dev}} {
		res, raw := call(t, "POST", approve, by.key, []byte(`{}`), by.headers)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s approved a refund to its own address: %d %s", who, res.StatusCode, raw)
		}
		tally.add("money out: a replaced address", who+" approves → 403")
	}
	ageSession(t, victim.cookie)
	res, raw = call(t, "POST", approve, "", []byte(`{}`), victim.cookie)
	if res.StatusCode != http.StatusForbidden || errorCode(t, raw) != api.ReauthenticationRequired {
		t.Errorf("the owner's session without a fresh sign-in approved: %d %s", res.StatusCode, raw)
	}
	tally.add("money out: a replaced address", "the owner's session, not freshly signed in, approves → 403 "+api.ReauthenticationRequired)
	if r := mustJSON(t, http.StatusOK)(call(t, "GET", proj+"/refunds/"+id, key, nil, nil)); r["status"] != "awaiting_approval" || r["txHash"] != nil {
		t.Fatalf("the refund after the refused approvals: %v", r)
	}

	// The owner confirms their password, and approves what they were
	// shown; an address changed meanwhile is not approved.
	mustJSON(t, http.StatusOK)(call(t, "POST", "/api/v1/auth/reauthenticate", "", []byte(`{"password":"the owner's long password"}`), victim.cookie))
	res, raw = call(t, "POST", approve, "", []byte(`{"address":"`+customer+`"}`), victim.cookie)
	if res.StatusCode != http.StatusConflict {
		t.Errorf("an approval of another address than the refund's: %d %s", res.StatusCode, raw)
	}
	approved := mustJSON(t, http.StatusOK)(call(t, "POST", approve, "", []byte(`{"address":"`+thief+`"}`), victim.cookie))
	if approved["status"] != "awaiting_signature" || approved["approvedBy"] != victim.userID {
		t.Fatalf("the owner's approval: %v", approved)
	}
	tally.add("money out: a replaced address", "the owner, freshly signed in, approves the address shown → 200")
	res, raw = call(t, "GET", proj+"/audit-log?action="+payment.AuditRefundApproved, key, nil, nil)
	var audit struct {
		Data []struct {
			Actor   map[string]any `json:"actor"`
			Target  map[string]any `json:"target"`
			Details map[string]any `json:"details"`
		}
	}
	if err := json.Unmarshal(raw, &audit); err != nil || res.StatusCode != http.StatusOK || len(audit.Data) != 1 ||
		str(audit.Data[0].Target["id"]) != id || !strings.EqualFold(str(audit.Data[0].Details["address"]), thief) {
		t.Fatalf("the approval's audit entries: %d %s", res.StatusCode, raw)
	}
}

// A stale session. An owner's session past the re-authentication window
// (a cookie stolen from a browser left open) approves no refund and
// changes no payment setting: 403 REAUTHENTICATION_REQUIRED, nothing
// changes. Before sudo mode covered them, the policy's PATCH was taken
// (200) and no approval of a refund existed (the refund was payable at
// once), so both failed.
func TestAStaleSessionApprovesNoRefundAndChangesNoPaymentSetting(t *testing.T) {
	victim := newTenant(t, "Stale session refunds")
	key, proj := victim.SandboxKey, "/api/v1/projects/"+victim.Project.ID
	refund := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/refunds", key,
		[]byte(`{"checkoutSessionId":"`+paidSessionOf(t, victim)+`","address":"0x000000000000000000000000000000000000dEaD"}`), nil))
	before := mustJSON(t, http.StatusOK)(call(t, "GET", proj, key, nil, nil))
	ageSession(t, victim.cookie)
	for _, c := range []struct{ method, path, body string }{
		{"POST", proj + "/refunds/" + str(refund["id"]) + "/approve", `{}`},
		{"PATCH", proj, `{"underpaymentTolerancePercent":"90"}`},
		{"PATCH", proj, `{"completeOn":"pending"}`},
		{"PATCH", proj, `{"sessionLifetimeSeconds":604800}`},
	} {
		res, raw := call(t, c.method, c.path, "", []byte(c.body), victim.cookie)
		if res.StatusCode != http.StatusForbidden || errorCode(t, raw) != api.ReauthenticationRequired {
			t.Errorf("%s %s %s with a stale session: %d %s", c.method, c.path, c.body, res.StatusCode, raw)
		}
		tally.add("money out: a stale session", c.method+" → 403 "+api.ReauthenticationRequired)
	}
	if r := mustJSON(t, http.StatusOK)(call(t, "GET", proj+"/refunds/"+str(refund["id"]), key, nil, nil)); r["status"] != "awaiting_approval" {
		t.Errorf("the refund after a stale session's approval: %v", r)
	}
	after := mustJSON(t, http.StatusOK)(call(t, "GET", proj, key, nil, nil))
	for _, f := range []string{"completeOn", "underpaymentTolerancePercent", "sessionLifetimeSeconds", "updatedAt"} {
		if fmt.Sprint(after[f]) != fmt.Sprint(before[f]) {
			t.Errorf("the project's %s after a stale session's changes: %v; was %v", f, after[f], before[f])
		}
	}
}
