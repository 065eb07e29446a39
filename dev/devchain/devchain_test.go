package devchain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

func startChain(t *testing.T, cfg Config) (*Chain, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c, ctx
}

// dial connects to the chain over its HTTP endpoint, as the engine does.
func dial(t *testing.T, c *Chain) *ethclient.Client {
	t.Helper()
	ec, err := ethclient.Dial(c.URL)
	if err != nil {
		t.Fatalf("dial %s: %v", c.URL, err)
	}
	t.Cleanup(ec.Close)
	return ec
}

func freshAddress(t *testing.T) common.Address {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return crypto.PubkeyToAddress(key.PublicKey)
}

func usdc(whole int64) *big.Int { return new(big.Int).Mul(big.NewInt(whole), big.NewInt(1e6)) }

func mustReceipt(t *testing.T, ctx context.Context, c *Chain, h common.Hash) *types.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := c.Mine(ctx, h)
	if err != nil {
		t.Fatalf("WaitMined(%s): %v", h, err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("tx %s reverted", h)
	}
	return r
}

func TestStartServesHTTPWithFundedAccounts(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{})
	ec := dial(t, c)

	if !strings.HasPrefix(c.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want a loopback http URL", c.URL)
	}
	id, err := ec.ChainID(ctx)
	if err != nil || id.Int64() != 1337 || c.ChainID.Int64() != 1337 {
		t.Fatalf("ChainID = %v, %v (chain says %v), want 1337", id, err, c.ChainID)
	}
	var netVersion, clientVersion string
	if err := ec.Client().CallContext(ctx, &netVersion, "net_version"); err != nil || netVersion != "1337" {
		t.Errorf("net_version = %q, %v", netVersion, err)
	}
	if err := ec.Client().CallContext(ctx, &clientVersion, "web3_clientVersion"); err != nil || clientVersion == "" {
		t.Errorf("web3_clientVersion = %q, %v", clientVersion, err)
	}
	head, err := ec.BlockNumber(ctx)
	if err != nil || head == 0 {
		t.Fatalf("BlockNumber = %d, %v; want the set-up blocks", head, err)
	}

	// The token reads as USDC to anything using the ERC-20 ABI over HTTP.
	token := bindings.NewDevUSDC()
	inst := token.Instance(ec, c.Token)
	call := &bind.CallOpts{Context: ctx}
	if s, err := bind.Call(inst, call, token.PackSymbol(), token.UnpackSymbol); err != nil || s != "USDC" {
		t.Errorf("symbol = %q, %v", s, err)
	}
	if s, err := bind.Call(inst, call, token.PackName(), token.UnpackName); err != nil || s != "Dev USD Coin" {
		t.Errorf("name = %q, %v", s, err)
	}
	if d, err := bind.Call(inst, call, token.PackDecimals(), token.UnpackDecimals); err != nil || d != USDCDecimals {
		t.Errorf("decimals = %d, %v", d, err)
	}
	if o, err := bind.Call(inst, call, token.PackOwner(), token.UnpackOwner); err != nil || o != c.Deployer.Address {
		t.Errorf("owner = %s, %v; want deployer %s", o, err, c.Deployer.Address)
	}
	supply, err := bind.Call(inst, call, token.PackTotalSupply(), token.UnpackTotalSupply)
	if want := usdc(AccountUSDC * defaultAccounts); err != nil || supply.Cmp(want) != 0 {
		t.Errorf("totalSupply = %v, %v; want %v", supply, err, want)
	}

	if len(c.Accounts) != defaultAccounts {
		t.Fatalf("%d accounts, want %d", len(c.Accounts), defaultAccounts)
	}
	for i, a := range c.Accounts {
		if crypto.PubkeyToAddress(a.Key.PublicKey) != a.Address {
			t.Errorf("account %d: key does not match address", i)
		}
		bal, err := ec.BalanceAt(ctx, a.Address, nil)
		if err != nil || bal.Cmp(ether(AccountETH)) != 0 {
			t.Errorf("account %d: ETH balance = %v, %v; want %d ETH", i, bal, err, AccountETH)
		}
		tok, err := bind.Call(inst, call, token.PackBalanceOf(a.Address), token.UnpackBalanceOf)
		if err != nil || tok.Cmp(usdc(AccountUSDC)) != 0 {
			t.Errorf("account %d: USDC balance = %v, %v", i, tok, err)
		}
	}

	// Keys are derived, so a restart gives the same accounts and contracts.
	again, _ := startChain(t, Config{Accounts: 1})
	if again.Accounts[0].Address != c.Accounts[0].Address || again.Token != c.Token || again.PriceFeed != c.PriceFeed {
		t.Errorf("second chain differs: account %s token %s feed %s; first: %s %s %s",
			again.Accounts[0].Address, again.Token, again.PriceFeed, c.Accounts[0].Address, c.Token, c.PriceFeed)
	}
	if again.URL == c.URL {
		t.Errorf("both chains on %s", c.URL)
	}
}

