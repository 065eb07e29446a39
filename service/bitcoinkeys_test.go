package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/payment"
)

// bitcoinAccount is the BIP84 account key m/84'/coin'/0' of a wallet
// made from seed, as the wallet exports it: an xpub (mainnet) or tpub,
// and the same key as a zpub or vpub.
func bitcoinAccount(t *testing.T, seed string, mainnet bool) (plain, slip132 string) {
	t.Helper()
	params, coin := &chaincfg.TestNet3Params, uint32(1)
	if mainnet {
		params, coin = &chaincfg.MainNetParams, 0
	}
	k, err := hdkeychain.NewMaster([]byte(strings.Repeat(seed, 32)[:32]), params)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{84, coin, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	if k, err = k.Neuter(); err != nil {
		t.Fatal(err)
	}
	return k.String(), segwitKey(t, k.String())
}

// segwitKey is an extended public key as a native SegWit key is written:
// a zpub, or a vpub on the test networks.
func segwitKey(t *testing.T, xpub string) string {
	t.Helper()
	k, err := btckeys.ParseKey(xpub, btckeys.SegWit)
	if err != nil {
		t.Fatal(err)
	}
	return k.Canonical()
}

// A Bitcoin account key derives the addresses customers pay to, as an
// EVM key does, and is one environment's own the same way: a key another
// project (or the project's other environment) has set, for Bitcoin or
// for an EVM network, under any serialization, is refused; a key of the
// other network's kind is refused with what to give instead; the owner
// alone reads the key back.
func TestBitcoinKeysAreOneEnvironmentsOwn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, mallory := e.owner(t, "Alice's shop"), e.owner(t, "Mallory's shop")
	tpub, vpub := bitcoinAccount(t, "alice", false)

	info, err := e.svc.Checkout().SetBitcoinKeyAs(ctx, alice.principal, alice.principal.ProjectID, vpub, "")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := btckeys.ParseKey(vpub, "")
	first, _ := key.DeriveAddress(0, &chaincfg.TestNet3Params)
	if info.Xpub != vpub || info.Fingerprint != key.Identity() || info.FirstAddress != first.EncodeAddress() ||
		!strings.HasPrefix(info.FirstAddress, "tb1q") || info.AddressType != btckeys.SegWit || info.Issued != 0 {
		t.Fatalf("the owner's view of the key = %+v; want it, its fingerprint and its first address %s", info, first)
	}

	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, vpub, "")
	wantKind(t, "another project setting the same key", err, payment.KindConflict)
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, tpub, "")
	wantKind(t, "another project setting the key as a tpub", err, payment.KindConflict)
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, reserialized(t, tpub), string(btckeys.Taproot))
	wantKind(t, "another project setting the key written again, for Taproot", err, payment.KindConflict)
	_, err = e.svc.Checkout().SetDepositKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, tpub)
	wantKind(t, "another project setting the Bitcoin key as its EVM key", err, payment.KindConflict)
	evm := devXpub(t, "alice's ether wallet")
	if _, err := e.svc.Checkout().SetDepositKeyAs(ctx, alice.principal, alice.principal.ProjectID, evm); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, mallory.principal, mallory.principal.ProjectID, asVpub(t, evm), "")
	wantKind(t, "another project setting an EVM key as its Bitcoin key", err, payment.KindConflict)
	// Setting one's own key again, as a tpub for Taproot, is no conflict.
	if info, err := e.svc.Checkout().SetBitcoinKeyAs(ctx, alice.principal, alice.principal.ProjectID, tpub, "p2tr"); err != nil ||
		info.AddressType != btckeys.Taproot || !strings.HasPrefix(info.FirstAddress, "tb1p") {
		t.Fatalf("the owner setting their key again for Taproot: %+v, %v", info, err)
	}

	live := alice.principal
	live.IsLive = true
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, live, alice.principal.ProjectID, vpub, "")
	wantField(t, "a test network's key for live", err, "xpub")
	xpub, zpub := bitcoinAccount(t, "alice", true)
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, alice.principal, alice.principal.ProjectID, zpub, "")
	wantField(t, "a mainnet key for the sandbox", err, "xpub")
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, live, alice.principal.ProjectID, zpub, "p2tr")
	wantField(t, "a zpub for Taproot", err, "xpub")
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, live, alice.principal.ProjectID, xpub, "p2sh")
	wantField(t, "an address type the engine does not take", err, "addressType")
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, live, alice.principal.ProjectID, "zpub-not-a-key", "")
	wantField(t, "a malformed key", err, "xpub")
	if info, err := e.svc.Checkout().SetBitcoinKeyAs(ctx, live, alice.principal.ProjectID, zpub, ""); err != nil || !strings.HasPrefix(info.FirstAddress, "bc1q") {
		t.Fatalf("the live environment's mainnet key: %+v, %v", info, err)
	}
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, mallory.principal, alice.principal.ProjectID, vpub, "")
	wantKind(t, "setting another project's key", err, payment.KindNotFound)

	dev := e.join(t, alice, payment.RoleDeveloper)
	_, devKey := bitcoinAccount(t, "dev", false)
	_, err = e.svc.Checkout().SetBitcoinKeyAs(ctx, dev.principal, alice.principal.ProjectID, devKey, "")
	wantKind(t, "a developer setting the key", err, payment.KindForbidden)
	seen, err := e.svc.Checkout().BitcoinKey(ctx, dev.principal, alice.principal.ProjectID)
	if err != nil || seen.Xpub != "" || seen.Fingerprint != key.Identity() || !strings.HasPrefix(seen.FirstAddress, "tb1p") {
		t.Fatalf("a developer's view of the key = %+v, %v; want its fingerprint and first address, not the key", seen, err)
	}
	if seen, err := e.svc.Checkout().BitcoinKey(ctx, mallory.principal, mallory.principal.ProjectID); err != nil || seen.Fingerprint != "" || seen.AddressType != "" {
		t.Fatalf("a project without a Bitcoin key reads %+v, %v", seen, err)
	}

	// The log names the key by its ends and fingerprint, never whole.
	set, details := findAudit(t, e.audit(t, alice), payment.AuditBitcoinKeySet)
	if short, _ := details["xpub"].(string); strings.Contains(string(set.Details), tpub) || details["fingerprint"] != key.Identity() ||
		!strings.Contains(short, "…") || (details["addressType"] != "p2tr" && details["addressType"] != "p2wpkh") {
		t.Fatalf("bitcoin_deposit_key.set = %+v %v", set, details)
	}
	if n := countAudit(e.audit(t, alice), payment.AuditBitcoinKeySet); n != 2 {
		t.Fatalf("%d bitcoin_deposit_key.set entries for the sandbox's key set twice, want 2", n)
	}
	if n := countAudit(e.audit(t, mallory), payment.AuditBitcoinKeySet); n != 0 {
		t.Fatalf("%d bitcoin_deposit_key.set entries for a project refused every time, want 0", n)
	}
}

// asVpub is an EVM account key written as a test network's native
// SegWit key: the same public key and chain code.
func asVpub(t *testing.T, xpub string) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(xpub)
	if err != nil {
		t.Fatal(err)
	}
	k.SetNet(&chaincfg.TestNet3Params)
	return segwitKey(t, k.String())
}
