package chainwatch

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// A Bitcoin network's finality follows the payment's amount (BTCPay
// Server's speed policies by default): a small payment is final sooner
// than a large one.
func TestBitcoinFinalityFollowsTheAmount(t *testing.T) {
	var nets []Network
	if err := json.Unmarshal([]byte(`[
		{"key": "bitcoin", "kind": "bitcoin", "chain": "mainnet", "isLive": true, "rpcUrls": ["http://u:p@node:8332"]},
		{"key": "regtest", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://u:p@127.0.0.1:18443"]},
		{"key": "signet", "kind": "bitcoin", "chain": "signet", "rpcUrls": ["http://u:p@127.0.0.1:38332"],
		 "finality": [{"belowUsd": "50", "confirmations": 1}, {"belowUsd": 5000, "confirmations": 4}, {"confirmations": 10}]}
	]`), &nets); err != nil {
		t.Fatal(err)
	}
	for _, n := range nets {
		if err := n.Check(); err != nil {
			t.Fatalf("%s: %v", n.Key, err)
		}
	}
	mainnet, regtest, signet := nets[0].WithDefaults(), nets[1].WithDefaults(), nets[2].WithDefaults()
	for _, c := range []struct {
		n    Network
		usd  string
		want int
	}{
		{mainnet, "0.01", 1}, {mainnet, "99.99", 1}, {mainnet, "100", 2}, {mainnet, "999", 2}, {mainnet, "1000", 3},
		{mainnet, "9999.99", 3}, {mainnet, "10000", 6}, {mainnet, "2500000", 6},
		{regtest, "1", 1}, {regtest, "1000000", 1},
		{signet, "49", 1}, {signet, "50", 4}, {signet, "4999", 4}, {signet, "5000", 10},
	} {
		if got := c.n.ConfirmationsFor(decimal.RequireFromString(c.usd)); got != c.want {
			t.Errorf("%s: a payment of %s USD is final after %d confirmations; want %d", c.n.Key, c.usd, got, c.want)
		}
	}
	if mainnet.Confirmations != 6 || mainnet.BlockTime != Duration(10*time.Minute) {
		t.Errorf("mainnet's defaults: %+v", mainnet)
	}
	if regtest.BlockTime != Duration(time.Second) || regtest.PollInterval <= 0 {
		t.Errorf("regtest's defaults: %+v", regtest)
	}
}

// A Bitcoin network's mistakes are refused at start, each saying what
// is wrong; EVM settings on it, and its settings on an EVM network, too.
func TestBitcoinNetworkMistakes(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"key": "b", "kind": "bitcoin", "chain": "testnet9", "rpcUrls": ["http://n"]}`, "chain must be mainnet, testnet3, signet or regtest"},
		{`{"key": "b", "kind": "bitcoin", "chain": "mainnet", "rpcUrls": ["http://n"]}`, "live exactly when its chain is mainnet"},
		{`{"key": "b", "kind": "bitcoin", "chain": "testnet3", "isLive": true, "rpcUrls": ["http://n"]}`, "live exactly when its chain is mainnet"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest"}`, "at least one rpcUrl"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "chainId": 1, "rpcUrls": ["http://n"]}`, "has no chainId"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "traceInternalTransfers": true, "rpcUrls": ["http://n"]}`, "EVM settings"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "confirmations": 3, "rpcUrls": ["http://n"]}`, "not confirmations"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://n"], "finality": [{"confirmations": 0}]}`, "at least 1"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://n"], "finality": [{"belowUsd": "10", "confirmations": 1}]}`, "last finality tier has no belowUsd"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://n"], "finality": [{"confirmations": 1}, {"confirmations": 2}]}`, "finality[0].belowUsd must be a positive amount"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://n"], "finality": [{"belowUsd": "100", "confirmations": 1}, {"belowUsd": "100", "confirmations": 2}, {"confirmations": 3}]}`, "must rise"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://n"], "finality": [{"belowUsd": "100", "confirmations": 3}, {"confirmations": 2}]}`, "fewer confirmations than a smaller amount's"},
		{`{"key": "b", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://n"], "explorerUrl": "mempool.space"}`, "explorerUrl must be"},
		{`{"key": "b", "kind": "solana", "rpcUrls": ["http://n"]}`, "kind must be evm or bitcoin"},
		{`{"key": "e", "chainId": 1, "chain": "mainnet", "rpcUrls": ["http://n"]}`, "Bitcoin network's settings"},
	} {
		var n Network
		if err := json.Unmarshal([]byte(c.json), &n); err != nil {
			t.Fatal(err)
		}
		if err := n.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.json, err, c.want)
		}
	}
}

// A Bitcoin transaction's depth follows what it pays, not what its
// sessions asked: a $5 session paid 10 BTC waits the last tier, a session
// paid less than it asked still waits its own amount's tier, and a
// transaction paying several sessions is valued at all it pays them (a
// double spend takes every output back at once).
func TestBitcoinDepthFollowsWhatWasReceived(t *testing.T) {
	var n Network
	if err := json.Unmarshal([]byte(`{"key": "bitcoin", "kind": "bitcoin", "chain": "mainnet", "isLive": true,
		"rpcUrls": ["http://u:p@node:8332"]}`), &n); err != nil {
		t.Fatal(err)
	}
	n = n.WithDefaults()
	d := decimal.RequireFromString
	for _, c := range []struct {
		name string
		paid []Received
		want int
	}{
		{"paid what it asked", []Received{{AskedUSD: d("5"), ReceivedUSD: d("5")}}, 1},
		{"a $5 session paid 10 BTC at $60,000", []Received{{AskedUSD: d("5"), ReceivedUSD: d("600000")}}, 6},
		{"overpaid into the next tier", []Received{{AskedUSD: d("90"), ReceivedUSD: d("150")}}, 2},
		{"paid part of a large amount", []Received{{AskedUSD: d("5000"), ReceivedUSD: d("20")}}, 3},
		{"two sessions under a tier each, over it together",
			[]Received{{AskedUSD: d("60"), ReceivedUSD: d("60")}, {AskedUSD: d("60"), ReceivedUSD: d("60")}}, 2},
		{"a payment the engine cannot price", []Received{{AskedUSD: d("5"), ReceivedUSD: Unpriced}}, 6},
		{"no session paid", nil, 6},
	} {
		if got := n.ConfirmationsForReceived(c.paid); got != c.want {
			t.Errorf("%s: final after %d confirmations; want %d", c.name, got, c.want)
		}
	}
}
