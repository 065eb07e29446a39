package payment

// PriceSource tells how an asset's USD price is found.
type PriceSource struct {
	// Kind is "usd_pegged" (1 unit = 1 USD) or "chainlink" (an aggregator's
	// latestRoundData, read on-chain).
	Kind string `json:"kind"`
	// Aggregator is the aggregator's contract address for kind "chainlink".
	Aggregator string `json:"aggregator,omitempty"`
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
