package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/api"
)

// A second-shape deployment on the dev chain (spec section 9): a plan
// priced in token amounts with two payment options, paid to one recipient
// address. Two sessions open at once pay the same recipient in the same
// token, each completed by its own transfer of its own exact amount; a
// fee-deducted transfer matches no session and is recorded as unmatched,
// then assigned by hand; sessions are read by ID; the list filters
// status=completed and network.
func TestSecondShapePaymentsToASharedRecipient(t *testing.T) {
	ts, e := newAPI(t, apiOptions{shape: api.ShapeSecond})
	first, _ := newAPI(t, apiOptions{})
	p := newProject(t, e)
	keys := projectKeys{p.Project.ID, p.SandboxKey}
	plans := "/api/v1/projects/" + keys.id + "/payment-plans"
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	recipient := crypto.PubkeyToAddress(key.PublicKey)
	token := chain.Token.Hex()
	verifyRecipient(t, e, keys.id, key)

	// Validation names the second shape's fields.
	bad := post(t, ts.URL, plans, keys.key, map[string]any{
		"recipientAddress": "0x12345", "quoteTtl": 5,
		"paymentOptions": []any{
			map[string]any{"networkId": "moonnet", "amount": "1"},
			map[string]any{"networkId": "devnet", "tokenAddress": token, "amount": "1.0000001"},
			map[string]any{"networkId": "devnet", "tokenAddress": "0x000000000000000000000000000000000000dEaD", "amount": "1"},
		}})
	mustStatus(t, bad, http.StatusUnprocessableEntity)
	for _, f := range []string{"name", "recipientAddress", "quoteTtl", "paymentOptions[0].networkId",
		"paymentOptions[1].amount", "paymentOptions[2].tokenAddress"} {
		if !slices.Contains(bad.detailFields(), f) {
			t.Errorf("the 422 does not name %s: %s", f, bad.Raw)
		}
	}
	// A mixed-case address with one letter's case flipped fails its
	// checksum.
	flipped := []byte(recipient.Hex())
	for i := 2; i < len(flipped); i++ {
		if c := flipped[i]; c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
			flipped[i] ^= 0x20
			break
		}
	}
	if r := post(t, ts.URL, plans, keys.key, map[string]any{"name": "x", "recipientAddress": string(flipped),
		"paymentOptions": []any{map[string]any{"networkId": "devnet", "tokenAddress": token, "amount": "1"}}}); r.Status != http.StatusUnprocessableEntity ||
		!slices.Contains(r.detailFields(), "recipientAddress") {
		t.Errorf("a bad checksum: %d %s", r.Status, r.Raw)
	}

	// The plan: 4.5 USDC or 0.002 ETH (the zero address), to the recipient
	// given in lowercase.
	made := post(t, ts.URL, plans, keys.key, map[string]any{
		"name": "Sticker pack", "recipientAddress": strings.ToLower(recipient.Hex()),
		"paymentOptions": []any{
			map[string]any{"networkId": "devnet", "tokenAddress": token, "amount": "4.5"},
			map[string]any{"networkId": 1337, "tokenAddress": "0x0000000000000000000000000000000000000000", "amount": "0.002"},
		},
		"redirectUrl": "https://shop.example/thanks", "quoteTtl": 900})
	mustStatus(t, made, http.StatusCreated)
	plan := made.data()
	options, _ := plan["paymentOptions"].([]any)
	if plan["name"] != "Sticker pack" || plan["recipientAddress"] != recipient.Hex() || plan["pricingModel"] != "token_amount" ||
		plan["quoteTtl"] != float64(900) || len(options) != 2 ||
		options[0].(map[string]any)["amount"] != "4.5" || options[1].(map[string]any)["tokenAddress"] != "" {
		t.Fatalf("the plan: %s", made.Raw)
	}

	open := func() map[string]any {
		r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan["id"]})
		mustStatus(t, r, http.StatusCreated)
		expires, _ := time.Parse(time.RFC3339, str(r.data()["expiresAt"]))
		if d := time.Until(expires); d < 890*time.Second || d > 901*time.Second {
			t.Fatalf("quoteTtl sets the session's expiry: in %v", d)
		}
		return r.data()
	}
	a, b := open(), open()
	amountOf := func(cs map[string]any) string { return str(option(t, cs, "usdc-devnet")["amountBaseUnits"]) }
	for _, cs := range []map[string]any{a, b} {
		if cs["depositAddress"] != recipient.Hex() {
			t.Fatalf("a session pays the plan's recipient: %v", cs)
		}
	}
	if amountOf(a) != "4500000" || amountOf(b) != "4500001" {
		t.Fatalf("two open sessions hold distinct amounts: %s, %s", amountOf(a), amountOf(b))
	}
	if uri := str(option(t, b, "usdc-devnet")["paymentUri"]); !strings.Contains(uri, "uint256=4500001") || !strings.Contains(uri, recipient.Hex()) {
		t.Fatalf("b's payment URI: %s", uri)
	}

	// b's payer pays first, then a's; then someone sends a fee-deducted
	// amount nobody holds.
	hb := payToken(t, 2, recipient.Hex(), units(amountOf(b)))
	ha := payToken(t, 3, recipient.Hex(), units(amountOf(a)))
	hu := payToken(t, 4, recipient.Hex(), units("4499000"))
	for _, s := range []struct {
		cs   map[string]any
		hash common.Hash
	}{{a, ha}, {b, hb}} {
		done := waitSession(t, ts.URL, str(s.cs["token"]), "completed", func(v map[string]any) bool { return v["status"] == "completed" })
		txs := done["transactions"].([]any)
		if len(txs) != 1 || txs[0].(map[string]any)["txHash"] != s.hash.Hex() {
			t.Fatalf("session %s counts its own transfer only: %v", s.cs["id"], txs)
		}
		// By ID, with the API key.
		r := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(s.cs["id"]), keys.key)
		mustStatus(t, r, http.StatusOK)
		if r.data()["status"] != "completed" || r.data()["amountPaidUsd"] != r.data()["amountUsd"] {
			t.Fatalf("session by ID: %s", r.Raw)
		}
	}
	stray := waitTx(t, ts.URL, keys, hu, "completed")
	if stray["checkoutSessionId"] != nil || stray["unexpected"] != true || stray["amount"] != "4.499" {
		t.Fatalf("the unmatched transfer: %v", stray)
	}

	// The filters.
	txs := "/api/v1/projects/" + keys.id + "/transactions"
	hashes := func(r response) []string {
		mustStatus(t, r, http.StatusOK)
		var out []string
		for _, it := range r.list() {
			out = append(out, str(it.(map[string]any)["txHash"]))
		}
		return out
	}
	if got := hashes(get(t, ts.URL, txs+"?status=completed&network=devnet", keys.key)); len(got) != 3 ||
		!slices.Contains(got, ha.Hex()) || !slices.Contains(got, hb.Hex()) || !slices.Contains(got, hu.Hex()) {
		t.Fatalf("status=completed&network=devnet: %v", got)
	}
	if got := hashes(get(t, ts.URL, txs+"?unexpected=true", keys.key)); len(got) != 1 || got[0] != hu.Hex() {
		t.Fatalf("unexpected=true: %v", got)
	}
	if got := hashes(get(t, ts.URL, txs+"?status=pending", keys.key)); len(got) != 0 {
		t.Fatalf("status=pending: %v", got)
	}

	// The merchant assigns the unmatched transfer to a new session, which
	// counts it (the amount falls short: underpaid), with an event and
	// an audit entry.
	waitTx(t, first.URL, keys, hu, "finalized")
	c := open()
	if amountOf(c) != "4500002" {
		t.Fatalf("a third session's amount: %s", amountOf(c))
	}
	r := assign(t, ts.URL, keys, str(stray["id"]), str(c["id"]))
	mustStatus(t, r, http.StatusOK)
	if r.data()["assignedSessionId"] != c["id"] {
		t.Fatalf("assigned: %s", r.Raw)
	}
	waitSession(t, ts.URL, str(c["token"]), "paid in part", func(v map[string]any) bool { return v["amountPaidUsd"] != "0.00" })
	base := "/api/v1/projects/" + keys.id
	if evs := get(t, ts.URL, base+"/events?type=transaction.assigned", keys.key).list(); len(evs) != 1 {
		t.Fatalf("transaction.assigned events: %v", evs)
	}
	if log := get(t, ts.URL, base+"/audit-log?action=transaction.assigned", keys.key).list(); len(log) != 1 {
		t.Fatalf("audit entries: %v", log)
	}

	// A payer's hash that pays another session's amount is checked
	// against the transfer: it fails for the claiming session.
	d := open()
	claim := payToken(t, 2, recipient.Hex(), units(amountOf(c)))
	if _, err := chain.WaitMined(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	sub := post(t, ts.URL, "/api/v1/checkout/sessions/"+str(d["token"])+"/payments", "", map[string]any{"network": "devnet", "txHash": claim.Hex()})
	if sub.Status != http.StatusAccepted && sub.Status != http.StatusOK && sub.Status != http.StatusCreated {
		t.Fatalf("submission: %d %s", sub.Status, sub.Raw)
	}
	waitSession(t, ts.URL, str(d["token"]), "its claim failed", func(v map[string]any) bool {
		for _, tx := range v["transactions"].([]any) {
			if tx.(map[string]any)["txHash"] == claim.Hex() && tx.(map[string]any)["status"] == "failed" {
				return true
			}
		}
		return false
	})
	if v := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(d["token"]), "").data(); v["status"] != "open" {
		t.Fatalf("the claiming session stays open: %v", v)
	}
}

