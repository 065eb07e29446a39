// Package keys derives checkout sessions' deposit addresses from a
// project's extended public key (BIP-32), so that the engine never holds a
// private key and every session gets an address of its own.
package keys

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Key is a project's extended public key for one environment
// (BIP-32, usually the account key m/44'/60'/0'). The engine holds no
// private key: deposit addresses are derived as <key>/0/<index>.
type Key struct {
	key *hdkeychain.ExtendedKey
	pub []byte // compressed public key
}

// ParseKey parses an extended public key ("xpub…"). A private key
// is refused: the engine must never hold one.
func ParseKey(s string) (Key, error) {
	k, err := hdkeychain.NewKeyFromString(s)
	if err != nil {
		return Key{}, fmt.Errorf("not an extended public key: %w", err)
	}
	if k.IsPrivate() {
		return Key{}, errors.New("an extended private key was given: give the extended public key (xpub…) so the engine never holds funds")
	}
	// Addresses are two levels below the key, and BIP-32 counts depth
	// in a byte.
	if k.Depth() > 253 {
		return Key{}, fmt.Errorf("the key's depth %d leaves no room to derive <key>/0/<index>", k.Depth())
	}
	ec, err := k.ECPubKey()
	if err != nil {
		return Key{}, fmt.Errorf("not an extended public key: %w", err)
	}
	return Key{key: k, pub: ec.SerializeCompressed()}, nil
}

// String returns the key in its serialized form.
func (k Key) String() string { return k.key.String() }

// Identity names the key by what derives its addresses: the hex SHA-256 of
// its compressed public key followed by its chain code. The serialized
// key also carries a version, a depth, its parent's fingerprint and its
// child number; none of them changes an address, so two strings that
// differ only there have one identity, and derive the same addresses.
// Two keys of different identities derive different addresses: <key>/0/i
// depends on the public key and chain code alone, and a key that is
// another's child or parent (say <key>/0) derives a different tree.
// It is what keeps one key to one project environment (docs/security.md,
// "Tenant isolation of deposit keys").
func (k Key) Identity() string {
	sum := sha256.Sum256(append(append([]byte{}, k.pub...), k.key.ChainCode()...))
	return hex.EncodeToString(sum[:])
}

// Canonical returns the key serialized with what derives nothing fixed:
// the mainnet xpub version, depth 0, no parent fingerprint, child 0. The
// variants of one key have one canonical form, which derives their
// addresses.
func (k Key) Canonical() string {
	return hdkeychain.NewExtendedKey(chaincfg.MainNetParams.HDPublicKeyID[:], k.pub, k.key.ChainCode(),
		[]byte{0, 0, 0, 0}, 0, 0, false).String()
}

// DeriveAddress returns the EIP-55 address of deposit address index of
// the key (see Child). Every EVM network shares it.
func (k Key) DeriveAddress(index uint32) (common.Address, error) {
	child, err := Child(k.key, index)
	if err != nil {
		return common.Address{}, err
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return common.Address{}, err
	}
	ecdsa, err := crypto.UnmarshalPubkey(pub.SerializeUncompressed())
	if err != nil {
		return common.Address{}, err
	}
	return crypto.PubkeyToAddress(*ecdsa), nil
}

// Child derives the key of deposit address index, <k>/0/<index>: the
// external chain's child, as wallets number receiving addresses. It is the
// one derivation the engine's addresses, the sweep's signing keys and the
// dev tooling share, so that they can never disagree about which key an
// address is.
func Child(k *hdkeychain.ExtendedKey, index uint32) (*hdkeychain.ExtendedKey, error) {
	if index >= hdkeychain.HardenedKeyStart {
		return nil, fmt.Errorf("index %d out of range", index)
	}
	external, err := k.Derive(0)
	if err != nil {
		return nil, fmt.Errorf("derive the external chain: %w", err)
	}
	child, err := external.Derive(index)
	if err != nil {
		return nil, fmt.Errorf("derive index %d: %w", index, err)
	}
	return child, nil
}

// NewDevKey makes a fresh BIP-32 wallet from seed and returns its
// account-level extended private key (m/44'/60'/0', to recover funds) and
// the matching extended public key (what the engine holds).
func NewDevKey(seed []byte) (xprv, xpub string, err error) {
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return "", "", err
	}
	k := master
	for _, i := range []uint32{44, 60, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			return "", "", err
		}
	}
	pub, err := k.Neuter()
	if err != nil {
		return "", "", err
	}
	return k.String(), pub.String(), nil
}

// DerivePrivateKey derives the private key of <xprv>/0/<index>, for the dev
// tooling that spends from deposit addresses.
func DerivePrivateKey(xprv string, index uint32) ([]byte, error) {
	k, err := hdkeychain.NewKeyFromString(xprv)
	if err != nil {
		return nil, err
	}
	if k, err = Child(k, index); err != nil {
		return nil, err
	}
	priv, err := k.ECPrivKey()
	if err != nil {
		return nil, err
	}
	return priv.Serialize(), nil
}
