package sweep

import (
	"bytes"
	"context"
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
)

// A multisend pays every recipient once: the token's after an allowance
// to the contract; the native coin's with the total as value. A run whose
// transaction never reached the node is resumed from its journal with the
// transaction it signed, and a run repeated after that returns the same
// hash: it never signs a second multisend.
func TestMultisendPaysOnceAndResumesFromItsJournal(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	treasury := crypto.PubkeyToAddress(key.PublicKey)
	w.mine(t, must(t)(w.chain.TransferNative(ctx, w.chain.Accounts[3], treasury, ether(2))))
	w.mine(t, must(t)(w.chain.TransferToken(ctx, w.chain.Accounts[1], treasury, usdc(10))))
	contract, deployed, err := w.chain.Deploy(ctx, w.deployer, common.FromHex(bindings.DevMultisendMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	w.mine(t, deployed)
	to := []common.Address{{0xa1}, {0xa2}}
	cfg := Config{Chain: w.client, Wallet: AccountWallet(key), Wait: 30 * time.Second}

	cfg.Journal = filepath.Join(t.TempDir(), "usdc.json")
	var log bytes.Buffer
	if _, err := Multisend(ctx, cfg, contract, w.usdc, to, []*big.Int{usdc(3), usdc(4)}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if a, b := w.balance(t, w.usdc, to[0]), w.balance(t, w.usdc, to[1]); a.Cmp(usdc(3)) != 0 || b.Cmp(usdc(4)) != 0 {
		t.Fatalf("the recipients hold %s and %s USDC base units; want 3000000 and 4000000", a, b)
	}

	cfg.Journal = filepath.Join(t.TempDir(), "eth.json")
	cut := cfg
	cut.Chain, cut.Wait = lostSends{w.client}, time.Second
	amounts := []*big.Int{big.NewInt(1e15), big.NewInt(2e15)}
	if _, err := Multisend(ctx, cut, contract, w.eth, to, amounts, &log); err == nil {
		t.Fatal("a multisend that never reached the node was taken as mined")
	}
	if w.balance(t, w.eth, to[0]).Sign() != 0 {
		t.Fatal("nothing was sent, yet the recipient was paid")
	}
	first, err := Multisend(ctx, cfg, contract, w.eth, to, amounts, &log)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	again, err := Multisend(ctx, cfg, contract, w.eth, to, amounts, &log)
	if err != nil || again != first {
		t.Fatalf("a repeated run: %s, %v; want %s again", again, err, first)
	}
	if a, b := w.balance(t, w.eth, to[0]), w.balance(t, w.eth, to[1]); a.Cmp(amounts[0]) != 0 || b.Cmp(amounts[1]) != 0 {
		t.Fatalf("the recipients hold %s and %s wei; want each paid once", a, b)
	}
}
