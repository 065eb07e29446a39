package attack

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// Money out, tried as a second merchant: a batch naming the victim's
// proven treasury as its source is refused (its transfers would be
// recorded as the attacker's payouts, and the victim's left awaiting a
// second payment); a payout or a refund to the victim's session's deposit
// address is refused (it would count as money the victim received).
func TestAnotherTenantCannotPayOutFromOrIntoTheVictimsAddresses(t *testing.T) {
	w := setup(t)
	key, proj := w.attacker.SandboxKey, "/api/v1/projects/"+w.attacker.Project.ID
	res, raw := call(t, "POST", proj+"/payout-batches", key, []byte(`{"fromAddress":"0x00000000000000000000000000000000000000aa",`+
		`"payouts":[{"address":"0x000000000000000000000000000000000000bEEF","asset":"usdc-devnet","amount":"1"}]}`), nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(raw), `"fromAddress"`) {
		t.Fatalf("a batch paying from the victim's treasury: %d %s", res.StatusCode, raw)
	}

	// The attacker's own treasury, proven.
	const own = "0x00000000000000000000000000000000000000cc"
	if err := stacktest.ProveAddress(stack.Store, w.attacker.Project.ID, own); err != nil {
		t.Fatal(err)
	}
	session := mustJSON(t, http.StatusOK)(call(t, "GET", "/api/v1/projects/"+w.victim.Project.ID+"/checkout-sessions/"+w.params["sessionId"],
		w.victim.SandboxKey, nil, nil))
	deposit := str(session["depositAddress"])
	if deposit == "" {
		t.Fatalf("the victim's session has no deposit address: %v", session)
	}
	res, raw = call(t, "POST", proj+"/payout-batches", key, []byte(`{"fromAddress":"`+own+`",`+
		`"payouts":[{"address":"`+deposit+`","asset":"usdc-devnet","amount":"1"}]}`), nil)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(raw), `"payouts[0].address"`) ||
		!strings.Contains(string(raw), "deposit address") {
		t.Fatalf("a payout to the victim's deposit address: %d %s", res.StatusCode, raw)
	}
}

