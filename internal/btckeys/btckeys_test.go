package btckeys

import (
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/paymentsd/paymentsd/internal/keys"
)

// The root key of BIP84's and BIP86's test vectors (the mnemonic
// "abandon abandon … about").
const vectorRoot = "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu"

// account derives the root's account key m/purpose'/coin'/0' and returns
// it neutered, as a wallet exports it.
func account(t *testing.T, purpose, coin uint32) *hdkeychain.ExtendedKey {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(vectorRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{purpose, coin, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	if k, err = k.Neuter(); err != nil {
		t.Fatal(err)
	}
	return k
}

func derive(t *testing.T, k Key, i uint32, params *chaincfg.Params) string {
	t.Helper()
	a, err := k.DeriveAddress(i, params)
	if err != nil {
		t.Fatal(err)
	}
	return a.EncodeAddress()
}

// BIP84's vectors: the account's zpub and its first receiving addresses.
func TestBIP84Vectors(t *testing.T) {
	const zpubVector = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	k, err := ParseKey(zpubVector, "")
	if err != nil {
		t.Fatal(err)
	}
	if !k.Mainnet || k.Kind != SegWit {
		t.Fatalf("the vector's zpub read as mainnet %v, %s", k.Mainnet, k.Kind)
	}
	if got := derive(t, k, 0, &chaincfg.MainNetParams); got != "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu" {
		t.Errorf("m/84'/0'/0'/0/0 = %s", got)
	}
	if got := derive(t, k, 1, &chaincfg.MainNetParams); got != "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g" {
		t.Errorf("m/84'/0'/0'/0/1 = %s", got)
	}
	// The same account exported as an xpub derives the same addresses.
	x, err := ParseKey(account(t, 84, 0).String(), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := derive(t, x, 0, &chaincfg.MainNetParams); got != "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu" || x.Identity() != k.Identity() {
		t.Errorf("the account as an xpub: %s, identity %s; want the zpub's address and identity %s", got, x.Identity(), k.Identity())
	}
	if x.Canonical() != k.Canonical() || !strings.HasPrefix(k.Canonical(), "zpub") {
		t.Errorf("canonical forms %s and %s; want one zpub", x.Canonical(), k.Canonical())
	}
}

// BIP86's vectors: Taproot addresses from the account's xpub.
func TestBIP86Vectors(t *testing.T) {
	k, err := ParseKey(account(t, 86, 0).String(), Taproot)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr",
		"bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh"} {
		if got := derive(t, k, uint32(i), &chaincfg.MainNetParams); got != want {
			t.Errorf("m/86'/0'/0'/0/%d = %s, want %s", i, got, want)
		}
	}
}

// A test network's key (tpub or vpub) derives the test networks' and
// regtest's addresses and is refused on mainnet, and the reverse.
func TestNetworks(t *testing.T) {
	test := account(t, 84, 1)
	test.SetNet(&chaincfg.TestNet3Params)
	k, err := ParseKey(test.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	if k.Mainnet || !strings.HasPrefix(k.Canonical(), "vpub") {
		t.Fatalf("a tpub read as mainnet %v, canonical %s", k.Mainnet, k.Canonical())
	}
	if got := derive(t, k, 0, &chaincfg.RegressionNetParams); !strings.HasPrefix(got, "bcrt1q") {
		t.Errorf("regtest address %s", got)
	}
	if got := derive(t, k, 0, &chaincfg.SigNetParams); !strings.HasPrefix(got, "tb1q") {
		t.Errorf("signet address %s", got)
	}
	if _, err := k.DeriveAddress(0, &chaincfg.MainNetParams); err == nil || !strings.Contains(err.Error(), "test network key cannot derive addresses on mainnet") {
		t.Errorf("a test key on mainnet: %v", err)
	}
	main, err := ParseKey(account(t, 84, 0).String(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := main.DeriveAddress(0, &chaincfg.RegressionNetParams); err == nil || !strings.Contains(err.Error(), "mainnet key cannot derive addresses on regtest") {
		t.Errorf("a mainnet key on regtest: %v", err)
	}
}

// What the engine must not take is refused, saying what to give.
func TestRefusals(t *testing.T) {
	private, err := hdkeychain.NewKeyFromString(vectorRoot)
	if err != nil {
		t.Fatal(err)
	}
	bip49 := account(t, 49, 0)
	pub, err := bip49.ECPubKey()
	if err != nil {
		t.Fatal(err)
	}
	nested := hdkeychain.NewExtendedKey(ypub[:], pub.SerializeCompressed(), bip49.ChainCode(), []byte{0, 0, 0, 0}, 3, 0, false)
	for _, c := range []struct {
		key  string
		kind Kind
		says string
	}{
		{private.String(), "", "an extended private key was given"},
		{nested.String(), "", "nested SegWit (BIP49)"},
		{"zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs", Taproot, "for Taproot give the BIP86 account's xpub"},
		{account(t, 84, 0).String(), "p2pkh", `unknown kind of address "p2pkh"`},
		{"zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYt", "", "not an extended public key"},
		{"0x1234", "", "not an extended public key"},
	} {
		if _, err := ParseKey(c.key, c.kind); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseKey(%.20s…, %q) = %v; want an error saying %q", c.key, c.kind, err, c.says)
		}
	}
}

// One account key given for an EVM network and for Bitcoin has one
// identity: the tenant check of deposit keys holds across chains.
func TestIdentityIsTheEVMKeys(t *testing.T) {
	acc := account(t, 84, 0)
	b, err := ParseKey(acc.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := keys.ParseKey(acc.String())
	if err != nil {
		t.Fatal(err)
	}
	if b.Identity() != e.Identity() {
		t.Fatalf("identities %s (Bitcoin) and %s (EVM) of one key", b.Identity(), e.Identity())
	}
}
