package views

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/paymentsd/paymentsd/payment"
)

// Refund is a refund as the API shows it (both shapes alike).
type Refund struct {
	ID                string  `json:"id"`
	ProjectID         string  `json:"projectId"`
	IsLive            bool    `json:"isLive"`
	CheckoutSessionID string  `json:"checkoutSessionId"`
	Status            string  `json:"status"`
	Network           string  `json:"network"`
	ChainID           int64   `json:"chainId"`
	AssetDefinitionID string  `json:"assetDefinitionId"`
	Symbol            string  `json:"symbol"`
	TokenAddress      *string `json:"tokenAddress"`
	Amount            string  `json:"amount"`
	AmountBaseUnits   string  `json:"amountBaseUnits"`
	// AmountUSD and RateUSD are set on a refund asked in USD: the amount
	// asked and the price it was converted at.
	AmountUSD     *string `json:"amountUsd"`
	RateUSD       *string `json:"rateUsd"`
	Reason        string  `json:"reason"`
	FromAddress   string  `json:"fromAddress"`
	ToAddress     *string `json:"toAddress"`
	AddressSource *string `json:"addressSource"`
	// ApprovedBy and ApprovedAt: the owner who approved a refund to an
	// address the merchant gave, and when.
	ApprovedBy *string `json:"approvedBy"`
	ApprovedAt *string `json:"approvedAt"`
	// Transfer is the transaction the merchant signs, once the address is
	// known: exactly what will be paid.
	Transfer      *PreparedTransfer `json:"transfer"`
	TxHash        *string           `json:"txHash"`
	FailureReason *string           `json:"failureReason"`
	// ClaimURL is the customer's link to give the address, shown once,
	// when the refund is created without one.
	ClaimURL  *string `json:"claimUrl,omitempty"`
	CreatedAt string  `json:"createdAt"`
	UpdatedAt string  `json:"updatedAt"`
}

// PreparedTransfer is an EVM transaction's call: from, to (the token's
// contract, or the recipient of the native coin), value in wei and data.
type PreparedTransfer struct {
	ChainID int64  `json:"chainId"`
	From    string `json:"from"`
	To      string `json:"to"`
	Value   string `json:"value"`
	Data    string `json:"data"`
}

// erc20Transfer is the selector of ERC-20's transfer(address,uint256).
var erc20Transfer = []byte{0xa9, 0x05, 0x9c, 0xbb}

// TransferOf is the call that pays r: an ERC-20 transfer from the address
// that holds the funds, or a plain transfer of the native coin; nil while
// the address is not known.
func TransferOf(r payment.Refund) *PreparedTransfer { return prepared(r.Outgoing) }

// prepared is the call that makes an outgoing transfer (a refund's, a
// payout's); nil without its destination.
func prepared(o payment.Outgoing) *PreparedTransfer {
	if o.ToAddress == "" || o.Bitcoin() { // bitcoin: planned by the signer from the project's coins
		return nil
	}
	amount, _ := new(big.Int).SetString(o.AmountBaseUnits, 10)
	if amount == nil {
		amount = new(big.Int)
	}
	t := &PreparedTransfer{ChainID: o.ChainID, From: o.FromAddress, To: o.ToAddress, Value: amount.String(), Data: "0x"}
	if o.TokenAddress != "" {
		data := append([]byte{}, erc20Transfer...)
		data = append(data, common.LeftPadBytes(common.HexToAddress(o.ToAddress).Bytes(), 32)...)
		data = append(data, common.LeftPadBytes(amount.Bytes(), 32)...)
		t.To, t.Value, t.Data = o.TokenAddress, "0", hexutil.Encode(data)
	}
	return t
}