// provenTreasury makes a fresh account, funded from the dev chain, a
// proven address of the tenant's sandbox, and returns it.
func provenTreasury(t *testing.T, tn tenant) devchain.Account {
	t.Helper()
	ctx := context.Background()
	acct := stacktest.NewAccount(t)
	for _, send := range []func() (common.Hash, error){
		func() (common.Hash, error) {
			return stack.Chain.TransferNative(ctx, stack.Chain.Accounts[0], acct.Address, big.NewInt(1e17))
		},
		func() (common.Hash, error) {
			return stack.Chain.TransferToken(ctx, stack.Chain.Accounts[0], acct.Address, big.NewInt(5_000_000))
		},
	} {
		h, err := send()
		if err == nil {
			_, err = stack.Chain.WaitMined(ctx, h)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := stacktest.ProveAddress(stack.Store, tn.Project.ID, acct.Address.Hex()); err != nil {
		t.Fatal(err)
	}
	return acct
}

// approvedBatch uploads a batch of n payouts of 0.01 USDC from `from`
// with the tenant's key and has its owner approve it.
func approvedBatch(t *testing.T, tn tenant, from common.Address, n int) []map[string]any {
	t.Helper()
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"address":"0x%040x","asset":"usdc-devnet","amount":"0.01"}`, 0xbeef0000+i+1)
	}
	batch := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/projects/"+tn.Project.ID+"/payout-batches", tn.SandboxKey,
		[]byte(`{"fromAddress":"`+from.Hex()+`","payouts":[`+strings.Join(lines, ",")+`]}`), nil))
	owner := payment.Principal{ProjectID: tn.Project.ID, UserID: tn.userID, Role: payment.RoleOwner}
	rec, err := eng.MoneyOut().ApprovePayoutBatch(context.Background(), owner, tn.Project.ID, str(batch["id"]))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(rec.Payouts))
	for i, p := range rec.Payouts {
		out[i] = map[string]any{"id": p.ID, "to": p.ToAddress}
	}
	return out
}

// Another tenant's transactions that are never mined cost that tenant
// only: with a dozen made-up hashes reported on the attacker's payouts
// (more than the scans once followed for every project together), the
// victim's payout, paid and reported, is followed to confirmed at once.
func TestAnotherTenantsStuckHashesDoNotHoldThisTenantsPayouts(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	stuck := approvedBatch(t, w.attacker, provenTreasury(t, w.attacker).Address, 12)
	for i, p := range stuck {
		res, raw := call(t, "POST", "/api/v1/projects/"+w.attacker.Project.ID+"/payouts/"+str(p["id"])+"/transaction", w.attacker.SandboxKey,
			[]byte(fmt.Sprintf(`{"txHash":"0x%064x"}`, 0xdead0000+i)), nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("the attacker's made-up hash: %d %s", res.StatusCode, raw)
		}
	}
	treasury := provenTreasury(t, w.victim)
	payout := approvedBatch(t, w.victim, treasury.Address, 1)[0]
	h, err := stack.Chain.TransferToken(ctx, treasury, common.HexToAddress(str(payout["to"])), big.NewInt(10_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stack.Chain.WaitMined(ctx, h); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/projects/" + w.victim.Project.ID + "/payouts/" + str(payout["id"])
	mustJSON(t, http.StatusOK)(call(t, "POST", path+"/transaction", w.victim.SandboxKey, []byte(`{"txHash":"`+h.Hex()+`"}`), nil))
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		p := mustJSON(t, http.StatusOK)(call(t, "GET", path, w.victim.SandboxKey, nil, nil))
		return p["status"] == "confirmed" || p["status"] == "finalized", fmt.Sprintf("the victim's payout is %v", p["status"])
	})
}

// payoutTo uploads a batch of one payout of 0.01 USDC from `from` to `to`
// with the tenant's key, has its owner approve it, and returns the
// payout's path.
func payoutTo(t *testing.T, tn tenant, from common.Address, to string) string {
	t.Helper()
	batch := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/projects/"+tn.Project.ID+"/payout-batches", tn.SandboxKey,
		[]byte(`{"fromAddress":"`+from.Hex()+`","payouts":[{"address":"`+to+`","asset":"usdc-devnet","amount":"0.01"}]}`), nil))
	owner := payment.Principal{ProjectID: tn.Project.ID, UserID: tn.userID, Role: payment.RoleOwner}
	rec, err := eng.MoneyOut().ApprovePayoutBatch(context.Background(), owner, tn.Project.ID, str(batch["id"]))
	if err != nil {
		t.Fatal(err)
	}
	return "/api/v1/projects/" + tn.Project.ID + "/payouts/" + rec.Payouts[0].ID
}

// finalPaidSession opens a session of the tenant's plan and records a
// finalized payment of 10 USDC on it, as the scanner would: the session
// may then be refunded.
func finalPaidSession(t *testing.T, tn tenant, planID string) map[string]any {
	t.Helper()
	session := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "",
		[]byte(`{"paymentPlanId":"`+planID+`"}`), nil))
	secrets.add(str(session["token"]))
	now := time.Now().UTC()
	hash := crypto.Keccak256Hash([]byte(str(session["id"])))
	if err := stack.Store.Payments().InsertTransaction(context.Background(), payment.Transaction{ID: payment.NewID(payment.PrefixTx, now),
		ProjectID: tn.Project.ID, CheckoutSessionID: str(session["id"]), PaymentPlanID: planID,
		Status: payment.TxFinalized, Network: "devnet", ChainID: 1337, TxHash: hash.Hex(),
		AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Amount: "10", AmountBaseUnits: "10000000",
		AmountUSD: decimal.NewFromInt(10), Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return session
}

// refusedWith checks an answer is a 422 in the error envelope whose text
// names field and says want.
func refusedWith(t *testing.T, what string, res *http.Response, raw []byte, field, want string) {
	t.Helper()
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(raw), `"`+field+`"`) || !strings.Contains(string(raw), want) {
		t.Fatalf("%s: %d %s; want 422 on %s saying %q", what, res.StatusCode, raw, field, want)
	}
	assertEnvelopeError(t, what, raw)
}

// A reused hash: the victim's payout is paid and its hash reported; the
// attacker reports the same hash against a payout and a refund of its own
// that the transfer would pay exactly (the same address and amount), and
// the victim reports it against a second payout alike. Each report is
// refused (422, naming txHash, saying why), none of those items moves,
// and the victim's payout keeps its transfer: one on-chain transfer
// closes one item, whatever the project.
func TestAReusedHashClosesOneItemOnly(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	const dest = "0x000000000000000000000000000000000000ba5e"
	treasury := provenTreasury(t, w.victim)
	victimPath := payoutTo(t, w.victim, treasury.Address, dest)
	h, err := stack.Chain.TransferToken(ctx, treasury, common.HexToAddress(dest), big.NewInt(10_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stack.Chain.WaitMined(ctx, h); err != nil {
		t.Fatal(err)
	}
	report := func(tn tenant, path string) (*http.Response, []byte) {
		return call(t, "POST", path+"/transaction", tn.SandboxKey, []byte(`{"txHash":"`+h.Hex()+`"}`), nil)
	}
	mustJSON(t, http.StatusOK)(report(w.victim, victimPath))
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		p := mustJSON(t, http.StatusOK)(call(t, "GET", victimPath, w.victim.SandboxKey, nil, nil))
		return p["status"] == "confirmed" || p["status"] == "finalized", fmt.Sprintf("the victim's payout is %v", p["status"])
	})

	// The attacker's payout alike, from its own proven treasury.
	attackerPath := payoutTo(t, w.attacker, provenTreasury(t, w.attacker).Address, dest)
	res, raw := report(w.attacker, attackerPath)
	refusedWith(t, "the victim's hash on the attacker's payout", res, raw, "txHash", "is not taken")
	assertNoVictimData(t, w, "the victim's hash on the attacker's payout", raw)
	tally.add("money out: a reused hash", "another project's payout: refused (422)")

	// The attacker's refund alike, of a session of its own paid in full.
	plan := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/projects/"+w.attacker.Project.ID+"/payment-plans", w.attacker.SandboxKey,
		[]byte(`{"title":"Attacker's plan","amountUsd":"10"}`), nil))
	session := finalPaidSession(t, w.attacker, str(plan["id"]))
	refund := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/projects/"+w.attacker.Project.ID+"/refunds", w.attacker.SandboxKey,
		[]byte(`{"checkoutSessionId":"`+str(session["id"])+`","amount":"0.01","address":"`+dest+`"}`), nil))
	refundPath := "/api/v1/projects/" + w.attacker.Project.ID + "/refunds/" + str(refund["id"])
	// To the attacker's own address: its owner approves it, freshly signed in.
	mustJSON(t, http.StatusOK)(call(t, "POST", "/api/v1/auth/reauthenticate", "", []byte(`{"password":"the owner's long password"}`),
		w.attacker.cookie))
	mustJSON(t, http.StatusOK)(call(t, "POST", refundPath+"/approve", "", []byte(`{}`), w.attacker.cookie))
	res, raw = report(w.attacker, refundPath)
	refusedWith(t, "the victim's hash on the attacker's refund", res, raw, "txHash", "is not taken")
	assertNoVictimData(t, w, "the victim's hash on the attacker's refund", raw)
	tally.add("money out: a reused hash", "another project's refund: refused (422)")

	// The victim's own second payout alike: the transfer counts once.
	secondPath := payoutTo(t, w.victim, treasury.Address, dest)
	res, raw = report(w.victim, secondPath)
	refusedWith(t, "the same hash on a second payout alike", res, raw, "txHash", "is counted for")
	tally.add("money out: a reused hash", "a second item of the same project: refused (422)")

	// Nothing moved but the victim's payout, and the scans do not give the
	// transfer to another item either: by the time the payout is final,
	// they have read the transfer's block and the blocks of its finality.
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		p := mustJSON(t, http.StatusOK)(call(t, "GET", victimPath, w.victim.SandboxKey, nil, nil))
		return p["status"] == "finalized" && strings.EqualFold(str(p["txHash"]), h.Hex()),
			fmt.Sprintf("the victim's payout is %v with %v", p["status"], p["txHash"])
	})
	for _, it := range []struct {
		what, path string
		tn         tenant
	}{{"the attacker's payout", attackerPath, w.attacker}, {"the attacker's refund", refundPath, w.attacker}, {"the victim's second payout", secondPath, w.victim}} {
		got := mustJSON(t, http.StatusOK)(call(t, "GET", it.path, it.tn.SandboxKey, nil, nil))
		if got["status"] != "awaiting_signature" || got["txHash"] != nil {
			t.Errorf("%s is %v with %v; want awaiting_signature with no transaction", it.what, got["status"], got["txHash"])
		}
	}
}

// A refund to a deposit address would come back as money in: a refund of
// a session to its own deposit address, or to another session's (of the
// same project or another), is refused, whether the merchant gives the
// address (at creation, or later through the API) or the customer does
// through the claim link. The refund keeps waiting for an address, and
// neither session's amount received grows.
func TestARefundToADepositAddressIsRefused(t *testing.T) {
	w := setup(t)
	key, proj := w.victim.SandboxKey, "/api/v1/projects/"+w.victim.Project.ID
	own := finalPaidSession(t, w.victim, w.params["planId"])
	other := mustJSON(t, http.StatusOK)(call(t, "GET", proj+"/checkout-sessions/"+w.params["sessionId"], key, nil, nil))
	attackerPlan := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/projects/"+w.attacker.Project.ID+"/payment-plans",
		w.attacker.SandboxKey, []byte(`{"title":"Another shop's plan","amountUsd":"5"}`), nil))
	elsewhere := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "",
		[]byte(`{"paymentPlanId":"`+str(attackerPlan["id"])+`"}`), nil))
	secrets.add(str(elsewhere["token"]))
	received := func(tn tenant, id string) string {
		s := mustJSON(t, http.StatusOK)(call(t, "GET", "/api/v1/projects/"+tn.Project.ID+"/checkout-sessions/"+id, tn.SandboxKey, nil, nil))
		txs, _ := s["transactions"].([]any)
		return fmt.Sprintf("%v, %v paid, %d payments", s["status"], s["amountPaidUsd"], len(txs))
	}
	type watched struct {
		what   string
		tn     tenant
		id     string
		before string
	}
	sessions := []*watched{{what: "the refunded session", tn: w.victim, id: str(own["id"])},
		{what: "another session of the project", tn: w.victim, id: str(other["id"])},
		{what: "another project's session", tn: w.attacker, id: str(elsewhere["id"])}}
	for _, s := range sessions {
		s.before = received(s.tn, s.id)
	}
	deposits := map[string]string{"its own deposit address": str(own["depositAddress"]),
		"another session's deposit address": str(other["depositAddress"]), "another project's session's deposit address": str(elsewhere["depositAddress"])}
	// Why each is refused: the session's own address is where the refund
	// is paid from; another session's receives payments.
	why := func(what string) string {
		if what == "its own deposit address" {
			return "is the address the transfer is paid from"
		}
		return "is a checkout session's deposit address"
	}

	pending := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/refunds", key,
		[]byte(`{"checkoutSessionId":"`+str(own["id"])+`","amount":"1"}`), nil))
	claimToken := str(pending["claimUrl"])[strings.LastIndex(str(pending["claimUrl"]), "/")+1:]
	secrets.add(claimToken)
	for what, addr := range deposits {
		if addr == "" {
			t.Fatalf("%s is empty", what)
		}
		res, raw := call(t, "POST", proj+"/refunds", key,
			[]byte(`{"checkoutSessionId":"`+str(own["id"])+`","amount":"1","address":"`+addr+`"}`), nil)
		refusedWith(t, "a refund created to "+what, res, raw, "address", "deposit address")
		// (At creation the refund has no source yet: every deposit address
		// is refused as one.)
		tally.add("money out: a refund to a deposit address", "created by the merchant: refused (422)")

		res, raw = call(t, "POST", proj+"/refunds/"+str(pending["id"])+"/address", key, []byte(`{"address":"`+addr+`"}`), nil)
		refusedWith(t, "a refund's address set to "+what, res, raw, "address", why(what))
		tally.add("money out: a refund to a deposit address", "given by the merchant later: refused (422)")

		res, raw = call(t, "POST", "/api/v1/refund-claims/"+claimToken+"/address", "", []byte(`{"address":"`+addr+`","acceptContract":true}`), nil)
		refusedWith(t, "a claim of the refund to "+what, res, raw, "address", why(what))
		tally.add("money out: a refund to a deposit address", "claimed by the customer: refused (422)")
	}
	got := mustJSON(t, http.StatusOK)(call(t, "GET", proj+"/refunds/"+str(pending["id"]), key, nil, nil))
	if got["status"] != "awaiting_address" || got["toAddress"] != nil {
		t.Errorf("the refund is %v to %v; want awaiting_address with no address", got["status"], got["toAddress"])
	}
	for _, s := range sessions {
		if after := received(s.tn, s.id); after != s.before {
			t.Errorf("%s was %s, is %s", s.what, s.before, after)
		}
	}
}
