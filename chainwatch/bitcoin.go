package chainwatch

import (
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"
)

// Kinds of network.
const (
	// KindEVM is an EVM chain read through go-ethereum's JSON-RPC (the
	// default).
	KindEVM = "evm"
	// KindBitcoin is a Bitcoin network read from Bitcoin Core or btcd
	// nodes over their JSON-RPC.
	KindBitcoin = "bitcoin"
)

// bitcoinChains are the Bitcoin networks a network's `chain` names.
var bitcoinChains = map[string]*chaincfg.Params{
	"mainnet":  &chaincfg.MainNetParams,
	"testnet3": &chaincfg.TestNet3Params,
	"signet":   &chaincfg.SigNetParams,
	"regtest":  &chaincfg.RegressionNetParams,
}

// Tier is a Bitcoin network's finality for payments under an amount: the
// confirmations a payment worth less than BelowUSD needs to be final.
// The last tier has no bound and covers the rest.
type Tier struct {
	BelowUSD      *decimal.Decimal `json:"belowUsd,omitempty"`
	Confirmations int              `json:"confirmations"`
}

// DefaultBitcoinFinality is a Bitcoin network's finality when the
// configuration names none, after BTCPay Server's speed policies: one
// block for a payment under 100 USD ("medium"), two under 1,000
// ("low-medium"), three under 10,000, six ("low") above.
var DefaultBitcoinFinality = []Tier{
	{BelowUSD: usd("100"), Confirmations: 1},
	{BelowUSD: usd("1000"), Confirmations: 2},
	{BelowUSD: usd("10000"), Confirmations: 3},
	{Confirmations: 6},
}

func usd(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// ConfirmationsFor returns the confirmations a payment worth amountUSD
// needs to be final on the network: its first tier whose bound the amount
// is under, else the last. On an EVM network, the network's depth.
func (n Network) ConfirmationsFor(amountUSD decimal.Decimal) int {
	for _, t := range n.Finality {
		if t.BelowUSD == nil || amountUSD.LessThan(*t.BelowUSD) {
			return t.Confirmations
		}
	}
	return n.Confirmations
}

// Received is what one Bitcoin transaction pays one session, in USD: the
// amount the session asks, and what the transaction's outputs to the
// session's address are worth at the session's quoted rate for bitcoin
// (the rate its payments count at, late ones too: payment.LineUSD).
type Received struct {
	AskedUSD, ReceivedUSD decimal.Decimal
}

// Unpriced is the worth of a payment the engine cannot price (a session
// without a quote for the network's asset): above every finality tier.
var Unpriced = decimal.New(1, 18)

// ConfirmationsForReceived returns the confirmations a Bitcoin transaction
// paying sessions needs to be final: the tier of what it pays them all
// together (a double spend of the transaction takes back every output at
// once), and never fewer than the tier of any one session's own amount.
// An overpayment, or a late payment larger than the session asked, waits
// as long as its value calls for. A transaction paying no session (change
// of an outgoing transfer, say) takes the last tier.
func (n Network) ConfirmationsForReceived(paid []Received) int {
	if len(paid) == 0 {
		return n.Confirmations
	}
	total, depth := decimal.Zero, 0
	for _, p := range paid {
		total = total.Add(p.ReceivedUSD)
		depth = max(depth, n.ConfirmationsFor(p.AskedUSD))
	}
	return max(depth, n.ConfirmationsFor(total))
}

// bitcoinDefaults fills a Bitcoin network's optional settings: the speed
// policy by amount, blocks every ten minutes (a second on regtest, whose
// blocks are mined on demand), mempool polled every 5 seconds.
func (n Network) bitcoinDefaults() Network {
	if len(n.Finality) == 0 {
		n.Finality = DefaultBitcoinFinality
		if n.Chain == "regtest" {
			n.Finality = []Tier{{Confirmations: 1}}
		}
	}
	n.Confirmations = n.Finality[len(n.Finality)-1].Confirmations
	if n.BlockTime <= 0 {
		n.BlockTime = Duration(10 * time.Minute)
		if n.Chain == "regtest" {
			n.BlockTime = Duration(time.Second)
		}
	}
	if n.PollInterval <= 0 {
		n.PollInterval = Duration(5 * time.Second)
	}
	if n.MaxBlockRange <= 0 {
		n.MaxBlockRange = 10
	}
	if n.PendingTimeout <= 0 {
		// A transaction paying too low a fee can wait in mempools for days
		// before it is mined or dropped (Bitcoin Core keeps it 14 days).
		n.PendingTimeout = Duration(72 * time.Hour)
	}
	if n.ReorgWindow <= 0 {
		n.ReorgWindow = 144 // a day: past Bitcoin Gold's and Bitcoin SV's deepest reorgs
	}
	if n.ReorgCheckInterval <= 0 {
		n.ReorgCheckInterval = n.BlockTime
	}
	return n
}

// checkBitcoin reports the first mistake in a Bitcoin network's settings.
func (n Network) checkBitcoin() error {
	params, ok := bitcoinChains[n.Chain]
	switch {
	case !ok:
		return fmt.Errorf("network %q: chain must be mainnet, testnet3, signet or regtest", n.Key)
	case n.IsLive != (params == &chaincfg.MainNetParams):
		return fmt.Errorf("network %q: a Bitcoin network is live exactly when its chain is mainnet", n.Key)
	case n.ChainID != 0:
		return fmt.Errorf("network %q: a Bitcoin network has no chainId", n.Key)
	case n.UseFinalizedTag != nil || n.TraceInternalTransfers || n.HeaderHash != "":
		return fmt.Errorf("network %q: useFinalizedTag, traceInternalTransfers and headerHash are EVM settings", n.Key)
	case n.Confirmations != 0:
		return fmt.Errorf("network %q: a Bitcoin network's depth is its finality tiers (finality), not confirmations", n.Key)
	}
	for i, t := range n.Finality {
		last := i == len(n.Finality)-1
		switch {
		case t.Confirmations < 1:
			return fmt.Errorf("network %q: finality[%d].confirmations must be at least 1", n.Key, i)
		case last && t.BelowUSD != nil:
			return fmt.Errorf("network %q: the last finality tier has no belowUsd: it covers every larger amount", n.Key)
		case !last && (t.BelowUSD == nil || !t.BelowUSD.IsPositive()):
			return fmt.Errorf("network %q: finality[%d].belowUsd must be a positive amount", n.Key, i)
		case i > 0 && !last && !t.BelowUSD.GreaterThan(*n.Finality[i-1].BelowUSD):
			return fmt.Errorf("network %q: finality's belowUsd must rise from tier to tier", n.Key)
		case i > 0 && t.Confirmations < n.Finality[i-1].Confirmations:
			return fmt.Errorf("network %q: finality[%d] asks fewer confirmations than a smaller amount's", n.Key, i)
		}
	}
	return n.checkExplorer()
}
