package e2e

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// verifyRecipient makes the sandbox of a project the verified owner of
// key's address, as its owner would: claim, sign, verify.
func verifyRecipient(t *testing.T, svc *service.Service, projectID string, key *ecdsa.PrivateKey) {
	t.Helper()
	ctx := context.Background()
	owner := payment.Principal{ProjectID: projectID, UserID: "usr_test", Role: payment.RoleOwner}
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	r, err := svc.Checkout().ClaimRecipient(ctx, owner, projectID, addr, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Checkout().VerifyRecipient(ctx, owner, projectID, addr, stacktest.PersonalSign(t, key, r.Challenge)); err != nil {
		t.Fatal(err)
	}
}

// Through the API: a plan to an address its project has not verified is
// refused (422 on recipientAddress, saying how); an owner claims it, signs
// the challenge with the address's key and verifies it (a wrong signature
// refused); then the plan is made. Another project cannot claim it. The
// open holds of a plan are bounded.
func TestRecipientVerifiedBeforeAPlanPaysIt(t *testing.T) {
	ts, e := newAPI(t, apiOptions{shape: api.ShapeSecond, maxOpenHolds: 2})
	owner := signup(t, ts.URL)
	made := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Recipients"})
	mustStatus(t, made, http.StatusCreated)
	projectID := str(made.data()["id"])
	keyRes := owner.call(t, ts.URL, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil)
	mustStatus(t, keyRes, http.StatusCreated)
	apiKey := str(keyRes.data()["secret"])
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	recipient := crypto.PubkeyToAddress(key.PublicKey).Hex()
	planBody := map[string]any{"name": "Sticker", "recipientAddress": recipient,
		"paymentOptions": []any{map[string]any{"networkId": "devnet", "tokenAddress": chain.Token.Hex(), "amount": "1"}}}
	plans := "/api/v1/projects/" + projectID + "/payment-plans"
	refused := post(t, ts.URL, plans, apiKey, planBody)
	if refused.Status != http.StatusUnprocessableEntity || !slices.Contains(refused.detailFields(), "recipientAddress") {
		t.Fatalf("a plan to an unverified recipient: %d %s", refused.Status, refused.Raw)
	}
	base := "/api/v1/projects/" + projectID + "/recipients"
	// API keys do not claim recipients.
	if r := post(t, ts.URL, base, apiKey, map[string]any{"address": recipient}); r.Status != http.StatusForbidden {
		t.Fatalf("an API key claims: %d %s", r.Status, r.Raw)
	}
	claim := owner.call(t, ts.URL, http.MethodPost, base, map[string]any{"address": recipient})
	mustStatus(t, claim, http.StatusCreated)
	challenge := str(claim.data()["challenge"])
	if claim.data()["status"] != "pending" || !strings.Contains(challenge, projectID) || !strings.Contains(challenge, recipient) ||
		!strings.Contains(challenge, "Environment: sandbox") {
		t.Fatalf("the claim: %s", claim.Raw)
	}
	other, _ := crypto.GenerateKey()
	if r := owner.call(t, ts.URL, http.MethodPost, base+"/"+recipient+"/verify", map[string]any{"signature": stacktest.PersonalSign(t, other, challenge)}); r.Status != http.StatusUnprocessableEntity ||
		!slices.Contains(r.detailFields(), "signature") {
		t.Fatalf("another key's signature: %d %s", r.Status, r.Raw)
	}
	ok := owner.call(t, ts.URL, http.MethodPost, base+"/"+recipient+"/verify", map[string]any{"signature": stacktest.PersonalSign(t, key, challenge)})
	mustStatus(t, ok, http.StatusOK)
	if ok.data()["status"] != "verified" || ok.data()["method"] != "eip191" {
		t.Fatalf("verified: %s", ok.Raw)
	}
	if list := get(t, ts.URL, base, apiKey); list.Status != 200 || !strings.Contains(string(list.Raw), recipient) {
		t.Fatalf("the list: %d %s", list.Status, list.Raw)
	}
	plan := post(t, ts.URL, plans, apiKey, planBody)
	mustStatus(t, plan, http.StatusCreated)

	// Another project cannot claim it.
	p2 := newProject(t, e)
	o2 := payment.Principal{ProjectID: p2.Project.ID, UserID: "usr_other", Role: payment.RoleOwner}
	if _, err := e.Checkout().ClaimRecipient(context.Background(), o2, p2.Project.ID, recipient, ""); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("another project claims a verified recipient: %v", err)
	}

	// Two open holds at most (maxOpenHolds 2): the third session is a 409.
	for i, want := range []int{201, 201, 409} {
		r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan.data()["id"]})
		if r.Status != want {
			t.Fatalf("session %d: %d %s", i, r.Status, r.Raw)
		}
	}
}