func TestTokenPaymentOverHTTP(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{})
	ec := dial(t, c)
	payer, merchant := c.Accounts[0], freshAddress(t)
	amount := big.NewInt(12_345_678) // 12.345678 USDC

	// Sign and send through the HTTP endpoint, as an external wallet would.
	token := bindings.NewDevUSDC()
	opts := bind.NewKeyedTransactor(payer.Key, c.ChainID)
	opts.Context = ctx
	tx, err := bind.Transact(token.Instance(ec, c.Token), opts, token.PackTransfer(merchant, amount))
	if err != nil {
		t.Fatalf("transfer over HTTP: %v", err)
	}
	if _, pending, err := ec.TransactionByHash(ctx, tx.Hash()); err != nil || !pending {
		t.Fatalf("TransactionByHash before Commit: pending=%v, %v; want pending", pending, err)
	}
	c.Commit()

	r, err := ec.TransactionReceipt(ctx, tx.Hash())
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("receipt = %+v, %v", r, err)
	}
	bal, err := bind.Call(token.Instance(ec, c.Token), &bind.CallOpts{Context: ctx},
		token.PackBalanceOf(merchant), token.UnpackBalanceOf)
	if err != nil || bal.Cmp(amount) != 0 {
		t.Errorf("merchant balance = %v, %v; want %v", bal, err, amount)
	}
	if bal, err := c.TokenBalance(ctx, payer.Address); err != nil || bal.Cmp(new(big.Int).Sub(usdc(AccountUSDC), amount)) != 0 {
		t.Errorf("payer balance = %v, %v", bal, err)
	}

	// The Transfer log, found the way a chainwatch workflow finds deposits: by the
	// event's topic and the recipient's address.
	transferTopic := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	logs, err := ec.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: r.BlockNumber,
		ToBlock:   r.BlockNumber,
		Addresses: []common.Address{c.Token},
		Topics:    [][]common.Hash{{transferTopic}, nil, {common.BytesToHash(merchant.Bytes())}},
	})
	if err != nil || len(logs) != 1 {
		t.Fatalf("FilterLogs = %d logs, %v; want 1", len(logs), err)
	}
	ev, err := token.UnpackTransferEvent(&logs[0])
	if err != nil {
		t.Fatalf("UnpackTransferEvent: %v", err)
	}
	if ev.From != payer.Address || ev.To != merchant || ev.Value.Cmp(amount) != 0 || logs[0].TxHash != tx.Hash() {
		t.Errorf("Transfer event = %+v (tx %s)", ev, logs[0].TxHash)
	}

	// eth_getBlockByNumber with full transactions, decoded by ethclient
	// and raw, since the engine's scanner may read either way.
	block, err := ec.BlockByNumber(ctx, r.BlockNumber)
	if err != nil {
		t.Fatalf("BlockByNumber: %v", err)
	}
	if len(block.Transactions()) != 1 || block.Transactions()[0].Hash() != tx.Hash() || block.Hash() != r.BlockHash {
		t.Errorf("block %d has %d txs, hash %s; want the transfer in %s", block.NumberU64(), len(block.Transactions()), block.Hash(), r.BlockHash)
	}
	var raw struct {
		Hash         common.Hash `json:"hash"`
		Timestamp    string      `json:"timestamp"`
		Transactions []struct {
			Hash  common.Hash     `json:"hash"`
			From  common.Address  `json:"from"`
			To    *common.Address `json:"to"`
			Input string          `json:"input"`
		} `json:"transactions"`
	}
	if err := ec.Client().CallContext(ctx, &raw, "eth_getBlockByNumber", "latest", true); err != nil {
		t.Fatalf("eth_getBlockByNumber: %v", err)
	}
	if raw.Hash != r.BlockHash || len(raw.Transactions) != 1 {
		t.Fatalf("latest block = %+v", raw)
	}
	if got := raw.Transactions[0]; got.Hash != tx.Hash() || got.From != payer.Address || got.To == nil || *got.To != c.Token {
		t.Errorf("full tx = %+v", got)
	}

	// Blocks get strictly increasing timestamps even when mined within
	// the same second.
	prev, err := ec.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.Commit()
		h, err := ec.HeaderByNumber(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h.Time <= prev.Time || h.Number.Uint64() != prev.Number.Uint64()+1 {
			t.Errorf("block %d time %d after block %d time %d", h.Number, h.Time, prev.Number, prev.Time)
		}
		prev = h
	}
}

