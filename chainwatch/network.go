package chainwatch

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Network is one network the engine watches, from configuration: an EVM
// chain, or a Bitcoin network (Kind KindBitcoin).
type Network struct {
	Key string `json:"key"`
	// Kind is KindEVM (empty) or KindBitcoin.
	Kind string `json:"kind,omitempty"`
	// ChainID is an EVM chain's ID; a Bitcoin network has none.
	ChainID int64 `json:"chainId"`
	// Chain names a Bitcoin network: mainnet, testnet3, signet or regtest
	// (bitcoinChains).
	Chain string `json:"chain,omitempty"`
	// RPCURLs are the network's nodes: EVM JSON-RPC endpoints, or Bitcoin
	// Core or btcd nodes (http(s)://user:password@host:port).
	RPCURLs []string `json:"rpcUrls"`
	// BlockTime sizes the timers that wait for confirmations.
	BlockTime Duration `json:"blockTime"`
	// Confirmations needed for finalized; with UseFinalizedTag, a block at
	// or below the node's `finalized` block is final too. Both default per
	// chain (see KnownFinality). On a Bitcoin network, the last Finality
	// tier's.
	Confirmations int `json:"confirmations"`
	// Finality is a Bitcoin network's depth by the payment's amount
	// (default DefaultBitcoinFinality).
	Finality        []Tier `json:"finality,omitempty"`
	UseFinalizedTag *bool  `json:"useFinalizedTag,omitempty"`
	IsLive          bool   `json:"isLive"`
	// MaxBlockRange bounds one scan (default 100 blocks).
	MaxBlockRange int `json:"maxBlockRange"`
	// PollInterval is how long chainwatch waits at the head (default: the
	// block time).
	PollInterval Duration `json:"pollInterval"`
	// PendingTimeout fails a submitted transaction not mined in time
	// (default 30 minutes).
	PendingTimeout Duration `json:"pendingTimeout"`
	// TraceInternalTransfers reads the native coin that contracts' internal
	// calls move (a smart-contract wallet's payment, a batch payout) from
	// the node's debug_traceBlockByNumber and debug_traceTransaction with
	// the callTracer. Without it only a transaction's own value is seen,
	// and the hosted page asks for the native coin from a wallet account.
	TraceInternalTransfers bool `json:"traceInternalTransfers,omitempty"`
	// ReorgWindow is how many blocks past its finality depth the block of
	// a finalized payment (incoming or outgoing) is still checked against
	// the chain, by its hash: a reorg deeper than finality within it
	// reverses the payment, never silently (default DefaultReorgWindow;
	// Bitcoin: a day of blocks).
	ReorgWindow int `json:"reorgWindow,omitempty"`
	// ReorgCheckInterval is how often that check runs (default 16 block
	// times, at least a minute; Bitcoin: the block time).
	ReorgCheckInterval Duration `json:"reorgCheckInterval,omitempty"`
	// HeaderHash is how a block's hash is checked on an EVM network:
	// HeaderHashRecompute (it is recomputed from the header's fields, in
	// Ethereum's format, which the OP stack, Arbitrum and Polygon keep) or
	// HeaderHashNode (the node's own hash, checked against the request and
	// the blocks that link to it, for a chain whose headers carry fields
	// go-ethereum does not know). The default is recompute on the chains
	// of KnownHeaderFormat, node on any other.
	HeaderHash string `json:"headerHash,omitempty"`
	// ExplorerURL is a block explorer's base address (https://etherscan.io):
	// a transaction's page is ExplorerURL/tx/<hash>. It defaults per
	// chain (KnownExplorers); "none" turns the link off.
	ExplorerURL string `json:"explorerUrl,omitempty"`
}

// KnownExplorers are the block explorers of the chains the engine knows,
// by chain ID.
var KnownExplorers = map[int64]string{
	1:        "https://etherscan.io",
	11155111: "https://sepolia.etherscan.io",
	17000:    "https://holesky.etherscan.io",
	8453:     "https://basescan.org",
	84532:    "https://sepolia.basescan.org",
	10:       "https://optimistic.etherscan.io",
	11155420: "https://sepolia-optimism.etherscan.io",
	42161:    "https://arbiscan.io",
	421614:   "https://sepolia.arbiscan.io",
	137:      "https://polygonscan.com",
	80002:    "https://amoy.polygonscan.com",
	56:       "https://bscscan.com",
	43114:    "https://snowtrace.io",
}

// TxURL is a transaction's page on the network's block explorer, "" when
// it has none.
func (n Network) TxURL(hash string) string {
	base := n.ExplorerURL
	if base == "" {
		base = KnownExplorers[n.ChainID]
	}
	if base == "" || base == "none" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/tx/" + hash
}

// How a block's hash is checked (Network.HeaderHash).
const (
	HeaderHashRecompute = "recompute"
	HeaderHashNode      = "node"
)

// KnownHeaderFormat are the chains whose headers are Ethereum's, by chain
// ID: a block's hash is the hash of its header's fields as go-ethereum's
// types.Header writes them (chainwatch/testdata/networks holds blocks of
// each family in its nodes' own JSON, and the tests recompute them).
var KnownHeaderFormat = map[int64]bool{
	1: true, 11155111: true, 17000: true, // Ethereum, Sepolia, Holesky
	8453: true, 84532: true, 10: true, 11155420: true, // Base, OP Mainnet and their testnets
	42161: true, 421614: true, // Arbitrum One, Arbitrum Sepolia
	137: true, 80002: true, // Polygon PoS, Amoy
	1337: true, 31337: true, // the dev chain (go-ethereum's simulated backend); Anvil and Hardhat
}

