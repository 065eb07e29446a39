package deposit

import (
	"encoding/hex"
	"strings"
	"testing"

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
