package payment

import "time"

// PriceSource tells how an asset's USD price is found.
type PriceSource struct {
	// Kind is "usd_pegged" (1 unit = 1 USD) or "chainlink" (an aggregator's
	// latestRoundData, read on-chain).
	Kind string `json:"kind"`
	// Aggregator is the aggregator's contract address for kind "chainlink".
	Aggregator string `json:"aggregator,omitempty"`
	// HeartbeatSeconds is the oldest an aggregator's answer (its
	// updatedAt) may be for a quote, kind "chainlink" only: the feed's
	// heartbeat plus a margin. Default DefaultHeartbeatSeconds.
	HeartbeatSeconds int64 `json:"heartbeatSeconds,omitempty"`
	// Network is the configured EVM network whose node reads the
	// aggregator, kind "chainlink" only; empty for the asset's own. A
	// feed of the asset's price may live on another chain than the asset:
	// BTC/USD on Ethereum for bitcoin, ETH/USD on Ethereum for ether on a
	// chain without feeds.
	Network string `json:"network,omitempty"`
}

// FeedNetwork is the network whose node reads the price feed of an asset
// on the given network.
func (p PriceSource) FeedNetwork(assetNetwork string) string {
	if p.Network != "" {
		return p.Network
	}
	return assetNetwork
}

// DefaultHeartbeatSeconds is a price feed's heartbeat when the catalog
// names none: an hour, Chainlink's heartbeat of ETH/USD on Ethereum. A
// feed with a longer heartbeat (many L2 feeds update daily when the price
// is calm) needs its own, or its asset is left out of quotes.
const DefaultHeartbeatSeconds = 3600

// Heartbeat is the oldest an answer of the asset's price feed may be.
func (p PriceSource) Heartbeat() time.Duration {
	if p.HeartbeatSeconds > 0 {
		return time.Duration(p.HeartbeatSeconds) * time.Second
	}
	return DefaultHeartbeatSeconds * time.Second
}

// Price source kinds.
const (
	PriceUSDPegged = "usd_pegged"
	PriceChainlink = "chainlink"
)

// Asset is an asset definition: one token (or native coin) on one network,
// from the deployment's configuration.
type Asset struct {
	ID           string      `json:"id"`
	Symbol       string      `json:"symbol"`
	Name         string      `json:"name"`
	Decimals     int         `json:"decimals"`
	Network      string      `json:"network"`
	ChainID      int64       `json:"chainId"`
	TokenAddress string      `json:"tokenAddress"`
	IsLive       bool        `json:"isLive"`
	Price        PriceSource `json:"priceSource"`
}

// Native reports whether the asset is the network's native coin.
func (a Asset) Native() bool { return a.TokenAddress == "" }

// Bitcoin reports whether the asset is bitcoin on a Bitcoin network, which
// has no chain ID: an asset of chainId 0 (the engine refuses one on an EVM
// network at start).
func (a Asset) Bitcoin() bool { return a.ChainID == 0 }
