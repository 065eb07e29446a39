package payment

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// DefaultSessionLifetime is how long a session takes payments, unless the
// deployment sets another.
const DefaultSessionLifetime = 30 * time.Minute

// SessionInput is the create payload of a checkout session.
type SessionInput struct {
	PaymentPlanID *string
	Email         *string
	// Metadata is the metadata as decoded from JSON, numbers as
	// json.Number (nil when absent); CheckSessionInput checks it.
	Metadata  any
	AmountUSD *string
	// Problems found while decoding, reported with validation's own.
	Problems Problems
}

// CheckSessionInput checks the parts of a session payload that need no
// plan: the plan ID's form, the e-mail address and the metadata, and
// returns the metadata serialized.
func CheckSessionInput(in SessionInput) (json.RawMessage, error) {
	var probs Problems
	switch {
	case in.PaymentPlanID == nil || *in.PaymentPlanID == "":
		probs.Add("paymentPlanId", "is required")
	case !ValidID(PrefixPlan, *in.PaymentPlanID):
		probs.Add("paymentPlanId", "is not a payment plan ID")
	}
	if in.Email != nil && !ValidEmail(*in.Email) {
		probs.Add("email", "must be a valid e-mail address")
	}
	metadata := CheckMetadata(in.Metadata, &probs)
	found := slices.Clone(in.Problems)
	found.Merge(probs)
	return metadata, found.Err()
}

// AmountDue returns what a session for the plan asks of the customer, given
// the payload's amountUsd (required for variable plans, refused for fixed
// ones), or a validation error. The plan must be usable at time now.
func AmountDue(plan Plan, amountUSD *string, now time.Time) (decimal.Decimal, error) {
	switch plan.EffectiveStatus(now) {
	case PlanArchived:
		return decimal.Decimal{}, ErrPlanArchived
	case PlanExpired:
		return decimal.Decimal{}, ErrPlanExpired
	}
	var probs Problems
	if plan.PricingModel == PricingFixedUSD {
		if amountUSD != nil {
			probs.Add("amountUsd", "is not allowed: the payment plan has a fixed price")
			return decimal.Decimal{}, probs.Err()
		}
		return *plan.AmountUSD, nil
	}
	if amountUSD == nil {
		probs.Add("amountUsd", "is required: the payment plan has variable pricing")
		return decimal.Decimal{}, probs.Err()
	}
	d, msg := ParseUSD(*amountUSD)
	switch {
	case msg != "":
		probs.Add("amountUsd", msg)
	case d.LessThan(*plan.MinAmountUSD) || d.GreaterThan(*plan.MaxAmountUSD):
		probs.Addf("amountUsd", "must be between %s and %s", FormatUSD(*plan.MinAmountUSD), FormatUSD(*plan.MaxAmountUSD))
	}
	return d, probs.Err()
}

// TokenAmountDue checks that a session can be opened for a plan priced in
// token amounts at time now (no amountUsd: the plan's amounts are due).
func TokenAmountDue(plan Plan, amountUSD *string, now time.Time) error {
	switch plan.EffectiveStatus(now) {
	case PlanArchived:
		return ErrPlanArchived
	case PlanExpired:
		return ErrPlanExpired
	}
	if amountUSD != nil {
		var probs Problems
		probs.Add("amountUsd", "is not allowed: the payment plan is priced in token amounts")
		return probs.Err()
	}
	return nil
}

// ValueUSD is the USD value of base units of an asset with decimals at
// rate (USD per whole unit), to USDScale places.
func ValueUSD(baseUnits string, decimals int, rate decimal.Decimal) decimal.Decimal {
	d, err := decimal.NewFromString(baseUnits)
	if err != nil {
		return decimal.Zero
	}
	return d.Shift(-int32(decimals)).Mul(rate).Round(USDScale)
}

// PaymentOption is what a customer pays in one accepted asset.
type PaymentOption struct {
	AssetDefinitionID string `json:"assetDefinitionId"`
	Network           string `json:"network"`
	ChainID           int64  `json:"chainId"`
	Symbol            string `json:"symbol"`
	Decimals          int    `json:"decimals"`
	TokenAddress      string `json:"tokenAddress"`
	Amount            string `json:"amount"`
	AmountBaseUnits   string `json:"amountBaseUnits"`
	PaymentURI        string `json:"paymentUri"`
	// DepositAddress is where the option is paid when it is not the
	// session's deposit address: a Bitcoin address.
	DepositAddress string `json:"depositAddress,omitempty"`
	// Confirmations is the depth at which a bitcoin payment of the
	// session is final: its network's finality tier for the session's
	// amount, for the customer to know how long the wait is. A payment
	// worth more (an overpayment) waits the tier of what it pays.
	Confirmations int `json:"confirmations,omitempty"`
	// WalletAccountOnly says the network's nodes do not show the native
	// coin a contract sends by an internal call (a Safe, a smart account,
	// an exchange's batch payout): only a payment sent from a wallet
	// account (an EOA) is seen, and the hosted page says so.
	WalletAccountOnly bool `json:"walletAccountOnly,omitempty"`
}