func TestTransferHelpers(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{Accounts: 2})
	ec := dial(t, c)
	to := freshAddress(t)

	wei := ether(3)
	native, err := c.TransferNative(ctx, c.Accounts[1], to, wei)
	if err != nil {
		t.Fatalf("TransferNative: %v", err)
	}
	// Several sends from one account before a block: each must get its
	// own nonce although the pool has not promoted the previous ones yet.
	var tokenTxs []common.Hash
	for i := range 5 {
		h, err := c.TransferToken(ctx, c.Accounts[0], to, usdc(int64(i+1)))
		if err != nil {
			t.Fatalf("TransferToken %d: %v", i, err)
		}
		tokenTxs = append(tokenTxs, h)
	}
	c.Commit()

	mustReceipt(t, ctx, c, native)
	for _, h := range tokenTxs {
		mustReceipt(t, ctx, c, h)
	}
	if bal, err := ec.BalanceAt(ctx, to, nil); err != nil || bal.Cmp(wei) != 0 {
		t.Errorf("native balance = %v, %v; want %v", bal, err, wei)
	}
	if bal, err := c.TokenBalance(ctx, to); err != nil || bal.Cmp(usdc(15)) != 0 {
		t.Errorf("token balance = %v, %v; want 15 USDC", bal, err)
	}

	// A transfer the payer cannot cover fails at estimation, not on chain.
	if _, err := c.TransferToken(ctx, c.Accounts[1], to, usdc(AccountUSDC+1)); err == nil {
		t.Error("TransferToken beyond the balance succeeded")
	}
	// Only the deployer mints.
	token := bindings.NewDevUSDC()
	opts := bind.NewKeyedTransactor(c.Accounts[0].Key, c.ChainID)
	opts.Context = ctx
	if _, err := bind.Transact(token.Instance(ec, c.Token), opts, token.PackMint(to, usdc(1))); err == nil ||
		!strings.Contains(err.Error(), "not owner") {
		t.Errorf("mint by a dev account: %v, want not owner", err)
	}
}

