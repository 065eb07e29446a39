package sweep

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/keys"
)

// world is a dev chain with its USDC (permits and authorisations), a plain
// token like USDT, a merchant's deposit key, a relayer and a destination.
type world struct {
	chain    *devchain.Chain
	client   *ethclient.Client
	tether   common.Address
	xprv     string
	wallet   Wallet
	relayer  *ecdsa.PrivateKey
	dest     common.Address
	usdc     Asset
	usdt     Asset
	eth      Asset
	deployer devchain.Account
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	chain, err := devchain.Start(ctx, devchain.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	client, err := ethclient.Dial(chain.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	w := &world{chain: chain, client: client, deployer: chain.Accounts[4]}
	var deployed common.Hash
	w.tether, deployed, err = chain.Deploy(ctx, w.deployer, common.FromHex(bindings.DevTokenMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	w.mine(t, deployed) // the mint's gas is estimated against the code
	w.mine(t, must(t)(chain.Transact(ctx, w.deployer, w.tether, nil, bindings.NewDevToken().PackMint(w.deployer.Address, big.NewInt(1e12)))))
	seed := sha256.Sum256([]byte(t.Name()))
	if w.xprv, _, err = keys.NewDevKey(seed[:]); err != nil {
		t.Fatal(err)
	}
	if w.wallet, err = ParseWallet(w.xprv); err != nil {
		t.Fatal(err)
	}
	if w.relayer, err = crypto.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	w.mine(t, must(t)(chain.TransferNative(ctx, chain.Accounts[3], crypto.PubkeyToAddress(w.relayer.PublicKey), ether(10))))
	w.dest = common.Address{0xde, 0x57}
	w.usdc = Asset{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Token: chain.Token}
	w.usdt = Asset{ID: "usdt-devnet", Symbol: "USDT", Decimals: 6, Token: w.tether}
	w.eth = Asset{ID: "eth-devnet", Symbol: "ETH", Decimals: 18}
	return w
}

func must(t *testing.T) func(common.Hash, error) common.Hash {
	return func(h common.Hash, err error) common.Hash {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
}

func ether(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

func (w *world) mine(t *testing.T, h common.Hash) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := w.chain.WaitMined(ctx, h)
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("%s not mined: %v", h, err)
	}
}

// address returns deposit address index.
func (w *world) address(t *testing.T, index uint32, ended bool) Address {
	t.Helper()
	_, a, err := w.wallet.Key(index)
	if err != nil {
		t.Fatal(err)
	}
	return Address{Index: index, Address: a, SessionID: "cs_test", Ended: ended}
}

// pay sends amount of asset to a from a dev account.
func (w *world) pay(t *testing.T, a Address, asset Asset, amount *big.Int) {
	t.Helper()
	ctx := context.Background()
	switch asset.Token {
	case common.Address{}:
		w.mine(t, must(t)(w.chain.TransferNative(ctx, w.chain.Accounts[1], a.Address, amount)))
	case w.chain.Token:
		w.mine(t, must(t)(w.chain.TransferToken(ctx, w.chain.Accounts[1], a.Address, amount)))
	default:
		w.mine(t, must(t)(w.chain.Transact(ctx, w.deployer, asset.Token, nil, bindings.NewDevToken().PackTransfer(a.Address, amount))))
	}
}

func (w *world) balance(t *testing.T, asset Asset, owner common.Address) *big.Int {
	t.Helper()
	ctx := context.Background()
	if asset.Native() {
		b, err := w.client.BalanceAt(ctx, owner, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b, err := call[*big.Int](ctx, w.client, asset.Token, "balanceOf", owner)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (w *world) config(t *testing.T) Config {
	return Config{Chain: w.client, Wallet: w.wallet, Destination: w.dest, Relayer: w.relayer,
		Journal: filepath.Join(t.TempDir(), "journal.json"), Wait: 30 * time.Second}
}

func usdc(n int64) *big.Int { return big.NewInt(n * 1e6) }

// Every asset leaves every ended session's address for the destination,
// each the way it can: USDC by an authorisation the relayer submits, the
// plain token by the address's own transfer with exactly its gas sent
// first, the native coin paying its own gas. A second run finds nothing
// left to move but unused gas.
func TestSweepMovesEveryAssetOnceAndLeavesOpenSessionsAlone(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	addrs := []Address{w.address(t, 0, true), w.address(t, 1, true), w.address(t, 2, true), w.address(t, 3, true),
		w.address(t, 4, true), w.address(t, 5, false)}
	w.pay(t, addrs[0], w.usdc, usdc(5))
	w.pay(t, addrs[1], w.usdt, usdc(7))
	w.pay(t, addrs[2], w.eth, ether(1))
	w.pay(t, addrs[3], w.usdc, usdc(3))
	w.pay(t, addrs[3], w.eth, big.NewInt(5e17))
	w.pay(t, addrs[4], w.usdt, usdc(2))
	w.pay(t, addrs[4], w.eth, big.NewInt(1e17))
	w.pay(t, addrs[5], w.usdc, usdc(11))
	missing := Asset{ID: "dai-devnet", Symbol: "DAI", Decimals: 18, Token: common.Address{0xda, 0x1}}
	assets := []Asset{w.eth, w.usdc, w.usdt, missing}
	cfg := w.config(t)
	relayer := crypto.PubkeyToAddress(w.relayer.PublicKey)

	plan, err := MakePlan(ctx, cfg, addrs, assets)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range plan.Steps {
		got = append(got, s.Asset.Symbol+":"+string(s.Method))
	}
	want := "[USDC:authorization USDT:transfer ETH:native USDC:authorization ETH:native USDT:transfer ETH:native]"
	if fmt.Sprint(got) != want {
		t.Fatalf("plan methods %v; want %s", got, want)
	}
	if plan.Steps[1].TopUp.Cmp(plan.Steps[1].Fee) != 0 || plan.Steps[5].TopUp.Sign() != 0 {
		t.Fatalf("top-ups %s and %s: the gasless address gets its whole fee, the one holding ETH none", plan.Steps[1].TopUp, plan.Steps[5].TopUp)
	}
	if len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], "no contract at") {
		t.Fatalf("warnings %v; want the asset without a contract named", plan.Warnings)
	}
	if len(plan.Skipped) != 1 || plan.Skipped[0].Index != 5 || !strings.Contains(plan.Skipped[0].Reason, "still takes payments") {
		t.Fatalf("skipped %+v; want the open session's address", plan.Skipped)
	}
	var printed bytes.Buffer
	plan.Print(&printed, w.eth)
	for _, s := range []string{"Total to " + w.dest.Hex() + ": 8 USDC, 9 USDT", "topped up with", "The relayer " + relayer.Hex() + " pays about", "Left at index 5"} {
		if !strings.Contains(printed.String(), s) {
			t.Fatalf("the printed plan lacks %q:\n%s", s, printed.String())
		}
	}
	if w.balance(t, w.usdc, w.dest).Sign() != 0 {
		t.Fatal("planning moved funds")
	}

	relayerBefore := w.balance(t, w.eth, relayer)
	var log bytes.Buffer
	outcomes, err := Execute(ctx, cfg, plan, &log)
	if err != nil {
		t.Fatalf("execute: %v\n%s", err, log.String())
	}
	nativeSent := new(big.Int)
	for _, o := range outcomes {
		if o.Err != nil {
			t.Fatalf("index %d %s: %v\n%s", o.Step.Index, o.Step.Asset.Symbol, o.Err, log.String())
		}
		if o.Step.Asset.Native() {
			nativeSent.Add(nativeSent, o.Amount)
		}
	}
	if b := w.balance(t, w.usdc, w.dest); b.Cmp(usdc(8)) != 0 {
		t.Fatalf("destination holds %s USDC base units; want 8000000", b)
	}
	if b := w.balance(t, w.usdt, w.dest); b.Cmp(usdc(9)) != 0 {
		t.Fatalf("destination holds %s USDT base units; want 9000000", b)
	}
	if b := w.balance(t, w.eth, w.dest); b.Cmp(nativeSent) != 0 || b.Cmp(big.NewInt(16e17)) >= 0 || b.Cmp(big.NewInt(159e16)) <= 0 {
		t.Fatalf("destination holds %s wei; want what the native steps sent (%s), 1.6 ETH less gas", b, nativeSent)
	}
	for _, a := range addrs[:5] {
		for _, asset := range []Asset{w.usdc, w.usdt} {
			if b := w.balance(t, asset, a.Address); b.Sign() != 0 {
				t.Fatalf("index %d still holds %s %s", a.Index, b, asset.Symbol)
			}
		}
	}
	if b := w.balance(t, w.eth, addrs[2].Address); b.Sign() != 0 {
		t.Fatalf("index 2 keeps %s wei: the native sweep must leave nothing", b)
	}
	if spent := new(big.Int).Sub(relayerBefore, w.balance(t, w.eth, relayer)); spent.Cmp(plan.RelayerCost()) > 0 || spent.Sign() <= 0 {
		t.Fatalf("the relayer spent %s wei; the plan said at most %s", spent, plan.RelayerCost())
	}
	if b := w.balance(t, w.usdc, addrs[5].Address); b.Cmp(usdc(11)) != 0 {
		t.Fatalf("the open session's address holds %s; it must be left alone", b)
	}

	again, err := MakePlan(ctx, cfg, addrs, assets)
	if err != nil {
		t.Fatal(err)
	}
	// Only the gas a transfer did not use may be left: the top-up covered
	// the estimate, and the gas price may since have fallen enough that
	// sending it on costs less than it is.
	for _, s := range again.Steps {
		if s.Method != Native || s.Index != 1 || s.Amount.Cmp(plan.Steps[1].TopUp) >= 0 {
			t.Fatalf("a second run plans %+v; everything was moved", again.Steps)
		}
	}
}

// A token with a permit but no authorisation is moved by the relayer: the
// address's signed permit, then the relayer's transferFrom.
func TestSweepMovesAPermitTokenWithTheRelayersGas(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a := w.address(t, 7, true)
	w.pay(t, a, w.usdc, usdc(4))
	cfg := w.config(t)
	cfg.skip = map[Method]bool{Authorization: true}
	plan, err := MakePlan(ctx, cfg, []Address{a}, []Asset{w.usdc, w.eth})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 1 || plan.Steps[0].Method != Permit {
		t.Fatalf("plan %+v; want one permit", plan.Steps)
	}
	outcomes, err := Execute(ctx, cfg, plan, &bytes.Buffer{})
	if err != nil || outcomes[0].Err != nil || len(outcomes[0].Hashes) != 2 {
		t.Fatalf("execute: %v %+v", err, outcomes)
	}
	if b := w.balance(t, w.usdc, w.dest); b.Cmp(usdc(4)) != 0 {
		t.Fatalf("destination holds %s; want 4 USDC", b)
	}
	if b := w.balance(t, w.eth, a.Address); b.Sign() != 0 {
		t.Fatalf("the address was sent %s wei: a permit needs no gas of its own", b)
	}
}

// lostSends is a node that drops every transaction it is sent, as if the
// sweep stopped right after writing each to its journal.
type lostSends struct{ *ethclient.Client }

func (lostSends) SendTransaction(context.Context, *types.Transaction) error { return nil }

// A sweep cut off after signing resumes from its journal: the same signed
// transactions are sent again and mined once, and the fresh plan finds
// nothing left.
func TestSweepResumesFromItsJournal(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a := w.address(t, 2, true)
	b := w.address(t, 3, true)
	w.pay(t, a, w.usdc, usdc(6))
	w.pay(t, b, w.usdt, usdc(1))
	cfg := w.config(t)
	plan, err := MakePlan(ctx, cfg, []Address{a, b}, []Asset{w.usdc, w.usdt, w.eth})
	if err != nil {
		t.Fatal(err)
	}
	cut := cfg
	cut.Chain, cut.Wait = lostSends{w.client}, time.Second
	if _, err := Execute(ctx, cut, plan, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "run the sweep again") {
		t.Fatalf("a round never mined: %v", err)
	}
	if w.balance(t, w.usdc, w.dest).Sign() != 0 {
		t.Fatal("nothing was sent, yet funds moved")
	}
	journal, err := os.ReadFile(cfg.Journal)
	if err != nil || !strings.Contains(string(journal), "authorization") || !strings.Contains(string(journal), "gas top-up") {
		t.Fatalf("the journal lacks the signed transactions: %v\n%s", err, journal)
	}
	if info, err := os.Stat(cfg.Journal); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("journal mode %v, %v; it holds signed transactions, for its owner only", info.Mode(), err)
	}

	var log bytes.Buffer
	mined, err := Resume(ctx, cfg, &log)
	if err != nil || mined != 2 {
		t.Fatalf("resume: %d mined, %v\n%s", mined, err, log.String())
	}
	if got := w.balance(t, w.usdc, w.dest); got.Cmp(usdc(6)) != 0 {
		t.Fatalf("after resuming the destination holds %s; want the authorisation's 6 USDC", got)
	}
	// The top-up arrived; the token transfer was never signed. The new
	// plan moves the token with the gas now there, and asks no top-up.
	plan, err = MakePlan(ctx, cfg, []Address{a, b}, []Asset{w.usdc, w.usdt, w.eth})
	if err != nil {
		t.Fatal(err)
	}
	// (What the top-up leaves over at today's gas price is swept too.)
	if len(plan.Steps) == 0 || plan.Steps[0].Method != Transfer || plan.Steps[0].TopUp.Sign() != 0 || len(plan.Steps) > 2 ||
		len(plan.Steps) == 2 && plan.Steps[1].Method != Native {
		t.Fatalf("plan after resuming %+v; want the token's transfer with no top-up", plan.Steps)
	}
	if _, err := Execute(ctx, cfg, plan, &log); err != nil {
		t.Fatal(err)
	}
	if got := w.balance(t, w.usdt, w.dest); got.Cmp(usdc(1)) != 0 {
		t.Fatalf("destination holds %s USDT; want 1", got)
	}
	if mined, err := Resume(ctx, cfg, &log); err != nil || mined != 0 {
		t.Fatalf("a finished journal resumed %d, %v", mined, err)
	}
}

// A key that does not derive the listed addresses is refused before
// anything is read or signed, and so is an extended public key.
func TestSweepRefusesAnotherKey(t *testing.T) {
	w := newWorld(t)
	a := w.address(t, 0, true)
	seed := sha256.Sum256([]byte("another wallet"))
	xprv, xpub, err := keys.NewDevKey(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	other, err := ParseWallet(xprv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := w.config(t)
	cfg.Wallet = other
	if _, err := MakePlan(context.Background(), cfg, []Address{a}, []Asset{w.usdc}); err == nil || !strings.Contains(err.Error(), "not this project's deposit key") {
		t.Fatalf("another key: %v", err)
	}
	if _, err := ParseWallet(xpub); err == nil || !strings.Contains(err.Error(), "extended public key") {
		t.Fatalf("an xpub: %v", err)
	}
}

// A relayer that cannot pay for the plan stops it before anything is
// sent.
func TestSweepStopsWhenTheRelayerCannotPay(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a := w.address(t, 1, true)
	w.pay(t, a, w.usdc, usdc(2))
	cfg := w.config(t)
	poor, _ := crypto.GenerateKey()
	cfg.Relayer = poor
	plan, err := MakePlan(ctx, cfg, []Address{a}, []Asset{w.usdc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(ctx, cfg, plan, &bytes.Buffer{}); !errors.Is(err, ErrRelayerShort) {
		t.Fatalf("execute with a relayer holding nothing: %v", err)
	}
	if _, err := os.Stat(cfg.Journal); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a journal was written: %v", err)
	}
}

// Until an ended session's late-payment window is over, a transfer to its
// address still counts as a payment: no gas top-up is sent there, while
// a token the relayer moves by authorisation leaves at once.
func TestSweepSendsNoTopUpInsideTheLateWindow(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	plain, signed := w.address(t, 0, true), w.address(t, 1, true)
	plain.LateUntil = time.Now().Add(time.Hour)
	signed.LateUntil = plain.LateUntil
	w.pay(t, plain, w.usdt, usdc(3))
	w.pay(t, signed, w.usdc, usdc(3))
	plan, err := MakePlan(ctx, w.config(t), []Address{plain, signed}, []Asset{w.usdt, w.usdc, w.eth})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 1 || plan.Steps[0].Method != Authorization {
		t.Fatalf("steps %+v; want the authorisation alone", plan.Steps)
	}
	if len(plan.Skipped) != 1 || plan.Skipped[0].Index != 0 || !strings.Contains(plan.Skipped[0].Reason, "would count as a payment") {
		t.Fatalf("skipped %+v; want the plain token inside its window", plan.Skipped)
	}
}

// The sweep signs for exactly the addresses the engine hands out: the
// wallet's key of index i has the address the project's xpub derives at i.
func TestWalletKeysAreTheDepositAddresses(t *testing.T) {
	seed := sha256.Sum256([]byte("deposit wallet"))
	xprv, xpub, err := keys.NewDevKey(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	w, err := ParseWallet(xprv)
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.ParseKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{0, 1, 2, 1000, 1<<31 - 1} {
		_, signs, err := w.Key(i)
		if err != nil {
			t.Fatal(err)
		}
		if deposit, err := k.DeriveAddress(i); err != nil || deposit != signs {
			t.Fatalf("index %d: the engine's address %s (%v), the sweep's %s", i, deposit.Hex(), err, signs.Hex())
		}
	}
	if _, _, err := w.Key(1 << 31); err == nil {
		t.Fatal("a hardened index was derived")
	}
}