// Quote returns the payment option for paying usd in asset at rate (USD per
// whole unit of the asset). The amount rounds up to the asset's decimals so
// that the customer never pays less than due. The EIP-681 URI is set when a
// deposit address is known.
func Quote(asset Asset, usd, rate decimal.Decimal, depositAddress string) PaymentOption {
	units := usd.Mul(decimal.New(1, int32(asset.Decimals))).DivRound(rate, 0)
	// DivRound rounds half away from zero; make it a ceiling.
	if units.Mul(rate).LessThan(usd.Mul(decimal.New(1, int32(asset.Decimals)))) {
		units = units.Add(decimal.New(1, 0))
	}
	base := units.BigInt()
	opt := PaymentOption{
		AssetDefinitionID: asset.ID,
		Network:           asset.Network,
		ChainID:           asset.ChainID,
		Symbol:            asset.Symbol,
		Decimals:          asset.Decimals,
		TokenAddress:      asset.TokenAddress,
		Amount:            decimal.NewFromBigInt(base, -int32(asset.Decimals)).String(),
		AmountBaseUnits:   base.String(),
	}
	if depositAddress != "" {
		opt.PaymentURI = PaymentURI(asset, depositAddress, base)
	}
	return opt
}

// PaymentURI returns the URI that asks a wallet to pay base units of asset
// to address: EIP-681 on an EVM network, BIP21 for bitcoin.
func PaymentURI(asset Asset, address string, base *big.Int) string {
	if asset.Bitcoin() {
		return BitcoinURI(address, base, "")
	}
	if asset.Native() {
		return fmt.Sprintf("ethereum:%s@%d?value=%s", address, asset.ChainID, base)
	}
	return fmt.Sprintf("ethereum:%s@%d/transfer?address=%s&uint256=%s", asset.TokenAddress, asset.ChainID, address, base)
}

// BitcoinURI returns the BIP21 URI that asks a wallet to pay sats to a
// Bitcoin address, with a label for the wallet to show when one is given.
func BitcoinURI(address string, sats *big.Int, label string) string {
	u := "bitcoin:" + address + "?amount=" + decimal.NewFromBigInt(sats, -8).String()
	if label != "" {
		u += "&label=" + url.QueryEscape(label)
	}
	return u
}

// Session is a checkout session.
type Session struct {
	ID            string
	TokenHash     string
	ProjectID     string
	PaymentPlanID string
	IsLive        bool
	Status        SessionStatus
	Email         string
	// Metadata is the merchant's JSON object, serialized (see
	// CheckMetadata).
	Metadata       json.RawMessage
	AmountUSD      decimal.Decimal
	AmountPaidUSD  decimal.Decimal
	DepositAddress string
	// SharedRecipient says DepositAddress is the plan's recipient, shared
	// with its other sessions: the session's transfers are those of the
	// exact amounts it holds (Reservation).
	SharedRecipient bool
	PaymentOptions  []PaymentOption
	QuoteExpiresAt  time.Time
	ExpiresAt       time.Time
	// LateUntil ends the late-payment window after ExpiresAt: payments seen
	// until then are still recorded, flagged paid_late.
	LateUntil    time.Time
	DepositIndex *int64
	// BitcoinAddress is the session's Bitcoin deposit address, derived at
	// BitcoinIndex from its project's Bitcoin account key, when it offers
	// bitcoin.
	BitcoinAddress string `json:",omitempty"`
	BitcoinIndex   *int64 `json:",omitempty"`
	// Version counts the session's recorded changes (its events).
	Version     int
	CompletedAt *time.Time
	Exception   string
	// Resolution is the merchant's resolution of an exception, if any.
	Resolution Resolution
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// UnitsToAmount renders base units of an asset with decimals as a decimal
// amount of whole units.
func UnitsToAmount(base string, decimals int) string {
	d, err := decimal.NewFromString(base)
	if err != nil {
		return "0"
	}
	return d.Shift(-int32(decimals)).String()
}

// DepositAddress is a used derivation index of a project's deposit key:
// the session it was given to, and how many indexes before it went unused.
type DepositAddress struct {
	Index     int64
	Address   string
	SessionID string
	Status    SessionStatus
	CreatedAt time.Time
	// GapBefore counts the unused indexes between the previous used one
	// (or index 0) and this one.
	GapBefore int64
	// Received sums the address's confirmed and finalized transfers per
	// asset (unexpected ones included: the funds are there all the same).
	Received []Received
	// LateUntil is when transfers to the address stop counting for its
	// session (the end of its late-payment window); nil for sessions
	// opened before the window was kept.
	LateUntil *time.Time
	// Outputs are a Bitcoin address's confirmed and finalized payments,
	// each an output a sweep spends (none for an EVM address).
	Outputs []PaidOutput
}

// PaidOutput is a Bitcoin payment's output to a deposit address.
type PaidOutput struct {
	TxID   string
	Vout   int64
	Sats   string
	Status TransactionStatus
}

// Received is what an address was paid in one asset, in base units.
type Received struct {
	AssetID         string
	Network         string
	AmountBaseUnits string
}
