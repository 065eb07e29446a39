package keys

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/crypto"
)

// The well-known test mnemonic "abandon … about" (BIP-39 seed below) gives
// 0x9858EfFD232B4033E47d90003D41EC34EcaEda94 at m/44'/60'/0'/0/0, the
// address every wallet shows for it.
const abandonSeed = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"

func TestDeriveAddressMatchesWallets(t *testing.T) {
	seed, _ := hex.DecodeString(abandonSeed)
	xprv, xpub, err := NewDevKey(seed)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ParseKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := key.DeriveAddress(0)
	if err != nil {
		t.Fatal(err)
	}
	if addr.Hex() != "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" {
		t.Fatalf("address 0 = %s", addr.Hex())
	}
	// The private half derives the same address: funds are recoverable.
	priv, err := DerivePrivateKey(xprv, 7)
	if err != nil {
		t.Fatal(err)
	}
	ecdsa, _ := crypto.ToECDSA(priv)
	want, _ := key.DeriveAddress(7)
	if crypto.PubkeyToAddress(ecdsa.PublicKey) != want {
		t.Fatal("private and public derivations disagree")
	}
	seen := map[string]bool{}
	for i := range uint32(50) {
		a, _ := key.DeriveAddress(i)
		if seen[a.Hex()] {
			t.Fatalf("address %d repeats", i)
		}
		seen[a.Hex()] = true
	}
	if _, err := ParseKey(xprv); err == nil || !strings.Contains(err.Error(), "private") {
		t.Fatalf("an xprv must be refused: %v", err)
	}
	if _, err := ParseKey("xpub-nonsense"); err == nil {
		t.Fatal("garbage accepted")
	}
}

// A serialized key carries a version, a depth, its parent's fingerprint
// and its child number besides what derives addresses: every variant of
// one key has one identity and one canonical form and derives the same
// addresses; another key, its own child included, has another identity.
func TestIdentityIgnoresWhatDerivesNothing(t *testing.T) {
	seed, _ := hex.DecodeString(abandonSeed)
	_, xpub, err := NewDevKey(seed)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ParseKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	ext, _ := hdkeychain.NewKeyFromString(xpub)
	pub, _ := ext.ECPubKey()
	parentFP := binary.BigEndian.AppendUint32(nil, ext.ParentFingerprint())
	variant := func(version []byte, depth uint8, parent []byte, child uint32) string {
		return hdkeychain.NewExtendedKey(version, pub.SerializeCompressed(), ext.ChainCode(), parent, depth, child, false).String()
	}
	variants := map[string]string{
		"testnet version (tpub)": variant(chaincfg.TestNet3Params.HDPublicKeyID[:], 3, parentFP, ext.ChildIndex()),
		"made-up version":        variant([]byte{0xde, 0xad, 0xbe, 0xef}, 3, parentFP, ext.ChildIndex()),
		"depth 0":                variant(ext.Version(), 0, parentFP, ext.ChildIndex()),
		"depth 253":              variant(ext.Version(), 253, parentFP, ext.ChildIndex()),
		"another parent":         variant(ext.Version(), 3, []byte{1, 2, 3, 4}, ext.ChildIndex()),
		"child 7":                variant(ext.Version(), 3, parentFP, 7),
		"hardened child 1":       variant(ext.Version(), 3, parentFP, hdkeychain.HardenedKeyStart+1),
		"all of them":            variant(chaincfg.TestNet3Params.HDPublicKeyID[:], 9, []byte{9, 9, 9, 9}, 42),
		"canonical":              key.Canonical(),
	}
	want0, _ := key.DeriveAddress(0)
	want9, _ := key.DeriveAddress(9)
	for name, s := range variants {
		if s == xpub {
			t.Fatalf("%s: not a variant", name)
		}
		v, err := ParseKey(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Identity() != key.Identity() {
			t.Errorf("%s: identity %s, want %s", name, v.Identity(), key.Identity())
		}
		if v.Canonical() != key.Canonical() {
			t.Errorf("%s: canonical %s, want %s", name, v.Canonical(), key.Canonical())
		}
		a0, _ := v.DeriveAddress(0)
		a9, _ := v.DeriveAddress(9)
		if a0 != want0 || a9 != want9 {
			t.Errorf("%s derives %s, %s; want %s, %s", name, a0, a9, want0, want9)
		}
	}
	for _, depth := range []uint8{254, 255} {
		if _, err := ParseKey(variant(ext.Version(), depth, parentFP, 0)); err == nil || !strings.Contains(err.Error(), "depth") {
			t.Errorf("depth %d (no room for <key>/0/<index>) accepted: %v", depth, err)
		}
	}
	if len(key.Identity()) != 64 {
		t.Fatalf("identity %q: want 64 hex digits", key.Identity())
	}

	// Other keys: another wallet, the key's external chain <key>/0 and
	// its first address's key <key>/0/0, the same public key with another
	// chain code.
	_, otherXpub, _ := NewDevKey([]byte("another wallet's seed, 32 bytes!"))
	external, _ := ext.Derive(0)
	first, _ := external.Derive(0)
	chain := append([]byte{}, ext.ChainCode()...)
	chain[0] ^= 1
	others := map[string]string{
		"another wallet":     otherXpub,
		"<key>/0":            external.String(),
		"<key>/0/0":          first.String(),
		"another chain code": hdkeychain.NewExtendedKey(ext.Version(), pub.SerializeCompressed(), chain, []byte{0, 0, 0, 0}, 3, 0, false).String(),
	}
	for name, s := range others {
		o, err := ParseKey(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if o.Identity() == key.Identity() {
			t.Errorf("%s has the key's identity", name)
		}
		if a0, _ := o.DeriveAddress(0); a0 == want0 {
			t.Errorf("%s derives the key's first address", name)
		}
	}
}
