// Package btckeys derives Bitcoin deposit addresses from a merchant's
// account-level extended public key: native SegWit (BIP84, P2WPKH) from a
// zpub, vpub, xpub or tpub, or Taproot (BIP86, P2TR key path) from an xpub
// or tpub. The engine holds no private key; deposit address i is
// <key>/0/i, the same derivation as the EVM keys (keys.Child).
package btckeys

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/keys"
)

// Kind is the kind of address a key's deposit addresses are.
type Kind string

const (
	// SegWit is native SegWit v0, pay to witness public key hash (BIP84):
	// bc1q… on mainnet, tb1q… on the test networks, bcrt1q… on regtest.
	SegWit Kind = "p2wpkh"
	// Taproot is SegWit v1 paying to the key alone (BIP86): bc1p….
	Taproot Kind = "p2tr"
)

// The serialized keys' versions (BIP32, SLIP-132): what a wallet exports
// names the network and, for zpub and vpub, the kind of address.
var (
	xpub = [4]byte{0x04, 0x88, 0xb2, 0x1e}
	tpub = [4]byte{0x04, 0x35, 0x87, 0xcf}
	zpub = [4]byte{0x04, 0xb2, 0x47, 0x46}
	vpub = [4]byte{0x04, 0x5f, 0x1c, 0xf6}
	ypub = [4]byte{0x04, 0x9d, 0x7c, 0xb2} // BIP49, nested SegWit
	upub = [4]byte{0x04, 0x4a, 0x52, 0x62}
)

// Key is a merchant's account key for one kind of address.
type Key struct {
	key *hdkeychain.ExtendedKey
	pub []byte // compressed public key
	// Mainnet tells the key's network: mainnet (xpub, zpub) or one of the
	// test networks, signet and regtest (tpub, vpub).
	Mainnet bool
	Kind    Kind
}

// ParseKey parses an account-level extended public key. kind is the kind
// of address wanted; empty takes what the key names (a zpub or vpub is
// SegWit; so is an xpub or tpub, unless Taproot is asked). A private key,
// a nested SegWit key (ypub, upub) and a zpub or vpub asked for Taproot
// are refused, saying what to give instead.
func ParseKey(s string, kind Kind) (Key, error) {
	payload, version, err := base58.CheckDecode(s)
	if err != nil || len(payload) != 77 {
		return Key{}, errors.New("not an extended public key (xpub, zpub, tpub or vpub)")
	}
	v := [4]byte{version, payload[0], payload[1], payload[2]}
	if payload[44] == 0x00 {
		return Key{}, errors.New("an extended private key was given: give the account's extended public key (zpub…, or vpub… on a test network) so the engine never holds funds")
	}
	k := Key{Kind: kind}
	switch v {
	case xpub, tpub:
		if k.Kind == "" {
			k.Kind = SegWit
		}
	case zpub, vpub:
		if kind == Taproot {
			return Key{}, errors.New("a zpub or vpub is a native SegWit (BIP84) account key: for Taproot give the BIP86 account's xpub (or tpub)")
		}
		k.Kind = SegWit
	case ypub, upub:
		return Key{}, errors.New("a ypub or upub derives nested SegWit (BIP49) addresses, which the engine does not take: give the BIP84 account key (zpub…, or vpub…)")
	default:
		return Key{}, fmt.Errorf("the key's version %x is none of xpub, zpub, tpub or vpub", v)
	}
	if k.Kind != SegWit && k.Kind != Taproot {
		return Key{}, fmt.Errorf("unknown kind of address %q: want %s or %s", kind, SegWit, Taproot)
	}
	k.Mainnet = v == xpub || v == zpub
	// hdkeychain reads any version; the address network comes from the
	// engine's network, checked against Mainnet when deriving.
	if k.key, err = hdkeychain.NewKeyFromString(s); err != nil {
		return Key{}, fmt.Errorf("not an extended public key: %w", err)
	}
	if k.key.Depth() > 253 {
		return Key{}, fmt.Errorf("the key's depth %d leaves no room to derive <key>/0/<index>", k.key.Depth())
	}
	ec, err := k.key.ECPubKey()
	if err != nil {
		return Key{}, fmt.Errorf("not an extended public key: %w", err)
	}
	k.pub = ec.SerializeCompressed()
	return k, nil
}

// Identity names the key by what derives its addresses, as keys.Key's
// Identity does (the hex SHA-256 of the compressed public key and the
// chain code): the same account key given for an EVM network and for
// Bitcoin has one identity, so a key is kept to one project environment
// whichever chains it serves.
func (k Key) Identity() string {
	sum := sha256.Sum256(append(append([]byte{}, k.pub...), k.key.ChainCode()...))
	return hex.EncodeToString(sum[:])
}

// Canonical returns the key as its kind is written: a zpub (vpub on the
// test networks) for SegWit, an xpub (tpub) for Taproot, at depth 0 with
// no parent, as keys.Key's Canonical does.
func (k Key) Canonical() string {
	version := map[bool]map[Kind][4]byte{true: {SegWit: zpub, Taproot: xpub}, false: {SegWit: vpub, Taproot: tpub}}[k.Mainnet][k.Kind]
	return hdkeychain.NewExtendedKey(version[:], k.pub, k.key.ChainCode(), []byte{0, 0, 0, 0}, 0, 0, false).String()
}

// Fingerprint is the key's BIP32 fingerprint (the first four bytes of
// its public key's HASH160, little-endian as PSBTs carry it): what names
// the account key in a PSBT's derivation paths.
func (k Key) Fingerprint() uint32 {
	return binary.LittleEndian.Uint32(btcutil.Hash160(k.pub)[:4])
}

// PublicKey returns the compressed public key of deposit address index.
func (k Key) PublicKey(index uint32) ([]byte, error) {
	pub, err := k.child(index)
	if err != nil {
		return nil, err
	}
	return pub.SerializeCompressed(), nil
}

// child is the public key of deposit address index, <key>/0/<index>.
func (k Key) child(index uint32) (*btcec.PublicKey, error) {
	child, err := keys.Child(k.key, index)
	if err != nil {
		return nil, err
	}
	return child.ECPubKey()
}

// DeriveAddress returns deposit address index of the key on the network
// of params (<key>/0/<index>). A mainnet key on a test network, or the
// reverse, is refused: its addresses would be another network's.
func (k Key) DeriveAddress(index uint32, params *chaincfg.Params) (btcutil.Address, error) {
	if mainnet := params.Net == wire.MainNet; mainnet != k.Mainnet {
		return nil, fmt.Errorf("a %s key cannot derive addresses on %s", map[bool]string{true: "mainnet", false: "test network"}[k.Mainnet], params.Name)
	}
	pub, err := k.child(index)
	if err != nil {
		return nil, err
	}
	if k.Kind == Taproot {
		return btcutil.NewAddressTaproot(schnorr.SerializePubKey(txscript.ComputeTaprootKeyNoScript(pub)), params)
	}
	return btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(pub.SerializeCompressed()), params)
}
