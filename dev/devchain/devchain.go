// Package devchain runs a development EVM chain for the engine's dev stack
// and end-to-end tests: go-ethereum's simulated backend, served over HTTP
// JSON-RPC so the engine talks to it exactly as it talks to a real node, with
// a 6-decimal "USDC" ERC-20 and a Chainlink-style ETH/USD price feed deployed
// at start, and a handful of funded accounts. Besides the eth, net and web3
// APIs it serves go-ethereum's debug API, with debug_traceTransaction and
// debug_traceBlockByNumber and the native tracers (callTracer among them),
// so native coin paid by a contract's internal call can be found.
//
// Everything is in memory and deterministic: the dev accounts' keys and the
// deployer's are derived from fixed labels, and the contracts are deployed
// with the deployer's first nonces, so the token and feed addresses are the
// same on every start and can be written into dev configuration.
package devchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/params"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
)

const (
	// USDCDecimals is the dev token's decimals, the same as USDC's on
	// mainnet so amounts mean the same in dev as in production.
	USDCDecimals = 6
	// PriceFeedDecimals is the dev price feed's decimals, the same as
	// Chainlink's USD feeds.
	PriceFeedDecimals = 8
	// AccountETH is what each dev account and the deployer hold at genesis,
	// in whole ETH.
	AccountETH = 1000
	// AccountUSDC is what is minted to each dev account at start, in whole
	// USDC.
	AccountUSDC = 1_000_000

	defaultAddr        = "127.0.0.1:0"
	defaultAccounts    = 5
	defaultETHPriceUSD = 3000

	// gasLimit is every block's gas limit: far more than dev traffic needs,
	// so a test never waits a block because the previous one was full.
	gasLimit = 100_000_000
	// mintBatch bounds how many mints are sent before a block is mined, to
	// stay well inside the transaction pool's per-account slots.
	mintBatch = 64
	// pollInterval is how often WaitMined looks for a receipt: blocks are
	// mined in-process, so a short poll keeps tests fast at little cost.
	pollInterval = 20 * time.Millisecond
)

var errClosed = errors.New("devchain: chain is closed")

// Config configures Start. The zero value is usable: a free loopback port,
// blocks only on Commit, five accounts and ETH at 3000 USD.
type Config struct {
	// Addr is the listen address for HTTP JSON-RPC; default "127.0.0.1:0",
	// which picks a free port. An unspecified host (0.0.0.0) listens on
	// every interface; the chain's URL then names the loopback address.
	Addr string
	// BlockInterval mines a block this often; 0 mines only on Commit (and
	// inside Start and SetETHPrice), which tests use to control the chain.
	BlockInterval time.Duration
	// Accounts is the number of funded dev accounts; default 5.
	Accounts int
	// ETHPriceUSD is the price feed's initial answer in whole USD (stored
	// with 8 decimals); default 3000.
	ETHPriceUSD int64
}

// Account is a funded dev account and its private key.
type Account struct {
	Address common.Address
	Key     *ecdsa.PrivateKey
}

