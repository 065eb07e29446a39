package chainwatch

import (
	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
	"github.com/paymentsd/paymentsd/internal/btcrpc"
	"github.com/paymentsd/paymentsd/internal/evmrpc"

	"context"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
)

// Chain is one configured network with its client and its assets; what
// depends on its chain's family is behind Family.
type Chain struct {
	Network Network
	// Client reads an EVM network; nil on a Bitcoin network.
	Client evmrpc.Client
	// Bitcoin reads a Bitcoin network's nodes, of the chain Params names;
	// nil on an EVM network.
	Bitcoin *btcrpc.Failover
	Params  *chaincfg.Params
	Assets  []payment.Asset
}

// BitcoinScanner returns a Bitcoin network's scanner.
func (c *Chain) BitcoinScanner() btcscan.Scanner {
	return btcscan.Scanner{Node: c.Bitcoin, Params: c.Params}
}

// BitcoinPoller returns a Bitcoin network's poller over blocks, with the
// network's block range; at the head it reads the mempool every poll
// interval.
func (c *Chain) BitcoinPoller(blocks BlockStore) *BitcoinPoller {
	return &BitcoinPoller{Bitcoin: c.BitcoinScanner(), Poller: Poller{Blocks: blocks,
		MaxRange: uint64(max(c.Network.MaxBlockRange, 0)), PollInterval: time.Duration(c.Network.PollInterval)}}
}

// Chains are the networks of a deployment, by key.
type Chains map[string]*Chain

// A dial connects to one network of a family. claimed holds the keys the
// networks dialed before claimed (a chain ID, a Bitcoin chain): two
// networks must not share one key space.
type dial func(ctx context.Context, n Network, transport http.RoundTripper, claimed map[string]string) (*Chain, error)

// familyDialers dial each family's networks, by kind.
var familyDialers = map[string]dial{KindEVM: dialEVM, KindBitcoin: dialBitcoin}

// Connect dials every network and attaches the catalog's assets to their
// networks. transport, when set, carries the RPC calls (for counting).
func Connect(ctx context.Context, networks []Network, catalog payment.Catalog, transport http.RoundTripper) (Chains, error) {
	chains := Chains{}
	claimed := map[string]string{}
	for _, n := range networks {
		if err := n.Check(); err != nil {
			return nil, err
		}
		if _, dup := chains[n.Key]; dup {
			return nil, fmt.Errorf("network %q is listed twice", n.Key)
		}
		kind := n.Kind
		if kind == "" {
			kind = KindEVM
		}
		c, err := familyDialers[kind](ctx, n, transport, claimed)
		if err != nil {
			return nil, err
		}
		chains[n.Key] = c
	}
	for _, a := range catalog.Assets {
		c, ok := chains[a.Network]
		if !ok {
			continue // an asset of a network this deployment does not watch
		}
		if a.ChainID != c.Network.ChainID {
			return nil, fmt.Errorf("asset %q: chainId %d differs from network %q's %d", a.ID, a.ChainID, a.Network, c.Network.ChainID)
		}
		if a.IsLive != c.Network.IsLive {
			return nil, fmt.Errorf("asset %q: isLive %v differs from network %q's %v", a.ID, a.IsLive, a.Network, c.Network.IsLive)
		}
		if err := c.Family().CheckAsset(a, chains); err != nil {
			return nil, err
		}
		c.Assets = append(c.Assets, a)
	}
	return chains, nil
}

// dialBitcoin connects to a Bitcoin network's nodes.
func dialBitcoin(ctx context.Context, n Network, _ http.RoundTripper, claimed map[string]string) (*Chain, error) {
	// Bitcoin transactions are keyed by network and txid; two networks of
	// one chain would fight over one key space.
	if other, dup := claimed["bitcoin-chain:"+n.Chain]; dup {
		return nil, fmt.Errorf("networks %q and %q are both Bitcoin's %s", other, n.Key, n.Chain)
	}
	// A session's Bitcoin address is written for its environment's one
	// Bitcoin network.
	env := fmt.Sprintf("bitcoin-live:%v", n.IsLive)
	if other, dup := claimed[env]; dup {
		return nil, fmt.Errorf("networks %q and %q are both Bitcoin networks of one environment: list one", other, n.Key)
	}
	claimed["bitcoin-chain:"+n.Chain], claimed[env] = n.Key, n.Key
	params := bitcoinChains[n.Chain]
	f, err := btcrpc.Dial(ctx, n.RPCURLs, params)
	if err != nil {
		return nil, fmt.Errorf("network %q: %w", n.Key, err)
	}
	f.Network = n.Key
	return &Chain{Network: n.WithDefaults(), Bitcoin: f, Params: params}, nil
}

