package payment

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/crypto/sha3"
)

// PricingTokenAmount is the pricing model of a plan priced in token
// amounts and paid to one recipient address (the second API shape's plan).
const PricingTokenAmount = "token_amount"

// Limits of a plan priced in token amounts.
const (
	MinQuoteTTL = time.Minute
	MaxQuoteTTL = 7 * 24 * time.Hour
)

// TokenOption is one way to pay a plan priced in token amounts: an amount
// of one asset of the catalog.
type TokenOption struct {
	Network         string `json:"network"`
	ChainID         int64  `json:"chainId"`
	AssetID         string `json:"assetDefinitionId"`
	Symbol          string `json:"symbol"`
	Decimals        int    `json:"decimals"`
	TokenAddress    string `json:"tokenAddress"`
	Amount          string `json:"amount"`
	AmountBaseUnits string `json:"amountBaseUnits"`
}

// TokenPlanInput is the second API shape's plan payload, as decoded.
type TokenPlanInput struct {
	Name             *string
	RecipientAddress *string
	PaymentOptions   []TokenOptionInput
	RedirectURL      *string
	// QuoteTTL is in seconds.
	QuoteTTL *int64
	// OptionsSent tells an empty paymentOptions array from an absent one.
	OptionsSent bool
}

// TokenOptionInput is one payment option as sent.
type TokenOptionInput struct {
	// NetworkID is a network's key ("ethereum") or its chain ID ("1").
	NetworkID    *string
	TokenAddress *string
	Amount       *string
}

// SharedRecipient reports whether the plan's sessions share its recipient
// address (a plan priced in token amounts) rather than each having a
// deposit address of its own.
func (p Plan) SharedRecipient() bool { return p.RecipientAddress != "" }

// newTokenPlan validates a second-shape plan payload.
func newTokenPlan(in TokenPlanInput, p Plan, catalog Catalog, probs *Problems) Plan {
	p.PricingModel = PricingTokenAmount
	p.AcceptedAssetPolicies = []Policy{}
	if in.Name == nil {
		probs.Add("name", "is required")
	} else {
		p.Title = checkName("name", *in.Name, probs)
	}
	if in.RecipientAddress == nil || *in.RecipientAddress == "" {
		probs.Add("recipientAddress", "is required")
	} else if a, msg := CheckPayee(*in.RecipientAddress); msg != "" {
		probs.Add("recipientAddress", msg)
	} else {
		p.RecipientAddress = a
	}
	switch {
	case !in.OptionsSent:
		probs.Add("paymentOptions", "is required")
	case len(in.PaymentOptions) == 0:
		probs.Add("paymentOptions", "must have at least one item")
	case len(in.PaymentOptions) > MaxPolicies:
		probs.Addf("paymentOptions", "must have at most %d items", MaxPolicies)
	}
	for i, o := range in.PaymentOptions {
		path := fmt.Sprintf("paymentOptions[%d]", i)
		opt, ok := newTokenOption(o, path, p.IsLive, catalog, probs)
		if !ok {
			continue
		}
		if slices.ContainsFunc(p.TokenOptions, func(x TokenOption) bool { return x.AssetID == opt.AssetID }) {
			probs.Add(path, "names the same network and token as an earlier option")
			continue
		}
		p.TokenOptions = append(p.TokenOptions, opt)
	}
	if in.RedirectURL != nil {
		p.RedirectURL = checkRedirectURL(*in.RedirectURL, p.IsLive, probs)
	}
	if in.QuoteTTL != nil {
		ttl := time.Duration(*in.QuoteTTL) * time.Second
		if *in.QuoteTTL < int64(MinQuoteTTL/time.Second) || *in.QuoteTTL > int64(MaxQuoteTTL/time.Second) {
			probs.Addf("quoteTtl", "must be a number of seconds between %d and %d", int64(MinQuoteTTL/time.Second), int64(MaxQuoteTTL/time.Second))
		} else {
			p.QuoteTTL = ttl
		}
	}
	return p
}

