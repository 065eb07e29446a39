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
	"maps"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/eth/tracers"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"

	// The native tracers (callTracer, prestateTracer, ...) register
	// themselves with the tracing API on import.
	_ "github.com/ethereum/go-ethereum/eth/tracers/native"

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

// startBackend starts the chain's node serving HTTP JSON-RPC on addr and
// returns it with the endpoint's URL. With port 0 the node picks a free
// port itself and the URL names the one it bound.
func startBackend(addr string, alloc types.GenesisAlloc) (*backend, string, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("devchain: listen address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1" // the node serves no HTTP at all with an empty host
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, "", fmt.Errorf("devchain: listen address %q: bad port", addr)
	}
	urlHost := host
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		urlHost = "127.0.0.1"
	}
	if port != 0 {
		if err := checkPort(host, port); err != nil {
			return nil, "", err
		}
	}
	b, err := newBackend(host, port, alloc)
	if err != nil {
		return nil, "", fmt.Errorf("devchain: start backend: %w", err)
	}
	_, bound, err := net.SplitHostPort(strings.TrimPrefix(b.node.HTTPEndpoint(), "http://"))
	if err != nil {
		b.Close()
		return nil, "", fmt.Errorf("devchain: read the bound port: %w", err)
	}
	return b, "http://" + net.JoinHostPort(urlHost, bound), nil
}

// backend is go-ethereum's simulated backend (ethclient/simulated) built
// here rather than by simulated.NewBackend, which hides its node: the same
// in-memory node and Ethereum service, mined by a simulated beacon, with
// go-ethereum's tracing API (debug_traceTransaction,
// debug_traceBlockByNumber and the rest, with the native tracers such as
// callTracer) registered and served over HTTP beside eth, net and web3.
type backend struct {
	node   *node.Node
	beacon *catalyst.SimulatedBeacon
	client *ethclient.Client
}

// newBackend builds and starts the chain's node on host:port (port 0 picks
// a free port). A port that cannot be bound comes back as an error that
// wraps the listen error, and so does a panic while building, since
// go-ethereum's constructors assume that little can fail.
func newBackend(host string, port int, alloc types.GenesisAlloc) (b *backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()

	// As simulated.NewBackend configures the node and the service.
	nc := node.DefaultConfig
	nc.DataDir = ""
	nc.P2P = p2p.Config{NoDiscovery: true}
	nc.HTTPHost = host
	nc.HTTPPort = port
	// debug brings the tracing API, but also the rest of go-ethereum's
	// debug namespace (profiling, setHead, ...): fine on a dev chain,
	// which must never be reachable from anywhere untrusted.
	nc.HTTPModules = []string{"eth", "net", "web3", "debug"}
	// Any Host header and origin: it is a dev chain, reached as
	// localhost, 127.0.0.1 or a compose service name, and from browser
	// checkouts.
	nc.HTTPVirtualHosts = []string{"*"}
	nc.HTTPCors = []string{"*"}

	// Every fork is active from genesis, so the system contracts those
	// forks call into must be there too; the caller's alloc wins.
	genesisAlloc := core.SystemContractAllocs()
	maps.Copy(genesisAlloc, alloc)
	ec := ethconfig.Defaults
	ec.Genesis = &core.Genesis{
		Config:   params.AllDevChainProtocolChanges,
		GasLimit: gasLimit,
		Alloc:    genesisAlloc,
		// A genesis at the epoch would make the first block look
		// decades stale to anything checking block age.
		Timestamp: uint64(time.Now().Unix()),
	}
	ec.SyncMode = ethconfig.FullSync
	ec.TxPool.NoLocals = true
	ec.LogNoHistory = true // unindexed log search, as the simulated backend
	ec.Miner.GasCeil = gasLimit

	stack, err := node.New(&nc)
	if err != nil {
		return nil, err
	}
	svc, err := eth.New(stack, &ec)
	if err != nil {
		stack.Close()
		return nil, err
	}
	stack.RegisterAPIs([]rpc.API{{
		Namespace: "eth",
		Service:   filters.NewFilterAPI(filters.NewFilterSystem(svc.APIBackend, filters.Config{})),
	}})
	stack.RegisterAPIs(tracers.APIs(svc.APIBackend))
	// A failed start (the HTTP port taken) closes the node itself.
	if err := stack.Start(); err != nil {
		return nil, err
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, svc)
	if err != nil {
		stack.Close()
		return nil, err
	}
	// As simulated.NewBackend: reorg back to genesis, so that the beacon's
	// view of the head is the chain's.
	if err := beacon.Fork(svc.BlockChain().GetCanonicalHash(0)); err != nil {
		beacon.Stop()
		stack.Close()
		return nil, err
	}
	return &backend{node: stack, beacon: beacon, client: ethclient.NewClient(stack.Attach())}, nil
}

