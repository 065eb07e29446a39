package chainwatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
)

func TestNetworkDefaultsFollowTheChain(t *testing.T) {
	no := false
	cases := []struct {
		name          string
		in            Network
		tag           bool
		confirmations int
	}{
		{"Base uses its finalized tag", Network{ChainID: 8453}, true, 900},
		{"Ethereum uses its finalized tag", Network{ChainID: 1}, true, 96},
		{"an unknown chain waits a documented depth", Network{ChainID: 999999}, false, DefaultConfirmations},
		{"the configuration wins", Network{ChainID: 8453, UseFinalizedTag: &no, Confirmations: 30}, false, 30},
	}
	for _, c := range cases {
		got := c.in.WithDefaults()
		if got.FinalizedTag() != c.tag || got.Confirmations != c.confirmations {
			t.Errorf("%s: tag %v, confirmations %d; want %v, %d", c.name, got.FinalizedTag(), got.Confirmations, c.tag, c.confirmations)
		}
	}
}

// The engine refuses to start with a network whose RPC URL serves another
// chain, or with two networks of one chain; a node that is down at start
// is checked before its first use instead.
func TestConnectChecksChainIDs(t *testing.T) {
	ctx := context.Background()
	chain, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	catalog := payment.Catalog{}
	dead := "http://127.0.0.1:1" // nothing listens there

	_, err = Connect(ctx, []Network{{Key: "base", ChainID: 8453, RPCURLs: []string{dead, chain.URL}}}, catalog, nil)
	if err == nil || !strings.Contains(err.Error(), chain.URL) || !strings.Contains(err.Error(), "reports chain 1337, not 8453") {
		t.Errorf("an RPC URL of another chain: %v", err)
	}
	_, err = Connect(ctx, []Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL}},
		{Key: "devnet-2", ChainID: 1337, RPCURLs: []string{chain.URL}}}, catalog, nil)
	if err == nil || !strings.Contains(err.Error(), "same chainId 1337") {
		t.Errorf("two networks of one chain: %v", err)
	}
	liveAsset := payment.Catalog{Assets: []payment.Asset{{ID: "usdc-devnet", Network: "devnet", ChainID: 1337, IsLive: true}}}
	_, err = Connect(ctx, []Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL}}}, liveAsset, nil)
	if err == nil || !strings.Contains(err.Error(), "isLive true differs") {
		t.Errorf("a live asset on a sandbox network: %v", err)
	}
	chains, err := Connect(ctx, []Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{dead, chain.URL}}}, catalog, nil)
	if err != nil {
		t.Fatalf("a node down at start: %v", err)
	}
	if _, err := chains["devnet"].Client.BlockNumber(ctx); err != nil {
		t.Errorf("calls go to the node that answers: %v", err)
	}
}

// A price feed whose answer is older than its heartbeat does not quote: a
// stalled feed would price payments at a rate the market has left.
func TestStalePriceFeedDoesNotQuote(t *testing.T) {
	ctx := context.Background()
	chain, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	eth := payment.Asset{ID: "eth-devnet", Network: "devnet", ChainID: 1337, Decimals: 18,
		Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: chain.PriceFeed.Hex(), HeartbeatSeconds: 3600}}
	chains, err := Connect(ctx, []Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL}}},
		payment.Catalog{Assets: []payment.Asset{eth}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if price, err := chains["devnet"].Rate(ctx, eth, now); err != nil || price.String() != "3000" {
		t.Fatalf("a fresh answer: %s, %v", price, err)
	}
	if _, err := chains["devnet"].Rate(ctx, eth, now.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "past its heartbeat of 1h0m0s") {
		t.Fatalf("an answer two hours old: %v", err)
	}
}

// A transaction's explorer link: the chain's known explorer, the
// configured one in its place, none on a chain without one or when turned
// off; an explorer that is not an http(s) address is refused.
func TestTransactionExplorerLinks(t *testing.T) {
	hash := "0xabc"
	for _, c := range []struct {
		n    Network
		want string
	}{
		{Network{ChainID: 8453}, "https://basescan.org/tx/0xabc"},
		{Network{ChainID: 8453, ExplorerURL: "https://explorer.example/base/"}, "https://explorer.example/base/tx/0xabc"},
		{Network{ChainID: 8453, ExplorerURL: "none"}, ""},
		{Network{ChainID: 1337}, ""},
	} {
		if got := c.n.TxURL(hash); got != c.want {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
	bad := Network{Key: "base", ChainID: 8453, RPCURLs: []string{"http://node"}, ExplorerURL: "javascript:alert(1)"}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "explorerUrl") {
		t.Fatalf("a javascript: explorer was accepted: %v", err)
	}
}

// An asset's price is read where its feed is: on the network its price
// source names (BTC/USD on Ethereum for bitcoin), else on its own; a feed
// network that is not configured quotes nothing, by name.
func TestAPriceFeedOnAnotherNetwork(t *testing.T) {
	ctx := context.Background()
	chains := map[string]*Chain{}
	var feeds []string
	for _, n := range []struct {
		key string
		usd int64
	}{{"prices", 65000}, {"payments", 3000}} {
		chain, err := devchain.Start(ctx, devchain.Config{ETHPriceUSD: n.usd})
		if err != nil {
			t.Fatal(err)
		}
		defer chain.Close()
		c, err := Connect(ctx, []Network{{Key: n.key, ChainID: 1337, RPCURLs: []string{chain.URL}}}, payment.Catalog{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		chains[n.key] = c[n.key]
		feeds = append(feeds, chain.PriceFeed.Hex())
	}
	if feeds[0] != feeds[1] {
		t.Fatalf("the dev chains' feeds are at %s and %s: the test needs one address for both", feeds[0], feeds[1])
	}
	asset := payment.Asset{ID: "coin-payments", Network: "payments", ChainID: 1337, Decimals: 8,
		Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: feeds[0], Network: "prices"}}
	now := time.Now()
	if price, err := Rate(ctx, chains, asset, now); err != nil || price.String() != "65000" {
		t.Errorf("a feed on the prices network: %s, %v; want 65000", price, err)
	}
	asset.Price.Network = ""
	if price, err := Rate(ctx, chains, asset, now); err != nil || price.String() != "3000" {
		t.Errorf("the asset's own network's feed: %s, %v; want 3000", price, err)
	}
	asset.Price.Network = "ethereum"
	if _, err := Rate(ctx, chains, asset, now); err == nil || !strings.Contains(err.Error(), `its price feed's network "ethereum" is not configured`) {
		t.Errorf("a feed network not configured: %v", err)
	}
}
