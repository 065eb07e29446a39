package chainwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paymentsd/paymentsd/metrics"
)

// Client is what the engine asks of a chain: go-ethereum's small
// interfaces where their types read every chain, and raw calls for blocks,
// transactions and receipts (see rpc.go). RPC adapts a go-ethereum client,
// such as the simulated backend's.
type Client interface {
	ethereum.BlockNumberReader
	ethereum.ContractCaller
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	// Call makes a JSON-RPC call and decodes its answer into result; a
	// null answer is ethereum.NotFound.
	Call(ctx context.Context, result any, method string, args ...any) error
}

// Failover is a Client over several RPC endpoints of one network: each
// call goes to the endpoint that last worked and moves on to the next when
// it fails for a reason other than the answer itself (not found). An
// endpoint is used only once it has reported the network's chain ID.
type Failover struct {
	// network names the network in the metrics.
	network string
	clients []*ethclient.Client
	urls    []string
	chainID int64
	// state is each endpoint's chain ID check: unchecked, ok or wrong.
	state   []atomic.Int32
	current atomic.Int32
	// Calls counts the RPC calls made, for the benchmarks.
	Calls atomic.Int64
}

const (
	unchecked int32 = iota
	chainOK
	chainWrong
)

// Dial connects to every URL of the network with chain ID chainID.
func Dial(ctx context.Context, chainID int64, urls []string, transport http.RoundTripper) (*Failover, error) {
	f := &Failover{urls: urls, chainID: chainID, state: make([]atomic.Int32, len(urls))}
	for _, u := range urls {
		opts := []rpc.ClientOption{}
		if transport != nil {
			opts = append(opts, rpc.WithHTTPClient(&http.Client{Transport: transport}))
		}
		c, err := rpc.DialOptions(ctx, u, opts...)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", u, err)
		}
		f.clients = append(f.clients, ethclient.NewClient(c))
	}
	if len(f.clients) == 0 {
		return nil, errors.New("no rpc url")
	}
	return f, nil
}

// CheckChainIDs asks every endpoint for its chain ID: one that reports
// another chain is an error (a misconfiguration that would mix two
// chains' payments). One that does not answer is checked before its first
// use instead, so that a node down at start-up does not stop the engine.
func (f *Failover) CheckChainIDs(ctx context.Context) error {
	for i, c := range f.clients {
		if err := f.check(ctx, i, c); errors.Is(err, errWrongChain) {
			return err
		} else if err != nil {
			slog.Warn("rpc endpoint not checked at start; it is checked before its first use", "url", f.urls[i], "err", err)
		}
	}
	return nil
}

var errWrongChain = errors.New("wrong chain")

// check makes sure endpoint i serves the network's chain.
func (f *Failover) check(ctx context.Context, i int, c *ethclient.Client) error {
	switch f.state[i].Load() {
	case chainOK:
		return nil
	case chainWrong:
		return fmt.Errorf("%s: %w", f.urls[i], errWrongChain)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	f.Calls.Add(1)
	id, err := c.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("%s: chain id: %w", f.urls[i], err)
	}
	if id.Cmp(big.NewInt(f.chainID)) != 0 {
		f.state[i].Store(chainWrong)
		slog.Error("rpc endpoint serves another chain; it is not used", "url", f.urls[i], "chainId", id, "want", f.chainID)
		return fmt.Errorf("%s reports chain %s, not %d: %w", f.urls[i], id, f.chainID, errWrongChain)
	}
	f.state[i].Store(chainOK)
	return nil
}

// Close closes every connection.
func (f *Failover) Close() {
	for _, c := range f.clients {
		c.Close()
	}
}

func try[T any](ctx context.Context, f *Failover, call func(*ethclient.Client) (T, error)) (T, error) {
	start := int(f.current.Load())
	var err error
	var v T
	for i := range f.clients {
		n := (start + i) % len(f.clients)
		if err = f.check(ctx, n, f.clients[n]); err != nil {
			continue
		}
		f.Calls.Add(1)
		v, err = call(f.clients[n])
		if err == nil || errors.Is(err, ethereum.NotFound) {
			f.current.Store(int32(n))
			metrics.RPCRequests.WithLabelValues(f.network, "ok").Inc()
			metrics.NetworkUp.WithLabelValues(f.network).Set(1)
			return v, err
		}
		metrics.RPCRequests.WithLabelValues(f.network, "error").Inc()
	}
	metrics.NetworkUp.WithLabelValues(f.network).Set(0)
	return v, err
}

func (f *Failover) BlockNumber(ctx context.Context) (uint64, error) {
	return try(ctx, f, func(c *ethclient.Client) (uint64, error) { return c.BlockNumber(ctx) })
}

func (f *Failover) BlockByNumber(ctx context.Context, n *big.Int) (*types.Block, error) {
	return try(ctx, f, func(c *ethclient.Client) (*types.Block, error) { return c.BlockByNumber(ctx, n) })
}

func (f *Failover) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	return try(ctx, f, func(c *ethclient.Client) (*types.Header, error) { return c.HeaderByNumber(ctx, n) })
}

func (f *Failover) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	return try(ctx, f, func(c *ethclient.Client) ([]types.Log, error) { return c.FilterLogs(ctx, q) })
}

func (f *Failover) TransactionByHash(ctx context.Context, h common.Hash) (*types.Transaction, bool, error) {
	type r struct {
		tx      *types.Transaction
		pending bool
	}
	v, err := try(ctx, f, func(c *ethclient.Client) (r, error) {
		tx, p, err := c.TransactionByHash(ctx, h)
		return r{tx, p}, err
	})
	return v.tx, v.pending, err
}

func (f *Failover) TransactionReceipt(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	return try(ctx, f, func(c *ethclient.Client) (*types.Receipt, error) { return c.TransactionReceipt(ctx, h) })
}

func (f *Failover) CallContract(ctx context.Context, msg ethereum.CallMsg, n *big.Int) ([]byte, error) {
	return try(ctx, f, func(c *ethclient.Client) ([]byte, error) { return c.CallContract(ctx, msg, n) })
}