// RefundOf renders a refund.
func RefundOf(r payment.Refund) Refund {
	v := Refund{ID: r.ID, ProjectID: r.ProjectID, IsLive: r.IsLive, CheckoutSessionID: r.CheckoutSessionID,
		Status: string(r.Status), Network: r.Network, ChainID: r.ChainID, AssetDefinitionID: r.AssetDefinitionID,
		Symbol: r.Symbol, TokenAddress: nonEmpty(r.TokenAddress), Amount: r.Amount(), AmountBaseUnits: r.AmountBaseUnits,
		Reason: r.Reason, FromAddress: r.FromAddress, ToAddress: nonEmpty(r.ToAddress), AddressSource: nonEmpty(r.AddressSource),
		Transfer: TransferOf(r), TxHash: nonEmpty(r.TxHash), FailureReason: nonEmpty(r.FailureReason),
		ApprovedBy: nonEmpty(r.ApprovedBy), CreatedAt: Time(r.CreatedAt), UpdatedAt: Time(r.UpdatedAt)}
	if r.ApprovedAt != nil {
		at := Time(*r.ApprovedAt)
		v.ApprovedAt = &at
	}
	if r.AmountUSD != nil {
		usd := payment.FormatUSD(*r.AmountUSD)
		v.AmountUSD = &usd
	}
	if r.RateUSD != nil {
		rate := r.RateUSD.String()
		v.RateUSD = &rate
	}
	return v
}

// RefundEvent renders a refund as an event's data.
func RefundEvent(r payment.Refund, version int) ([]byte, error) {
	return Versioned(RefundOf(r), version)
}

// RefundClaim is what the customer's claim link shows of a refund: what
// comes back, on which network, and where it stands; nothing of the
// merchant's records.
type RefundClaim struct {
	Status       string  `json:"status"`
	Network      string  `json:"network"`
	ChainID      int64   `json:"chainId"`
	Symbol       string  `json:"symbol"`
	TokenAddress *string `json:"tokenAddress"`
	Amount       string  `json:"amount"`
	Reason       string  `json:"reason"`
	ToAddress    *string `json:"toAddress"`
	TxHash       *string `json:"txHash"`
}

// RefundClaimOf renders a refund for its claim link.
func RefundClaimOf(r payment.Refund) RefundClaim {
	return RefundClaim{Status: string(r.Status), Network: r.Network, ChainID: r.ChainID, Symbol: r.Symbol,
		TokenAddress: nonEmpty(r.TokenAddress), Amount: r.Amount(), Reason: r.Reason, ToAddress: nonEmpty(r.ToAddress),
		TxHash: nonEmpty(r.TxHash)}
}

// SessionRefunds is what a session received per asset, what went back and
// what remains to refund; Status is null until a refund is finalized.
type SessionRefunds struct {
	Status *string         `json:"status"`
	Assets []RefundBalance `json:"assets"`
}

// RefundBalance is one asset's line of SessionRefunds, in whole units.
type RefundBalance struct {
	AssetDefinitionID string `json:"assetDefinitionId"`
	Symbol            string `json:"symbol"`
	Received          string `json:"received"`
	Refunded          string `json:"refunded"`
	Remaining         string `json:"remaining"`
}

// SessionRefundsOf renders a session's refund books (payment.RefundBalances)
// with the catalog's symbols and decimals.
func SessionRefundsOf(sessionID string, txs []payment.Transaction, refunds []payment.Refund, catalog payment.Catalog) SessionRefunds {
	balances, status := payment.RefundBalances(sessionID, txs, refunds)
	out := SessionRefunds{Status: nonEmpty(status), Assets: make([]RefundBalance, 0, len(balances))}
	for _, b := range balances {
		a, _ := catalog.Asset(b.AssetID)
		out.Assets = append(out.Assets, RefundBalance{AssetDefinitionID: b.AssetID, Symbol: a.Symbol,
			Received: payment.UnitsToAmount(b.Received.String(), a.Decimals), Refunded: payment.UnitsToAmount(b.Refunded.String(), a.Decimals),
			Remaining: payment.UnitsToAmount(b.Remaining.String(), a.Decimals)})
	}
	return out
}
