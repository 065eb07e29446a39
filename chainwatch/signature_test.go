package chainwatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/internal/evmrpc"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/chainwatch"
)

// personalSign is what a wallet's personal_sign answers: r‖s‖v, v 27/28.
func personalSign(t *testing.T, msg string) (common.Address, []byte, func(string) []byte) {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	sign := func(m string) []byte {
		sig, err := crypto.Sign(accounts.TextHash([]byte(m)), key)
		if err != nil {
			t.Fatal(err)
		}
		sig[64] += 27
		return sig
	}
	return crypto.PubkeyToAddress(key.PublicKey), sign(msg), sign
}

// An account's personal_sign signature proves its address (v as 27/28 or
// 0/1), without asking any node; another message's, another key's, a
// tampered or short signature does not.
func TestVerifySignatureEIP191(t *testing.T) {
	ctx := context.Background()
	msg := "example.com asks you to prove that you control this address\nNonce: 1"
	addr, sig, sign := personalSign(t, msg)
	if m, err := chainwatch.VerifySignature(ctx, nil, addr, msg, sig); err != nil || m != chainwatch.SignedEIP191 {
		t.Fatalf("a good signature: %q %v", m, err)
	}
	low := append([]byte{}, sig...)
	low[64] -= 27
	if m, err := chainwatch.VerifySignature(ctx, nil, addr, msg, low); err != nil || m != chainwatch.SignedEIP191 {
		t.Fatalf("v as 0/1: %q %v", m, err)
	}
	other, otherSig, _ := personalSign(t, msg)
	tampered := append([]byte{}, sig...)
	tampered[10] ^= 1
	for name, c := range map[string]struct {
		addr common.Address
		sig  []byte
	}{
		"another message": {addr, sign(msg + "2")},
		"another key":     {addr, otherSig},
		"another address": {other, sig},
		"tampered":        {addr, tampered},
		"short":           {addr, sig[:64]},
		"empty":           {addr, nil},
	} {
		if _, err := chainwatch.VerifySignature(ctx, nil, c.addr, msg, c.sig); !errors.Is(err, chainwatch.ErrBadSignature) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A contract wallet on the dev chain (EIP-1271, approved hashes): its
// approval of the challenge's hash proves its address; before it, or for
// another message, nothing does. An address with no code and no matching
// key is refused; the deployer's own key still proves the deployer.
func TestVerifySignatureEIP1271OnTheDevChain(t *testing.T) {
	chain := startChain(t)
	ctx := context.Background()
	owner := chain.Accounts[0]
	wallet, err := chain.DeployApprovedHashWallet(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]evmrpc.Client{"devnet": nodeClient(t, chain)}
	msg := "prove control of " + wallet.Hex()
	sig := []byte{1, 2, 3} // an approved-hash wallet reads no signature
	if _, err := chainwatch.VerifySignature(ctx, clients, wallet, msg, sig); !errors.Is(err, chainwatch.ErrBadSignature) {
		t.Fatalf("before the approval: %v", err)
	}
	if err := chain.ApproveHash(ctx, owner, wallet, common.BytesToHash(accounts.TextHash([]byte(msg)))); err != nil {
		t.Fatal(err)
	}
	if m, err := chainwatch.VerifySignature(ctx, clients, wallet, msg, sig); err != nil || m != chainwatch.SignedEIP1271 {
		t.Fatalf("after the approval: %q %v", m, err)
	}
	if _, err := chainwatch.VerifySignature(ctx, clients, wallet, msg+" again", sig); !errors.Is(err, chainwatch.ErrBadSignature) {
		t.Fatalf("another message: %v", err)
	}
	// A contract that is no wallet (the token) answers no magic value.
	if _, err := chainwatch.VerifySignature(ctx, clients, chain.Token, msg, sig); !errors.Is(err, chainwatch.ErrBadSignature) {
		t.Fatalf("the token contract: %v", err)
	}
	// An account with no code: its key, or nothing.
	nobody := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	if _, err := chainwatch.VerifySignature(ctx, clients, nobody, msg, make([]byte, 65)); !errors.Is(err, chainwatch.ErrBadSignature) {
		t.Fatalf("no code, no key: %v", err)
	}
	ownerSig, err := crypto.Sign(accounts.TextHash([]byte(msg)), owner.Key)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := chainwatch.VerifySignature(ctx, clients, owner.Address, msg, ownerSig); err != nil || m != chainwatch.SignedEIP191 {
		t.Fatalf("the owner's own key: %q %v", m, err)
	}
}
