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

	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/testwait"
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
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	acct := devchain.Account{Address: crypto.PubkeyToAddress(key.PublicKey), Key: key}
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
	rec, err := eng.ApprovePayoutBatch(context.Background(), owner, tn.Project.ID, str(batch["id"]))
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