func newTokenOption(in TokenOptionInput, path string, isLive bool, catalog Catalog, probs *Problems) (TokenOption, bool) {
	n := len(*probs)
	var network string
	if in.NetworkID == nil || *in.NetworkID == "" {
		probs.Add(path+".networkId", "is required")
	} else if network = catalog.networkOf(*in.NetworkID, isLive); network == "" {
		probs.Add(path+".networkId", "is not a network of this environment (see GET /api/v1/assets)")
	}
	token := ""
	if in.TokenAddress != nil && *in.TokenAddress != "" {
		a, msg := CheckAddress(*in.TokenAddress)
		if msg != "" {
			probs.Add(path+".tokenAddress", msg)
		} else if a != ZeroAddress {
			token = a
		}
	}
	var asset Asset
	if network != "" && len(*probs) == n {
		i := slices.IndexFunc(catalog.Assets, func(a Asset) bool {
			return a.Network == network && a.IsLive == isLive && strings.EqualFold(a.TokenAddress, token)
		})
		switch {
		case i >= 0 && catalog.Assets[i].Bitcoin():
			// A shared recipient is an EVM address; bitcoin is paid to
			// an address of the session's own (docs/networks.md).
			probs.Add(path+".networkId", "is a Bitcoin network: a plan with a recipientAddress is paid on EVM networks; "+
				"accept bitcoin with a USD-priced plan (acceptedAssets)")
		case i >= 0:
			asset = catalog.Assets[i]
		case token == "":
			probs.Add(path+".tokenAddress", "the network's native coin is not accepted on "+network+"; name a token")
		default:
			probs.Add(path+".tokenAddress", "is not a token accepted on "+network+" (see GET /api/v1/assets)")
		}
	}
	var units string
	if in.Amount == nil {
		probs.Add(path+".amount", "is required")
	} else if asset.ID != "" {
		var msg string
		if units, msg = ParseTokenAmount(*in.Amount, asset.Decimals); msg != "" {
			probs.Add(path+".amount", msg)
		}
	}
	if len(*probs) != n {
		return TokenOption{}, false
	}
	return TokenOption{Network: asset.Network, ChainID: asset.ChainID, AssetID: asset.ID, Symbol: asset.Symbol,
		Decimals: asset.Decimals, TokenAddress: asset.TokenAddress, Amount: UnitsToAmount(units, asset.Decimals),
		AmountBaseUnits: units}, true
}

// networkOf returns the key of the environment's network named by its key
// or its chain ID, or "".
func (c Catalog) networkOf(id string, isLive bool) string {
	chainID, err := strconv.ParseInt(id, 10, 64)
	for _, a := range c.Assets {
		if a.IsLive == isLive && (a.Network == id || err == nil && a.ChainID == chainID) {
			return a.Network
		}
	}
	return ""
}

// checkName checks a plan's name (the second shape's title).
func checkName(field, s string, probs *Problems) string {
	var mine Problems
	t := checkTitle(s, &mine)
	for _, p := range mine {
		probs.Add(field, p.Message)
	}
	return t
}

var tokenAmountPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,29})(\.[0-9]{1,77})?$`)

// ParseTokenAmount parses a token amount in whole units ("12.5") into base
// units of an asset with decimals: positive, no finer than the asset's
// decimals, no exponent, sign or spaces.
func ParseTokenAmount(s string, decimals int) (baseUnits string, msg string) {
	if !tokenAmountPattern.MatchString(s) {
		return "", "must be a decimal string such as \"12.5\""
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return "", "must be a decimal string"
	}
	if i := strings.IndexByte(s, '.'); i >= 0 && len(strings.TrimRight(s[i+1:], "0")) > decimals {
		return "", fmt.Sprintf("must have at most %d decimal places (the token's decimals)", decimals)
	}
	if !d.IsPositive() {
		return "", "must be greater than 0"
	}
	return d.Shift(int32(decimals)).BigInt().String(), ""
}

var txHashPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)

// ValidTxHash reports whether s is a transaction hash: 0x and 64
// hexadecimal digits; TxHashProblem says so when it is not.
func ValidTxHash(s string) bool { return txHashPattern.MatchString(s) }

// TxHashProblem is the problem of a txHash that is not one.
const TxHashProblem = "must be a 0x-prefixed 32-byte hex transaction hash"

// ZeroAddress is the EVM zero address, lowercase.
const ZeroAddress = "0x0000000000000000000000000000000000000000"

var addressPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// CheckAddress checks an EVM address: 0x and 40 hex digits, all lowercase,
// all uppercase, or with a valid EIP-55 checksum. It returns the address in
// its checksummed form (the zero address lowercase).
func CheckAddress(s string) (string, string) {
	if !addressPattern.MatchString(s) {
		return "", "must be an EVM address: 0x and 40 hexadecimal digits"
	}
	sum := ChecksumAddress(s)
	hexPart := s[2:]
	if hexPart != strings.ToLower(hexPart) && hexPart != strings.ToUpper(hexPart) && s != sum {
		return "", "has an invalid EIP-55 checksum (mixed case must match it; or send it in lowercase)"
	}
	if strings.EqualFold(s, ZeroAddress) {
		return ZeroAddress, ""
	}
	return sum, ""
}

// CheckPayee is CheckAddress for an address that is paid: the zero
// address, where funds burn, is refused too.
func CheckPayee(s string) (string, string) {
	a, msg := CheckAddress(s)
	if msg == "" && a == ZeroAddress {
		return "", "must not be the zero address"
	}
	return a, msg
}

// ChecksumAddress returns a 0x-prefixed hex address in its EIP-55 form.
func ChecksumAddress(s string) string {
	lower := strings.ToLower(strings.TrimPrefix(s, "0x"))
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	digest := hex.EncodeToString(h.Sum(nil))
	out := []byte(lower)
	for i, c := range out {
		if c >= 'a' && c <= 'f' && digest[i] >= '8' {
			out[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(out)
}