// Close stops the node, and with it the HTTP endpoint.
func (b *backend) Close() error {
	b.client.Close()
	return errors.Join(b.beacon.Stop(), b.node.Close())
}

// checkPort fails early and clearly on a taken port, before the backend
// has allocated a whole chain only to fail binding it.
func checkPort(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("devchain: listen: %w", err)
	}
	return l.Close()
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

// commitAndCheck mines a block and fails unless every tx succeeded in it.
func (c *Chain) commitAndCheck(ctx context.Context, txs ...common.Hash) error {
	for _, h := range txs {
		r, err := c.Mine(ctx, h)
		if err != nil {
			return err
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return fmt.Errorf("tx %s reverted", h)
		}
	}
	return nil
}

// Mine commits blocks until tx is mined and returns its receipt. The pool
// takes a sent transaction in the background, so a block committed right
// after sending may not hold it yet: Mine commits again until it does, for
// ten seconds at most.
func (c *Chain) Mine(ctx context.Context, tx common.Hash) (*types.Receipt, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.Commit()
		r, err := c.client.TransactionReceipt(ctx, tx)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ethereum.NotFound) {
			return nil, fmt.Errorf("devchain: receipt of %s: %w", tx, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("devchain: %s not mined: is it in the pool?", tx)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// mine commits a block every interval until Close. Empty blocks are mined
// too, as on a real chain, so confirmations keep counting up. Block
// timestamps have one-second resolution and must increase, so intervals
// under a second make the chain's clock run ahead of the wall clock.
func (c *Chain) mine(interval time.Duration) {
	defer c.minerDone.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.stopMiner:
			return
		case <-t.C:
			if !c.paused.Load() {
				c.Commit()
			}
		}
	}
}

// Pause stops the interval miner from mining until Resume; Commit still
// mines. Tests use it to hold a transaction at a given depth.
func (c *Chain) Pause() { c.paused.Store(true) }

// Resume lets the interval miner mine again.
func (c *Chain) Resume() { c.paused.Store(false) }

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

// Commit mines a block with whatever is pending now and returns the new
// head's hash (the zero hash once the chain is closed). It is safe to call
// while the interval miner runs.
func (c *Chain) Commit() common.Hash {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return common.Hash{}
	}
	return c.backend.beacon.Commit()
}

// Fork simulates a reorg: it makes parent the head at once, so the blocks
// after it stop being canonical, and the next commits build a new branch
// on parent. The pool must be empty. Transactions of the abandoned blocks
// go back to the pool and are mined again on the new branch, in blocks
// with new hashes; call Rollback right after Fork to drop them instead.
func (c *Chain) Fork(parent common.Hash) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	if err := c.backend.beacon.Fork(parent); err != nil {
		return fmt.Errorf("devchain: fork at %s: %w", parent, err)
	}
	c.resetNonces()
	return nil
}

// Rollback drops every pending transaction. After Fork it makes a reorg
// lose the abandoned blocks' transactions for good, as when a payment is
// reorged out and never mined again.
func (c *Chain) Rollback() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.backend.beacon.Rollback()
	c.resetNonces()
}

// resetNonces forgets the nonces handed out, which Fork and Rollback may
// have taken back; the next send asks the pool again.
func (c *Chain) resetNonces() {
	c.sendMu.Lock()
	clear(c.nonces)
	c.sendMu.Unlock()
}

// TransferToken sends amount (in USDC base units, 6 decimals) of the dev
// token from from to to. It does not wait for the transaction to be mined.
func (c *Chain) TransferToken(ctx context.Context, from Account, to common.Address, amount *big.Int) (common.Hash, error) {
	token := c.usdc.Instance(c.client, c.Token)
	h, err := c.send(ctx, from, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		return bind.Transact(token, opts, c.usdc.PackTransfer(to, amount))
	})
	if err != nil {
		return common.Hash{}, fmt.Errorf("devchain: transfer token: %w", err)
	}
	return h, nil
}

// TransferNative sends wei from from to to. It does not wait for the
// transaction to be mined.
func (c *Chain) TransferNative(ctx context.Context, from Account, to common.Address, wei *big.Int) (common.Hash, error) {
	return c.Transact(ctx, from, to, wei, nil)
}