// Duration is a time.Duration written as "2s" in JSON.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "2s"-style strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"2s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as \"2s\": %w", err)
	}
	*d = Duration(v)
	return nil
}

// Finality is how a chain's transactions become final: the node's
// `finalized` block tag where the chain has one, and a depth in blocks
// (the only rule without the tag; with it, a bound on the wait).
type Finality struct {
	FinalizedTag  bool
	Confirmations int
}

// KnownFinality are the defaults of the chains the engine knows, by chain
// ID. Every one of them serves the `finalized` tag: Ethereum's finalized
// checkpoint (two epochs, about 13 minutes); the OP stack's and Arbitrum's
// blocks whose batch is in a finalized L1 block (about 20 minutes);
// Polygon PoS's milestones. Confirmations bound the wait at roughly the
// same time, should a node's tag stall.
var KnownFinality = map[int64]Finality{
	1:        {true, 96},   // Ethereum
	11155111: {true, 96},   // Sepolia
	17000:    {true, 96},   // Holesky
	8453:     {true, 900},  // Base
	84532:    {true, 900},  // Base Sepolia
	10:       {true, 900},  // OP Mainnet
	11155420: {true, 900},  // OP Sepolia
	42161:    {true, 7200}, // Arbitrum One
	421614:   {true, 7200}, // Arbitrum Sepolia
	137:      {true, 256},  // Polygon PoS
	80002:    {true, 256},  // Polygon Amoy
}

// DefaultConfirmations is the depth that makes a transaction final on a
// chain the engine does not know, when the configuration names none.
const DefaultConfirmations = 12

// FinalizedTag reports whether the node's `finalized` tag decides finality.
func (n Network) FinalizedTag() bool { return n.UseFinalizedTag != nil && *n.UseFinalizedTag }

// WithDefaults fills the optional settings: the chain's known finality
// where the configuration is silent, else DefaultConfirmations blocks.
func (n Network) WithDefaults() Network {
	if n.Kind == KindBitcoin {
		return n.bitcoinDefaults()
	}
	known, isKnown := KnownFinality[n.ChainID]
	if n.UseFinalizedTag == nil {
		tag := isKnown && known.FinalizedTag
		n.UseFinalizedTag = &tag
	}
	if n.Confirmations <= 0 {
		n.Confirmations = DefaultConfirmations
		if isKnown {
			n.Confirmations = known.Confirmations
		}
	}
	if n.MaxBlockRange <= 0 {
		n.MaxBlockRange = 100
	}
	if n.BlockTime <= 0 {
		n.BlockTime = Duration(12 * time.Second)
	}
	if n.PollInterval <= 0 {
		n.PollInterval = n.BlockTime
	}
	if n.PendingTimeout <= 0 {
		n.PendingTimeout = Duration(30 * time.Minute)
	}
	if n.ReorgWindow <= 0 {
		n.ReorgWindow = DefaultReorgWindow
	}
	if n.ReorgCheckInterval <= 0 {
		n.ReorgCheckInterval = max(16*n.BlockTime, Duration(time.Minute))
	}
	if n.HeaderHash == "" {
		n.HeaderHash = HeaderHashNode
		if KnownHeaderFormat[n.ChainID] {
			n.HeaderHash = HeaderHashRecompute
		}
	}
	return n
}

// ReorgWindowFrom is the lowest block whose finalized payments are still
// re-checked against the chain with the head at head: the finality depth
// and the reorg window below it.
func (n Network) ReorgWindowFrom(head uint64) uint64 {
	return head - min(head, uint64(n.Confirmations+n.ReorgWindow))
}

// DefaultReorgWindow is how many blocks past finality an EVM network's
// finalized payments are re-checked where the configuration is silent:
// more than the deepest reorgs of public EVM chains (Polygon PoS's 157
// blocks in 2023), short of a 51% attack's thousands.
const DefaultReorgWindow = 1000

// Check reports the first mistake in a network's configuration.
func (n Network) Check() error {
	switch {
	case n.Key == "":
		return fmt.Errorf("network: key is required")
	case n.Kind != "" && n.Kind != KindEVM && n.Kind != KindBitcoin:
		return fmt.Errorf("network %q: kind must be %s or %s", n.Key, KindEVM, KindBitcoin)
	case len(n.RPCURLs) == 0:
		return fmt.Errorf("network %q: at least one rpcUrl is required", n.Key)
	case n.Kind == KindBitcoin:
		return n.checkBitcoin()
	case n.Chain != "" || len(n.Finality) > 0:
		return fmt.Errorf("network %q: chain and finality are a Bitcoin network's settings (kind bitcoin)", n.Key)
	case n.ChainID <= 0:
		return fmt.Errorf("network %q: chainId must be positive", n.Key)
	case n.Confirmations < 0:
		return fmt.Errorf("network %q: confirmations must not be negative", n.Key)
	case n.ReorgWindow < 0 || n.ReorgCheckInterval < 0:
		return fmt.Errorf("network %q: reorgWindow and reorgCheckInterval must not be negative", n.Key)
	case n.HeaderHash != "" && n.HeaderHash != HeaderHashRecompute && n.HeaderHash != HeaderHashNode:
		return fmt.Errorf("network %q: headerHash must be %s or %s", n.Key, HeaderHashRecompute, HeaderHashNode)
	}
	return n.checkExplorer()
}

func (n Network) checkExplorer() error {
	if n.ExplorerURL != "" && n.ExplorerURL != "none" && !strings.HasPrefix(n.ExplorerURL, "https://") && !strings.HasPrefix(n.ExplorerURL, "http://") {
		return fmt.Errorf("network %q: explorerUrl must be an http(s) address or none", n.Key)
	}
	return nil
}
