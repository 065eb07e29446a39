// Package chainwatch reads EVM chains through go-ethereum: deposit-address
// derivation, quotes from price feeds, block and log scanning and transfer
// matching. It depends on go-ethereum's small interfaces, not on a concrete
// client, so the simulated backend drops in for tests.
package chainwatch

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// DepositKey is a project's extended public key for one environment
// (BIP-32, usually the account key m/44'/60'/0'). The engine holds no
// private key: deposit addresses are derived as <key>/0/<index>.
type DepositKey struct {
	key *hdkeychain.ExtendedKey
}

// ParseDepositKey parses an extended public key ("xpub…"). A private key
// is refused: the engine must never hold one.
func ParseDepositKey(s string) (DepositKey, error) {
	k, err := hdkeychain.NewKeyFromString(s)
	if err != nil {
		return DepositKey{}, fmt.Errorf("not an extended public key: %w", err)
	}
	if k.IsPrivate() {
		return DepositKey{}, errors.New("an extended private key was given: give the extended public key (xpub…) so the engine never holds funds")
	}
	return DepositKey{key: k}, nil
}

// String returns the key in its serialized form.
func (k DepositKey) String() string { return k.key.String() }

// DeriveDepositAddress returns the EIP-55 address of external child index of
// the key: <key>/0/<index>. Every EVM network shares it.
func (k DepositKey) DeriveDepositAddress(index uint32) (common.Address, error) {
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

// NewDevDepositKey makes a fresh BIP-32 wallet from seed and returns its
// account-level extended private key (m/44'/60'/0', to recover funds) and
// the matching extended public key (what the engine holds).
func NewDevDepositKey(seed []byte) (xprv, xpub string, err error) {
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