// Chain is a running dev chain. Its exported fields are set by Start and
// must not be changed.
type Chain struct {
	paused    atomic.Bool    // the interval miner skips its turns
	URL       string         // HTTP JSON-RPC endpoint, http://HOST:PORT
	ChainID   *big.Int       // always 1337, the simulated backend's
	Token     common.Address // DevUSDC
	PriceFeed common.Address // DevPriceFeed (ETH / USD)
	Accounts  []Account      // each funded with AccountETH and AccountUSDC
	Deployer  Account        // deployed the contracts; the only minter and price setter

	backend *backend
	client  simulated.Client
	usdc    *bindings.DevUSDC
	feed    *bindings.DevPriceFeed

	// mu serialises everything that moves the head (Commit, Fork) with
	// Close, because the simulated beacon is not safe for concurrent use.
	mu     sync.Mutex
	closed bool

	// sendMu serialises sends so each gets the next nonce: the pool
	// promotes transactions asynchronously, so its pending nonce lags
	// right after a send and cannot be trusted on its own.
	sendMu sync.Mutex
	nonces map[common.Address]uint64

	stopMiner chan struct{}
	minerDone sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Start starts a dev chain, deploys the token and price feed, funds the
// accounts and mines until all of that is on chain. ctx bounds only the
// start; the chain runs until Close.
func Start(ctx context.Context, cfg Config) (*Chain, error) {
	if cfg.Addr == "" {
		cfg.Addr = defaultAddr
	}
	if cfg.Accounts == 0 {
		cfg.Accounts = defaultAccounts
	}
	if cfg.ETHPriceUSD == 0 {
		cfg.ETHPriceUSD = defaultETHPriceUSD
	}
	switch {
	case cfg.Accounts < 0:
		return nil, fmt.Errorf("devchain: accounts must be positive, got %d", cfg.Accounts)
	case cfg.ETHPriceUSD < 0:
		return nil, fmt.Errorf("devchain: eth price must be positive, got %d", cfg.ETHPriceUSD)
	case cfg.BlockInterval < 0:
		return nil, fmt.Errorf("devchain: block interval must not be negative, got %s", cfg.BlockInterval)
	}

	deployer, err := devAccount("paymentsd devchain deployer")
	if err != nil {
		return nil, err
	}
	accounts := make([]Account, cfg.Accounts)
	alloc := types.GenesisAlloc{deployer.Address: {Balance: ether(AccountETH)}}
	for i := range accounts {
		if accounts[i], err = DevAccount(i); err != nil {
			return nil, err
		}
		alloc[accounts[i].Address] = types.Account{Balance: ether(AccountETH)}
	}

	backend, url, err := startBackend(cfg.Addr, alloc)
	if err != nil {
		return nil, err
	}
	c := &Chain{
		URL:       url,
		ChainID:   big.NewInt(1337),
		Accounts:  accounts,
		Deployer:  deployer,
		backend:   backend,
		client:    backend.client,
		usdc:      bindings.NewDevUSDC(),
		feed:      bindings.NewDevPriceFeed(),
		nonces:    make(map[common.Address]uint64),
		stopMiner: make(chan struct{}),
	}
	if id, err := c.client.ChainID(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("devchain: read chain id: %w", err)
	} else if id.Cmp(c.ChainID) != 0 {
		c.Close()
		return nil, fmt.Errorf("devchain: chain id is %s, want %s", id, c.ChainID)
	}
	if err := c.setUp(ctx, new(big.Int).Mul(big.NewInt(cfg.ETHPriceUSD), big.NewInt(1e8))); err != nil {
		c.Close()
		return nil, fmt.Errorf("devchain: set up: %w", err)
	}
	if cfg.BlockInterval > 0 {
		c.minerDone.Add(1)
		go c.mine(cfg.BlockInterval)
	}
	return c, nil
}

// devAccount derives an account's key from a fixed label, so dev accounts
// (and the contract addresses the deployer's nonces give) are the same on
// every start.
// DevAccount returns the funded dev account i: its key is derived from a
// fixed label, so tools outside the chain's process can pay from it.
func DevAccount(i int) (Account, error) {
	return devAccount("paymentsd devchain account " + strconv.Itoa(i))
}

func devAccount(label string) (Account, error) {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(label)))
	if err != nil {
		return Account{}, fmt.Errorf("devchain: derive key %q: %w", label, err)
	}
	return Account{Address: crypto.PubkeyToAddress(key.PublicKey), Key: key}, nil
}

func ether(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether))
}

// setUp deploys the token and the price feed, then mints to each account.
// The deployments are mined before the mints are sent, because estimating
// a mint's gas needs the token's code on chain.
func (c *Chain) setUp(ctx context.Context, price *big.Int) error {
	usdcTx, err := c.send(ctx, c.Deployer, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		addr, tx, err := bind.DeployContract(opts, common.FromHex(bindings.DevUSDCMetaData.Bin), c.client, nil)
		c.Token = addr
		return tx, err
	})
	if err != nil {
		return fmt.Errorf("deploy token: %w", err)
	}
	feedTx, err := c.send(ctx, c.Deployer, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		addr, tx, err := bind.DeployContract(opts, common.FromHex(bindings.DevPriceFeedMetaData.Bin), c.client,
			c.feed.PackConstructor("ETH / USD", price))
		c.PriceFeed = addr
		return tx, err
	})
	if err != nil {
		return fmt.Errorf("deploy price feed: %w", err)
	}
	if err := c.commitAndCheck(ctx, usdcTx, feedTx); err != nil {
		return err
	}

	amount := new(big.Int).Mul(big.NewInt(AccountUSDC), big.NewInt(1e6))
	token := c.usdc.Instance(c.client, c.Token)
	var batch []common.Hash
	for i, a := range c.Accounts {
		tx, err := c.send(ctx, c.Deployer, func(opts *bind.TransactOpts) (*types.Transaction, error) {
			return bind.Transact(token, opts, c.usdc.PackMint(a.Address, amount))
		})
		if err != nil {
			return fmt.Errorf("mint to account %d: %w", i, err)
		}
		batch = append(batch, tx)
		if len(batch) == mintBatch || i == len(c.Accounts)-1 {
			if err := c.commitAndCheck(ctx, batch...); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// Close stops the miner and the chain, including its HTTP endpoint. It is
// safe to call more than once.
func (c *Chain) Close() error {
	c.closeOnce.Do(func() {
		close(c.stopMiner)
		c.minerDone.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.closed = true
		if err := c.backend.Close(); err != nil {
			c.closeErr = fmt.Errorf("devchain: close: %w", err)
		}
	})
	return c.closeErr
}

// Client returns an in-process client of the chain: no HTTP round trip,
// for code that runs in the same process, such as tests driving the chain.
func (c *Chain) Client() simulated.Client {
	return c.client
}