func TestPriceFeed(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{Accounts: 1, ETHPriceUSD: 2500})
	ec := dial(t, c)
	feed := bindings.NewDevPriceFeed()
	inst := feed.Instance(ec, c.PriceFeed)
	call := &bind.CallOpts{Context: ctx}

	if d, err := bind.Call(inst, call, feed.PackDecimals(), feed.UnpackDecimals); err != nil || d != PriceFeedDecimals {
		t.Errorf("decimals = %d, %v", d, err)
	}
	if s, err := bind.Call(inst, call, feed.PackDescription(), feed.UnpackDescription); err != nil || s != "ETH / USD" {
		t.Errorf("description = %q, %v", s, err)
	}
	if v, err := bind.Call(inst, call, feed.PackVersion(), feed.UnpackVersion); err != nil || v.Sign() <= 0 {
		t.Errorf("version = %v, %v", v, err)
	}
	round, err := bind.Call(inst, call, feed.PackLatestRoundData(), feed.UnpackLatestRoundData)
	if err != nil {
		t.Fatalf("latestRoundData: %v", err)
	}
	if want := big.NewInt(2500e8); round.Answer.Cmp(want) != 0 || round.RoundId.Int64() != 1 || round.AnsweredInRound.Int64() != 1 {
		t.Errorf("initial round = %+v, want answer %v in round 1", round, want)
	}

	price := big.NewInt(3_100_55_000_000) // 3100.55 USD
	if err := c.SetETHPrice(ctx, price); err != nil {
		t.Fatalf("SetETHPrice: %v", err)
	}
	round, err = bind.Call(inst, call, feed.PackLatestRoundData(), feed.UnpackLatestRoundData)
	if err != nil {
		t.Fatalf("latestRoundData: %v", err)
	}
	head, err := ec.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if round.Answer.Cmp(price) != 0 || round.RoundId.Int64() != 2 || round.AnsweredInRound.Int64() != 2 ||
		round.UpdatedAt.Uint64() != head.Time || round.StartedAt.Uint64() != head.Time {
		t.Errorf("round after SetETHPrice = %+v, want %v in round 2 at %d", round, price, head.Time)
	}

	opts := bind.NewKeyedTransactor(c.Accounts[0].Key, c.ChainID)
	opts.Context = ctx
	if _, err := bind.Transact(inst, opts, feed.PackSetAnswer(big.NewInt(1))); err == nil ||
		!strings.Contains(err.Error(), "not owner") {
		t.Errorf("setAnswer by a dev account: %v, want not owner", err)
	}
}

// TestReorg pins down what a reorg through Fork does, since the engine's
// reorg handling is tested against it: the abandoned block's transactions
// go back to the pool and are mined again on the new branch, in a block
// with another hash; with Rollback after Fork they are gone for good.
func TestReorg(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{Accounts: 1})
	ec := dial(t, c)
	payer := c.Accounts[0]

	reorg := func(t *testing.T, drop bool) (tx common.Hash, orig *types.Receipt, merchant common.Address) {
		merchant = freshAddress(t)
		tx, err := c.TransferToken(ctx, payer, merchant, usdc(5))
		if err != nil {
			t.Fatalf("TransferToken: %v", err)
		}
		c.Commit()
		orig = mustReceipt(t, ctx, c, tx)
		block, err := ec.BlockByHash(ctx, orig.BlockHash)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Fork(block.ParentHash()); err != nil {
			t.Fatalf("Fork: %v", err)
		}
		if n, err := ec.BlockNumber(ctx); err != nil || n != orig.BlockNumber.Uint64()-1 {
			t.Errorf("head right after Fork = %d, %v; want the parent %d", n, err, orig.BlockNumber.Uint64()-1)
		}
		if drop {
			c.Rollback()
		}
		c.Commit()
		c.Commit()
		n, err := ec.BlockNumber(ctx)
		if err != nil || n != orig.BlockNumber.Uint64()+1 {
			t.Errorf("head after reorg = %d, %v; want %d", n, err, orig.BlockNumber.Uint64()+1)
		}
		h, err := ec.HeaderByNumber(ctx, orig.BlockNumber)
		if err != nil {
			t.Fatal(err)
		}
		if h.Hash() == orig.BlockHash {
			t.Errorf("block %d still %s after the reorg", orig.BlockNumber, orig.BlockHash)
		}
		if _, err := ec.BlockByHash(ctx, orig.BlockHash); err != nil {
			t.Errorf("abandoned block %s no longer served by hash: %v", orig.BlockHash, err)
		}
		return tx, orig, merchant
	}

	t.Run("tx mined again", func(t *testing.T) {
		tx, orig, merchant := reorg(t, false)
		r, err := ec.TransactionReceipt(ctx, tx)
		if err != nil {
			t.Fatalf("receipt after reorg: %v", err)
		}
		if r.BlockHash == orig.BlockHash || r.BlockNumber.Cmp(orig.BlockNumber) != 0 {
			t.Errorf("receipt in block %d %s; want block %d with a new hash", r.BlockNumber, r.BlockHash, orig.BlockNumber)
		}
		if bal, err := c.TokenBalance(ctx, merchant); err != nil || bal.Cmp(usdc(5)) != 0 {
			t.Errorf("merchant balance = %v, %v; want 5 USDC", bal, err)
		}
	})
	t.Run("tx dropped", func(t *testing.T) {
		tx, _, merchant := reorg(t, true)
		if r, err := ec.TransactionReceipt(ctx, tx); !errors.Is(err, ethereum.NotFound) {
			t.Errorf("receipt after reorg and rollback = %+v, %v; want not found", r, err)
		}
		if bal, err := c.TokenBalance(ctx, merchant); err != nil || bal.Sign() != 0 {
			t.Errorf("merchant balance = %v, %v; want 0", bal, err)
		}
		// The payer's nonce went back with the block: sending again works.
		h, err := c.TransferToken(ctx, payer, merchant, usdc(1))
		if err != nil {
			t.Fatalf("TransferToken after rollback: %v", err)
		}
		c.Commit()
		mustReceipt(t, ctx, c, h)
	})
}