// The hosted page of a session on a shared recipient asks its exact
// amount, says why, and follows its payment to completed.
func TestCheckoutPageAsksTheExactAmountOnASharedRecipient(t *testing.T) {
	path := chromium(t)
	ts, e, keys := sandboxAPI(t, apiOptions{shape: api.ShapeSecond})
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	recipient := crypto.PubkeyToAddress(key.PublicKey).Hex()
	verifyRecipient(t, e, keys.id, key)
	plan := post(t, ts.URL, "/api/v1/projects/"+keys.id+"/payment-plans", keys.key, map[string]any{
		"name": "Sticker pack", "recipientAddress": recipient,
		"paymentOptions": []any{map[string]any{"networkId": "devnet", "tokenAddress": chain.Token.Hex(), "amount": "4.5"}}})
	mustStatus(t, plan, http.StatusCreated)
	var cs map[string]any
	for range 2 { // the second session holds 4.500001
		r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan.data()["id"]})
		mustStatus(t, r, http.StatusCreated)
		cs = r.data()
	}
	b := newBrowser(t, path, "")
	b.run(chromedp.Navigate(ts.URL + "/checkout/" + str(cs["token"])))
	b.run(chromedp.WaitVisible("#exact-amount"))
	due, address := b.text("#due"), b.text("#address")
	b.shot("shared-recipient-open")
	if due != "4.500001 USDC" || address != recipient {
		t.Fatalf("the page asks %q to %q", due, address)
	}
	payToken(t, 3, recipient, units("4500001"))
	b.run(chromedp.WaitVisible(`#status.completed`))
	b.shot("shared-recipient-paid")
}
