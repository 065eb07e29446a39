package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
)

func devXpub(t *testing.T, seed string) string {
	t.Helper()
	_, xpub, err := keys.NewDevKey([]byte(fmt.Sprintf("%-32s", seed)))
	if err != nil {
		t.Fatal(err)
	}
	return xpub
}

// reserialized is xpub written again with another depth, parent
// fingerprint and child number: another string, the same addresses.
func reserialized(t *testing.T, xpub string) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(xpub)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := k.ECPubKey()
	return hdkeychain.NewExtendedKey(k.Version(), pub.SerializeCompressed(), k.ChainCode(), []byte{7, 7, 7, 7}, 3, 7, false).String()
}

// A deposit key derives the addresses customers pay to: a key another
// project (or the project's other environment) has set is refused, under
// any serialization, so that no two tenants are handed the same
// addresses; the owner alone reads the key back, others its fingerprint.
func TestDepositKeysAreOneEnvironmentsOwn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, mallory := e.owner(t, "Alice's shop"), e.owner(t, "Mallory's shop")
	xpub := devXpub(t, "alice's wallet")

	info, err := e.svc.Checkout().SetDepositKeyAs(ctx, alice.principal, alice.principal.ProjectID, xpub)
	if err != nil {
		t.Fatal(err)
	}
	if info.Xpub != xpub || info.Fingerprint == "" || !strings.HasPrefix(info.FirstAddress, "0x") || info.Issued != 0 {
		t.Fatalf("the owner's view of the key = %+v", info)
	}

	_, err = e.svc.Checkout().SetDepositKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, xpub)
	wantKind(t, "another project setting the same key", err, payment.KindConflict)
	_, err = e.svc.Checkout().SetDepositKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, reserialized(t, xpub))
	wantKind(t, "another project setting the key written again", err, payment.KindConflict)
	live := alice.principal
	live.IsLive = true
	_, err = e.svc.Checkout().SetDepositKeyAs(ctx, live, alice.principal.ProjectID, xpub)
	wantKind(t, "the project's live environment setting its sandbox key", err, payment.KindConflict)
	// Setting one's own key again is no conflict.
	if _, err := e.svc.Checkout().SetDepositKeyAs(ctx, alice.principal, alice.principal.ProjectID, reserialized(t, xpub)); err != nil {
		t.Fatalf("the owner setting their key again: %v", err)
	}
	// A key of its own is fine.
	if _, err := e.svc.Checkout().SetDepositKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, devXpub(t, "mallory's wallet")); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Checkout().SetDepositKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, "xpub-not-a-key")
	wantField(t, "a malformed key", err, "xpub")
	_, err = e.svc.Checkout().SetDepositKeyAs(ctx, mallory.principal, alice.principal.ProjectID, devXpub(t, "mallory's other wallet"))
	wantKind(t, "setting another project's key", err, payment.KindNotFound)

	dev := e.join(t, alice, payment.RoleDeveloper)
	_, err = e.svc.Checkout().SetDepositKeyAs(ctx, dev.principal, alice.principal.ProjectID, devXpub(t, "dev's wallet"))
	wantKind(t, "a developer setting the key", err, payment.KindForbidden)
	seen, err := e.svc.Checkout().DepositKey(ctx, dev.principal, alice.principal.ProjectID)
	if err != nil || seen.Xpub != "" || seen.Fingerprint != info.Fingerprint || seen.FirstAddress != info.FirstAddress {
		t.Fatalf("a developer's view of the key = %+v, %v; want its fingerprint and first address, not the key", seen, err)
	}
	apiKey := payment.Principal{ProjectID: alice.principal.ProjectID, KeyID: "key_x"}
	if seen, err := e.svc.Checkout().DepositKey(ctx, apiKey, alice.principal.ProjectID); err != nil || seen.Xpub != "" {
		t.Fatalf("an API key's view of the key = %+v, %v", seen, err)
	}

	// The log names the key by its ends and fingerprint, never whole.
	set, details := findAudit(t, e.audit(t, alice), payment.AuditDepositKeySet)
	if short, _ := details["xpub"].(string); strings.Contains(string(set.Details), xpub) || details["fingerprint"] != info.Fingerprint ||
		!strings.Contains(short, "…") || len(short) > 24 {
		t.Fatalf("deposit_key.set = %+v %v", set, details)
	}
	if n := countAudit(e.audit(t, mallory), payment.AuditDepositKeySet); n != 1 {
		t.Fatalf("%d deposit_key.set entries for the project refused twice and accepted once, want 1", n)
	}
}
