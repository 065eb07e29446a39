// Package sweep moves the funds of a project's deposit addresses to one
// destination, signing on the merchant's machine with the extended private
// key the engine never sees.
//
// A sweep is planned from the chain (each address's balance of each asset)
// before anything is signed, then executed in three rounds: the relayer's
// transactions (EIP-3009 authorisations, EIP-2612 permits, gas top-ups),
// then the addresses' own token transfers and the permits' transferFrom,
// then the native coin, each address paying its own gas. Every signed
// transaction is written to a journal before it is sent, so a sweep cut off
// at any point resumes by sending the same transactions again (the chain
// takes each nonce once) and planning anew from the balances left.
package sweep

import (
	"crypto/ecdsa"
	"errors"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/paymentsd/paymentsd/internal/keys"
)

// Wallet holds the account-level extended private key (usually
// m/44'/60'/0') whose extended public key the project's deposit addresses
// are derived from: address i is <key>/0/i.
type Wallet struct {
	key *hdkeychain.ExtendedKey
	// account, when set, is the wallet's one key: a treasury account's,
	// which pays payouts (AccountWallet).
	account *ecdsa.PrivateKey
}

// AccountWallet is the wallet of one account's private key: every index
// is that account.
func AccountWallet(key *ecdsa.PrivateKey) Wallet { return Wallet{account: key} }

// ParseWallet parses an extended private key ("xprv…"). An extended public
// key is refused: it cannot sign.
func ParseWallet(s string) (Wallet, error) {
	k, err := hdkeychain.NewKeyFromString(s)
	if err != nil {
		return Wallet{}, errors.New("not an extended private key (xprv…)")
	}
	if !k.IsPrivate() {
		return Wallet{}, errors.New("an extended public key was given: the sweep needs the extended private key (xprv…) of the project's deposit key")
	}
	return Wallet{key: k}, nil
}

// Key returns deposit address index's private key and address.
func (w Wallet) Key(index uint32) (*ecdsa.PrivateKey, common.Address, error) {
	if w.account != nil {
		return w.account, crypto.PubkeyToAddress(w.account.PublicKey), nil
	}
	child, err := keys.Child(w.key, index)
	if err != nil {
		return nil, common.Address{}, err
	}
	priv, err := child.ECPrivKey()
	if err != nil {
		return nil, common.Address{}, err
	}
	key := priv.ToECDSA()
	return key, crypto.PubkeyToAddress(key.PublicKey), nil
}