func TestBlockInterval(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{Accounts: 1, BlockInterval: 200 * time.Millisecond})
	ec := dial(t, c)

	start, err := ec.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, func() (bool, string) {
		n, err := ec.BlockNumber(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n >= start+3, fmt.Sprintf("head went from %d to %d with a 200ms interval", start, n)
	})

	// Commit and sends race the miner safely, and WaitMined needs no Commit.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { c.Commit() })
	}
	h, err := c.TransferToken(ctx, c.Accounts[0], freshAddress(t), usdc(1))
	if err != nil {
		t.Fatalf("TransferToken: %v", err)
	}
	wg.Wait()
	mustReceipt(t, ctx, c, h)
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if c, err := Start(ctx, Config{Addr: l.Addr().String()}); err == nil {
		c.Close()
		t.Error("Start on a taken port succeeded")
	}
	// The backend panics when its node cannot bind; that must come back
	// as an error that says why, so a picked port can be retried.
	if b, err := newBackend("127.0.0.1", l.Addr().(*net.TCPAddr).Port, nil); !errors.Is(err, syscall.EADDRINUSE) {
		if b != nil {
			b.Close()
		}
		t.Errorf("newBackend on a taken port = %v, want EADDRINUSE", err)
	}
	if _, err := Start(ctx, Config{Accounts: -1}); err == nil {
		t.Error("Start with -1 accounts succeeded")
	}
	if _, err := Start(ctx, Config{Addr: "nonsense"}); err == nil {
		t.Error("Start with a bad address succeeded")
	}
}

func TestCloseIsFinal(t *testing.T) {
	t.Parallel()
	c, err := Start(context.Background(), Config{Accounts: 1, BlockInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if h := c.Commit(); h != (common.Hash{}) {
		t.Errorf("Commit after Close = %s", h)
	}
	if err := c.Fork(common.Hash{}); !errors.Is(err, errClosed) {
		t.Errorf("Fork after Close = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if ec, err := ethclient.DialContext(ctx, c.URL); err == nil {
		if _, err := ec.BlockNumber(ctx); err == nil {
			t.Error("HTTP endpoint still answers after Close")
		}
		ec.Close()
	}
}