// dialEVM connects to an EVM network's endpoints and checks they serve
// its chain.
func dialEVM(ctx context.Context, n Network, transport http.RoundTripper, claimed map[string]string) (*Chain, error) {
	// Transactions are keyed by chain ID: two networks of one chain would
	// share (and fight over) one key space.
	id := fmt.Sprintf("chain-id:%d", n.ChainID)
	if other, dup := claimed[id]; dup {
		return nil, fmt.Errorf("networks %q and %q have the same chainId %d", other, n.Key, n.ChainID)
	}
	claimed[id] = n.Key
	c, err := evmrpc.Dial(ctx, n.ChainID, n.RPCURLs, transport)
	if err != nil {
		return nil, fmt.Errorf("network %q: %w", n.Key, err)
	}
	c.Network = n.Key
	if err := c.CheckChainIDs(ctx); err != nil {
		return nil, fmt.Errorf("network %q: %w", n.Key, err)
	}
	ch := &Chain{Network: n.WithDefaults(), Client: c}
	c.BlockAt = ch.blockAt
	return ch, nil
}

// blockAt reads the hash of block n through c (one node, or the network's
// any in a read of its own), checked as a scan checks it: the network's
// nodes are compared by it.
func (c *Chain) blockAt(ctx context.Context, client evmrpc.Client, n uint64) (common.Hash, error) {
	var hash common.Hash
	err := client.Read(ctx, func(node evmrpc.Client) error {
		h, _, err := c.Scanner().on(node).block(ctx, new(big.Int).SetUint64(n), false)
		if err == nil {
			hash = h.Hash
		}
		return err
	})
	return hash, err
}

// Scanner returns the chain's scanner over its assets.
func (c *Chain) Scanner() Scanner {
	s := Scanner{Client: c.Client, Network: c.Network.Key, Recompute: c.Network.HeaderHash == HeaderHashRecompute}
	for _, a := range c.Assets {
		if a.Native() {
			s.Native, s.Traces = true, c.Network.TraceInternalTransfers
		} else {
			s.Tokens = append(s.Tokens, common.HexToAddress(a.TokenAddress))
		}
	}
	return s
}

// AssetOf returns the asset a transfer moves: the token's, or the native
// coin's for a transfer without a token.
func (c *Chain) AssetOf(t Transfer) (payment.Asset, bool) {
	for _, a := range c.Assets {
		if t.Token == (common.Address{}) && a.Native() ||
			a.TokenAddress != "" && strings.EqualFold(a.TokenAddress, t.Token.Hex()) {
			return a, true
		}
	}
	return payment.Asset{}, false
}

// PaymentTransfers are the transfers of the network's assets among ts, as
// the records name them.
func (c *Chain) PaymentTransfers(ts []Transfer) []payment.Transfer {
	var out []payment.Transfer
	for _, t := range ts {
		if asset, ok := c.AssetOf(t); ok {
			out = append(out, payment.Transfer{LogIndex: t.LogIndex, From: t.From.Hex(), To: t.To.Hex(),
				AssetID: asset.ID, AmountBaseUnits: t.Amount.String()})
		}
	}
	return out
}

// Asset returns the chain's asset with the given ID.
func (c *Chain) Asset(id string) (payment.Asset, bool) {
	return payment.Catalog{Assets: c.Assets}.Asset(id)
}

// Rate returns the USD price of one whole unit of an asset at now, read
// on the network its price source names (Chain.Rate), else on its own.
func Rate(ctx context.Context, chains map[string]*Chain, a payment.Asset, now time.Time) (decimal.Decimal, error) {
	if a.Price.Kind == payment.PriceUSDPegged {
		return decimal.NewFromInt(1), nil
	}
	network := a.Price.FeedNetwork(a.Network)
	c, ok := chains[network]
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("asset %q: its price feed's network %q is not configured", a.ID, network)
	}
	return c.Rate(ctx, a, now)
}

// Rate returns the USD price of one whole unit of an asset at now: 1 for a
// USD-pegged asset, the aggregator's latest answer otherwise, unless that
// answer is older than the feed's heartbeat (a stalled feed must not
// quote).
func (c *Chain) Rate(ctx context.Context, a payment.Asset, now time.Time) (decimal.Decimal, error) {
	switch a.Price.Kind {
	case payment.PriceUSDPegged:
		return decimal.NewFromInt(1), nil
	case payment.PriceChainlink:
		price, updated, err := LatestPrice(ctx, c.Client, common.HexToAddress(a.Price.Aggregator))
		if err != nil {
			return decimal.Decimal{}, err
		}
		if age := now.Sub(updated); age > a.Price.Heartbeat() {
			return decimal.Decimal{}, fmt.Errorf("asset %q: the price feed's answer is %s old, past its heartbeat of %s",
				a.ID, age.Round(time.Second), a.Price.Heartbeat())
		}
		return price, nil
	}
	return decimal.Decimal{}, fmt.Errorf("asset %q: unknown price source %q", a.ID, a.Price.Kind)
}
