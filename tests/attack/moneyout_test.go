package attack

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
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
	now := time.Now().UTC()
	if _, err := stack.Store.ClaimRecipient(context.Background(), payment.Recipient{ProjectID: w.attacker.Project.ID,
		Address: own, Challenge: "proof", ChallengeExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := stack.Store.VerifyRecipient(context.Background(), w.attacker.Project.ID, false, own, "proof", "eip191", now); err != nil {
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
