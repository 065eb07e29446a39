package service_test

import (
	"context"
	"crypto/ecdsa"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/payment"
)

// wallet is an address's own key, to sign a recipient's challenge with.
type wallet struct {
	key     *ecdsa.PrivateKey
	address string
}

func newWallet(t *testing.T) wallet {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return wallet{key: k, address: crypto.PubkeyToAddress(k.PublicKey).Hex()}
}

// sign is personal_sign's answer for message.
func (w wallet) sign(t *testing.T, message string) string {
	t.Helper()
	sig, err := crypto.Sign(accounts.TextHash([]byte(message)), w.key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

// A project pays its second-shape plans to an address only once it has
// signed the address's challenge; an address another project has verified
// is refused to every other project in the environment, and a plan
// cannot name an address its project has not verified.
func TestRecipientsAreClaimedByTheirSignature(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, mallory := e.owner(t, "Alice's shop"), e.owner(t, "Mallory's shop")
	project := alice.principal.ProjectID
	w := newWallet(t)

	claim, err := e.svc.Checkout().ClaimRecipient(ctx, alice.principal, project, strings.ToLower(w.address), "pay.example.test")
	if err != nil {
		t.Fatal(err)
	}
	if claim.Verified() || claim.Address != w.address || !strings.Contains(claim.Challenge, "pay.example.test") ||
		!strings.Contains(claim.Challenge, project) || !claim.ChallengeExpiresAt.Equal(claim.CreatedAt.Add(payment.RecipientChallengeTTL)) {
		t.Fatalf("claim = %+v", claim)
	}
	// Mallory may claim it too, while nobody has verified it, but cannot
	// sign for it.
	if _, err := e.svc.Checkout().ClaimRecipient(ctx, mallory.principal, mallory.principal.ProjectID, w.address, "pay.example.test"); err != nil {
		t.Fatalf("a second pending claim: %v", err)
	}
	_, err = e.svc.Checkout().VerifyRecipient(ctx, mallory.principal, mallory.principal.ProjectID, w.address, newWallet(t).sign(t, claim.Challenge))
	wantField(t, "a signature by another key", err, "signature")
	_, err = e.svc.Checkout().VerifyRecipient(ctx, alice.principal, project, w.address, "not hex")
	wantField(t, "a malformed signature", err, "signature")
	// Alice's signature over Mallory's challenge is no proof for Alice.
	mine, err := e.svc.Checkout().ListRecipients(ctx, mallory.principal, mallory.principal.ProjectID)
	if err != nil || len(mine) != 1 {
		t.Fatalf("mallory's recipients = %+v, %v", mine, err)
	}
	_, err = e.svc.Checkout().VerifyRecipient(ctx, alice.principal, project, w.address, w.sign(t, mine[0].Challenge))
	wantField(t, "the signature of another project's challenge", err, "signature")

	verified, err := e.svc.Checkout().VerifyRecipient(ctx, alice.principal, project, w.address, w.sign(t, claim.Challenge))
	if err != nil || !verified.Verified() || verified.Method != "eip191" {
		t.Fatalf("verified = %+v, %v", verified, err)
	}
	// Now the address is Alice's in the sandbox.
	_, err = e.svc.Checkout().ClaimRecipient(ctx, mallory.principal, mallory.principal.ProjectID, w.address, "pay.example.test")
	wantKind(t, "claiming an address another project verified", err, payment.KindConflict)
	_, err = e.svc.Checkout().VerifyRecipient(ctx, mallory.principal, mallory.principal.ProjectID, w.address, w.sign(t, mine[0].Challenge))
	if err == nil {
		t.Fatal("a second project verified an address another had verified")
	}
	// Claimed again by its owner, it is answered as it is, unchanged.
	again, err := e.svc.Checkout().ClaimRecipient(ctx, alice.principal, project, w.address, "pay.example.test")
	if err != nil || !again.Verified() || !again.VerifiedAt.Equal(*verified.VerifiedAt) {
		t.Fatalf("claimed again once verified = %+v, %v", again, err)
	}
	// The other environment has not verified it.
	live := alice.principal
	live.IsLive = true
	if rs, err := e.svc.Checkout().ListRecipients(ctx, live, project); err != nil || len(rs) != 0 {
		t.Fatalf("the live environment's recipients = %+v, %v", rs, err)
	}

	log := e.audit(t, alice)
	if n := countAudit(log, payment.AuditRecipientClaimed); n != 1 {
		t.Fatalf("%d recipient.claimed entries, want 1 (the claim of a verified address changes nothing)", n)
	}
	if _, details := findAudit(t, log, payment.AuditRecipientVerified); details["address"] != w.address || details["method"] != "eip191" {
		t.Fatalf("recipient.verified details = %v", details)
	}
	if err := e.svc.Checkout().DeleteRecipient(ctx, alice.principal, project, w.address); err != nil {
		t.Fatal(err)
	}
	err = e.svc.Checkout().DeleteRecipient(ctx, alice.principal, project, w.address)
	wantKind(t, "deleting a recipient twice", err, payment.KindNotFound)
	findAudit(t, e.audit(t, alice), payment.AuditRecipientRemoved)
}

// A challenge is signed within RecipientChallengeTTL; a late signature
// asks for a new claim.
func TestRecipientChallengeExpires(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.owner(t, "Alice's shop")
	w := newWallet(t)
	claim, err := e.svc.Checkout().ClaimRecipient(ctx, alice.principal, alice.principal.ProjectID, w.address, "pay.example.test")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(payment.RecipientChallengeTTL + time.Second)
	_, err = e.svc.Checkout().VerifyRecipient(ctx, alice.principal, alice.principal.ProjectID, w.address, w.sign(t, claim.Challenge))
	wantField(t, "a signature after the challenge expired", err, "signature")
	renewed, err := e.svc.Checkout().ClaimRecipient(ctx, alice.principal, alice.principal.ProjectID, w.address, "pay.example.test")
	if err != nil || renewed.Challenge == claim.Challenge {
		t.Fatalf("claimed again: %+v, %v; want a new challenge", renewed, err)
	}
	if r, err := e.svc.Checkout().VerifyRecipient(ctx, alice.principal, alice.principal.ProjectID, w.address, w.sign(t, renewed.Challenge)); err != nil || !r.Verified() {
		t.Fatalf("the new challenge signed: %+v, %v", r, err)
	}
}

// Who may claim: owners of the project only; bad addresses are named.
func TestRecipientClaimRules(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, mallory := e.owner(t, "Alice's shop"), e.owner(t, "Mallory's shop")
	project := alice.principal.ProjectID
	dev := e.join(t, alice, payment.RoleDeveloper)
	w := newWallet(t)

	_, err := e.svc.Checkout().ClaimRecipient(ctx, dev.principal, project, w.address, "h")
	wantKind(t, "a developer claiming", err, payment.KindForbidden)
	_, err = e.svc.Checkout().ClaimRecipient(ctx, payment.Principal{ProjectID: project, KeyID: "key_x"}, project, w.address, "h")
	wantKind(t, "an API key claiming", err, payment.KindForbidden)
	_, err = e.svc.Checkout().ClaimRecipient(ctx, mallory.principal, project, w.address, "h")
	wantKind(t, "claiming for another project", err, payment.KindNotFound)
	for _, bad := range []string{"0x0000000000000000000000000000000000000000", "0x1234", "not an address"} {
		_, err = e.svc.Checkout().ClaimRecipient(ctx, alice.principal, project, bad, "h")
		wantField(t, "claiming "+bad, err, "address")
	}
	_, err = e.svc.Checkout().VerifyRecipient(ctx, alice.principal, project, w.address, w.sign(t, "anything"))
	wantKind(t, "verifying an address never claimed", err, payment.KindNotFound)
	// Any member reads the list; nobody else does.
	if rs, err := e.svc.Checkout().ListRecipients(ctx, dev.principal, project); err != nil || len(rs) != 0 {
		t.Fatalf("a developer's list = %+v, %v", rs, err)
	}
	_, err = e.svc.Checkout().ListRecipients(ctx, mallory.principal, project)
	wantKind(t, "another project's recipients", err, payment.KindNotFound)
}