// DeployPriceFeed deploys another dev price feed (description such as
// "BTC / USD") answering usd (8 decimals), mined before it returns.
func (c *Chain) DeployPriceFeed(ctx context.Context, description string, usd *big.Int) (common.Address, error) {
	var feed common.Address
	tx, err := c.send(ctx, c.Deployer, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		addr, tx, err := bind.DeployContract(opts, common.FromHex(bindings.DevPriceFeedMetaData.Bin), c.client,
			c.feed.PackConstructor(description, usd))
		feed = addr
		return tx, err
	})
	if err == nil {
		err = c.commitAndCheck(ctx, tx)
	}
	if err != nil {
		return common.Address{}, fmt.Errorf("devchain: deploy the %s feed: %w", description, err)
	}
	return feed, nil
}

// SetETHPrice publishes a new ETH/USD answer (8 decimals) on the price
// feed as a new round, and mines it before returning so the next read sees
// it.
func (c *Chain) SetETHPrice(ctx context.Context, usd *big.Int) error {
	feed := c.feed.Instance(c.client, c.PriceFeed)
	h, err := c.send(ctx, c.Deployer, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		return bind.Transact(feed, opts, c.feed.PackSetAnswer(usd))
	})
	if err != nil {
		return fmt.Errorf("devchain: set eth price: %w", err)
	}
	if err := c.commitAndCheck(ctx, h); err != nil {
		return fmt.Errorf("devchain: set eth price: %w", err)
	}
	return nil
}

// TokenBalance returns owner's dev token balance in base units at the head.
func (c *Chain) TokenBalance(ctx context.Context, owner common.Address) (*big.Int, error) {
	bal, err := bind.Call(c.usdc.Instance(c.client, c.Token), &bind.CallOpts{Context: ctx},
		c.usdc.PackBalanceOf(owner), c.usdc.UnpackBalanceOf)
	if err != nil {
		return nil, fmt.Errorf("devchain: token balance: %w", err)
	}
	return bal, nil
}

// WaitMined waits for tx's receipt on the canonical chain and for the
// head to reach its block. It only waits: with BlockInterval 0 something
// else must Commit. (The node indexes a new head's transactions a moment
// before "latest" names it: a gas estimate made as soon as the receipt
// shows would still run against the state before.)
func (c *Chain) WaitMined(ctx context.Context, tx common.Hash) (*types.Receipt, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		r, err := c.client.TransactionReceipt(ctx, tx)
		if err == nil {
			head, err := c.client.BlockNumber(ctx)
			if err != nil {
				return nil, fmt.Errorf("devchain: read the head: %w", err)
			}
			if head >= r.BlockNumber.Uint64() {
				return r, nil
			}
		} else if !errors.Is(err, ethereum.NotFound) {
			return nil, fmt.Errorf("devchain: receipt of %s: %w", tx, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("devchain: wait for %s: %w", tx, ctx.Err())
		case <-t.C:
		}
	}
}

// send builds, signs and sends one transaction from from with the next
// nonce, and returns its hash. build gets options carrying that nonce; it
// sends the transaction itself (bind does).
func (c *Chain) send(ctx context.Context, from Account, build func(*bind.TransactOpts) (*types.Transaction, error)) (common.Hash, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	pending, err := c.client.PendingNonceAt(ctx, from.Address)
	if err != nil {
		return common.Hash{}, fmt.Errorf("read nonce: %w", err)
	}
	nonce := max(pending, c.nonces[from.Address])
	opts := bind.NewKeyedTransactor(from.Key, c.ChainID)
	opts.Context = ctx
	opts.Nonce = new(big.Int).SetUint64(nonce)
	tx, err := build(opts)
	if err != nil {
		return common.Hash{}, err
	}
	c.nonces[from.Address] = nonce + 1
	return tx.Hash(), nil
}

// TransferTokenUnchecked sends a token transfer with a fixed gas limit,
// skipping the estimate that would refuse a transfer bound to fail: the
// way to put a reverting transaction on the chain.
func (c *Chain) TransferTokenUnchecked(ctx context.Context, from Account, to common.Address, amount *big.Int) (common.Hash, error) {
	token := c.usdc.Instance(c.client, c.Token)
	h, err := c.send(ctx, from, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		opts.GasLimit = 200_000
		return bind.Transact(token, opts, c.usdc.PackTransfer(to, amount))
	})
	if err != nil {
		return common.Hash{}, fmt.Errorf("devchain: transfer token: %w", err)
	}
	return h, nil
}
