package chainwatch

import (
	"encoding/json"
	"fmt"
	"time"
)

// Network is one EVM network the engine watches, from configuration.
type Network struct {
	Key     string   `json:"key"`
	ChainID int64    `json:"chainId"`
	RPCURLs []string `json:"rpcUrls"`
	// BlockTime sizes the timers that wait for confirmations.
	BlockTime Duration `json:"blockTime"`
	// Confirmations needed for finalized; with UseFinalizedTag, a block at
	// or below the node's `finalized` block is final too.
	Confirmations   int  `json:"confirmations"`
	UseFinalizedTag bool `json:"useFinalizedTag"`
	IsLive          bool `json:"isLive"`
	// MaxBlockRange bounds one scan (default 100 blocks).
	MaxBlockRange int `json:"maxBlockRange"`
	// PollInterval is how long the scanner waits at the head (default: the
	// block time).
	PollInterval Duration `json:"pollInterval"`
	// PendingTimeout fails a submitted transaction not mined in time
	// (default 30 minutes).
	PendingTimeout Duration `json:"pendingTimeout"`
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

// WithDefaults fills the optional settings.
func (n Network) WithDefaults() Network {
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
	if n.Confirmations <= 0 {
		n.Confirmations = 1
	}
	return n
}

// Check reports the first mistake in a network's configuration.
func (n Network) Check() error {
	switch {
	case n.Key == "":
		return fmt.Errorf("network: key is required")
	case n.ChainID <= 0:
		return fmt.Errorf("network %q: chainId must be positive", n.Key)
	case len(n.RPCURLs) == 0:
		return fmt.Errorf("network %q: at least one rpcUrl is required", n.Key)
	case n.Confirmations < 0:
		return fmt.Errorf("network %q: confirmations must not be negative", n.Key)
	}
	return nil
}
