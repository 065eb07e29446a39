// Package deposit derives checkout sessions' deposit addresses from a
// project's extended public key (BIP-32), so that the engine never holds a
// private key and every session gets an address of its own.
package deposit

import (
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
	return Key{key: k}, nil
}

// String returns the key in its serialized form.
func (k Key) String() string { return k.key.String() }

// DeriveAddress returns the EIP-55 address of external child index of
// the key: <key>/0/<index>. Every EVM network shares it.
func (k Key) DeriveAddress(index uint32) (common.Address, error) {
	if index >= hdkeychain.HardenedKeyStart {
		return common.Address{}, fmt.Errorf("index %d out of range", index)
	}
	external, err := k.key.Derive(0)
	if err != nil {
		return common.Address{}, fmt.Errorf("derive external chain: %w", err)
	}
	child, err := external.Derive(index)
	if err != nil {
		return common.Address{}, fmt.Errorf("derive child %d: %w", index, err)
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
	for _, i := range []uint32{0, index} {
		if k, err = k.Derive(i); err != nil {
			return nil, err
		}
	}
	priv, err := k.ECPrivKey()
	if err != nil {
		return nil, err
	}
	return priv.Serialize(), nil
}
