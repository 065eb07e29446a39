package payment

import (
	"math/big"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// PrefixRefund begins a refund's ID.
const PrefixRefund = "rf_"

// RefundStatus is where a refund stands.
type RefundStatus string

// A refund waits for the address it is paid to (the customer gives it
// through the claim link, or the merchant does), then for the merchant's
// signed transfer; once sent it is followed on chain as a payment is. An
// address the merchant gives waits first for an owner's approval, as a
// payout batch does: only the customer's own word through the claim link
// goes to the signature without one.
const (
	RefundAwaitingAddress   RefundStatus = "awaiting_address"
	RefundAwaitingApproval  RefundStatus = "awaiting_approval"
	RefundAwaitingSignature RefundStatus = "awaiting_signature"
	RefundSent              RefundStatus = "sent"
	RefundConfirmed         RefundStatus = "confirmed"
	RefundFinalized         RefundStatus = "finalized"
	RefundFailed            RefundStatus = "failed"
	RefundCanceled          RefundStatus = "canceled"
	// RefundException is a reported transaction that moved the refund's
	// funds otherwise than prepared (less, more, elsewhere): what it holds
	// stays held until the merchant settles it.
	RefundException RefundStatus = "exception"
	// RefundStale is a sent transfer not mined within the bound
	// (StaleAfter): still followed, and the merchant may report its
	// replacement or cancel it.
	RefundStale RefundStatus = "stale"
	// RefundReversed is a finalized transfer whose block left the chain
	// in a reorg deeper than finality: nothing is paid unless it is mined
	// again, which it is followed for; the merchant may cancel it, as a
	// stale one, and send again.
	RefundReversed RefundStatus = "reversed"
)

// RefundStatuses are the statuses a refunds list filters by.
var RefundStatuses = []RefundStatus{RefundAwaitingAddress, RefundAwaitingApproval, RefundAwaitingSignature, RefundSent,
	RefundConfirmed, RefundFinalized, RefundFailed, RefundCanceled, RefundException, RefundStale, RefundReversed}

// Holds tells whether a refund in the status counts against what remains
// to refund of its session: every refund but a failed or canceled one.
func (s RefundStatus) Holds() bool { return s != RefundFailed && s != RefundCanceled }

// Cancelable tells whether a refund in the status can still be canceled:
// nothing has been sent for it, or what was sent is stale (its
// transaction is still followed: mined after all, it counts).
func (s RefundStatus) Cancelable() bool {
	return s == RefundAwaitingAddress || s == RefundAwaitingApproval || s == RefundAwaitingSignature || s == RefundStale ||
		s == RefundReversed
}

// Who gave a refund's address.
const (
	AddressFromCustomer = "customer"
	AddressFromMerchant = "merchant"
)

// The events of a refund.
const (
	EventRefundCreated         EventType = "refund.created"
	EventRefundAddressProvided EventType = "refund.address_provided"
	// EventRefundApproved is an owner approving a refund to an address the
	// merchant gave: it may be signed.
	EventRefundApproved  EventType = "refund.approved"
	EventRefundSent      EventType = "refund.sent"
	EventRefundConfirmed EventType = "refund.confirmed"
	EventRefundFinalized EventType = "refund.finalized"
	EventRefundFailed    EventType = "refund.failed"
	EventRefundCanceled  EventType = "refund.canceled"
	EventRefundException EventType = "refund.exception"
	EventRefundStale     EventType = "refund.stale"
	EventRefundReversed  EventType = "refund.reversed"
	// EventRefundRejected is a reported transaction that was mined
	// without paying the refund from its source: not taken.
	EventRefundRejected EventType = "refund." + MoveRejected
)

// Refund gives back, in one asset on one network, part or all of what a
// checkout session received. The engine prepares the transfer (from the
// address that received the payment, the asset, the amount, to the address
// given); the merchant signs it.
type Refund struct {
	ID                string
	ProjectID         string
	IsLive            bool
	CheckoutSessionID string
	// Outgoing is the prepared transfer: from the address the session was
	// paid to, to the address given (once given).
	Outgoing
	// AmountUSD and RateUSD are the quote of a refund asked in USD: the
	// amount asked and the asset's price it was converted at.
	AmountUSD *decimal.Decimal
	RateUSD   *decimal.Decimal
	Reason    string
	// AddressSource says who gave ToAddress (AddressFromCustomer,
	// AddressFromMerchant).
	AddressSource string
	// ApprovedBy and ApprovedAt name the owner who approved a refund to an
	// address the merchant gave, and when (empty otherwise).
	ApprovedBy string
	ApprovedAt *time.Time
	// ClaimTokenHash is the hash of the claim link's token (HashSecret);
	// the token itself is shown once, to the merchant who creates the
	// refund.
	ClaimTokenHash string
	// Version counts the refund's recorded changes, starting at 1.
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RefundInput is the create payload of a refund. Amount (in the asset's
// whole units) and AmountUSD (converted at the asset's price now) exclude
// each other; with neither, all that remains is refunded.
type RefundInput struct {
	AssetDefinitionID *string
	Amount            *string
	AmountUSD         *string
	Address           *string
	Reason            *string
	Problems          Problems
}

// MaxRefundReason bounds a refund's reason.
const MaxRefundReason = 500

// Counts tells whether a transfer counts as paid to session: its own
// (sent to its address and not unexpected), or assigned to it.
func (t Transaction) Counts(sessionID string) bool {
	return t.CheckoutSessionID == sessionID && !t.Unexpected || t.AssignedSessionID == sessionID
}

// Refundable is what remains to refund of a session in an asset: what it
// received in finalized transfers (a transfer still confirming may yet be
// reorged out, so it cannot be given back), less every refund that holds.
func Refundable(sessionID, assetID string, txs []Transaction, refunds []Refund) *big.Int {
	left := new(big.Int)
	for _, t := range txs {
		if t.Counts(sessionID) && t.Status == TxFinalized && t.AssetDefinitionID == assetID {
			left.Add(left, units(t.AmountBaseUnits))
		}
	}
	for _, r := range refunds {
		if r.Status.Holds() && r.AssetDefinitionID == assetID {
			left.Sub(left, units(r.AmountBaseUnits))
		}
	}
	return left
}

func units(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return new(big.Int)
	}
	return n
}

// NewRefund checks a refund's payload against its session, the session's
// transfers and its earlier refunds, and returns the refund to record
// (without ID or claim token). rate gives an asset's USD price, asked
// only of a refund in USD. Asking more than remains is a validation error
// naming what does.
func NewRefund(in RefundInput, s Session, txs []Transaction, refunds []Refund, catalog Catalog,
	rate func(Asset) (decimal.Decimal, bool), now time.Time) (Refund, error) {
	probs := in.Problems
	assetID := refundAsset(in, s, txs, &probs)
	if in.Amount != nil && in.AmountUSD != nil {
		probs.Add("amountUsd", "is not allowed with amount: give one or the other")
	}
	r := Refund{ProjectID: s.ProjectID, IsLive: s.IsLive, CheckoutSessionID: s.ID,
		Outgoing: Outgoing{Status: RefundAwaitingAddress, FromAddress: s.DepositAddress}, Version: 1, CreatedAt: now, UpdatedAt: now}
	if in.Reason != nil {
		if len(*in.Reason) > MaxRefundReason {
			probs.Addf("reason", "must be at most %d bytes", MaxRefundReason)
		}
		r.Reason = *in.Reason
	}
	a, known := catalog.Asset(assetID)
	if in.Address != nil {
		addr, msg := checkPayeeOf(known && a.Bitcoin(), *in.Address)
		if msg != "" {
			probs.Add("address", msg)
		}
		r.ToAddress, r.AddressSource, r.Status = addr, AddressFromMerchant, RefundAwaitingApproval
	}
	if len(probs) > 0 {
		return r, probs.Err()
	}
	if !known {
		// A transfer of an asset the deployment no longer lists.
		probs.Add("assetDefinitionId", "is not an asset of this deployment")
		return r, probs.Err()
	}
	r.AssetDefinitionID, r.Network, r.ChainID, r.Symbol = a.ID, a.Network, a.ChainID, a.Symbol
	r.Decimals, r.TokenAddress = a.Decimals, a.TokenAddress
	if a.Bitcoin() {
		// Paid from the project's Bitcoin deposit key: its coins at the
		// session's Bitcoin address first (cmd paymentsd refund send).
		r.FromAddress = s.BitcoinAddress
	}
	left := Refundable(s.ID, a.ID, txs, refunds)
	amount, field, err := refundAmount(in, &r, a, left, rate, &probs)
	if err != nil {
		return r, err
	}
	if left.Sign() <= 0 {
		probs.Add(field, "nothing remains to refund: the checkout session's "+a.Symbol+" is refunded already")
		return r, probs.Err()
	}
	if amount.Cmp(left) > 0 {
		probs.Addf(field, "is more than remains to refund: %s %s", UnitsToAmount(left.String(), a.Decimals), a.Symbol)
		return r, probs.Err()
	}
	r.AmountBaseUnits = amount.String()
	return r, nil
}

// refundAsset is the asset a refund of session s pays back: the one
// asked, which the session must have received final, or else the only
// one it received.
func refundAsset(in RefundInput, s Session, txs []Transaction, probs *Problems) string {
	// The assets the session received, in the order first received.
	var received []string
	for _, t := range txs {
		if t.Counts(s.ID) && t.Status == TxFinalized && !slices.Contains(received, t.AssetDefinitionID) {
			received = append(received, t.AssetDefinitionID)
		}
	}
	switch {
	case in.AssetDefinitionID != nil:
		if !slices.Contains(received, *in.AssetDefinitionID) {
			probs.Add("assetDefinitionId", "the checkout session has received nothing final in this asset")
		}
		return *in.AssetDefinitionID
	case len(received) == 1:
		return received[0]
	case len(received) == 0:
		probs.Add("checkoutSessionId", "the checkout session has received nothing final to refund")
	default:
		probs.Add("assetDefinitionId", "is required: the checkout session received more than one asset")
	}
	return ""
}

// refundAmount is the amount in base units of a that refund r asks, and
// the field that says it: amount; amountUsd, at rate's price now, which r
// records; else all that is left.
func refundAmount(in RefundInput, r *Refund, a Asset, left *big.Int, rate func(Asset) (decimal.Decimal, bool),
	probs *Problems) (amount *big.Int, field string, err error) {
	switch {
	case in.Amount != nil:
		base, msg := ParseTokenAmount(*in.Amount, a.Decimals)
		if msg != "" {
			probs.Add("amount", msg)
			return nil, "", probs.Err()
		}
		return units(base), "amount", nil
	case in.AmountUSD != nil:
		usd, msg := ParseUSD(*in.AmountUSD)
		if msg != "" {
			probs.Add("amountUsd", msg)
			return nil, "", probs.Err()
		}
		price, ok := rate(a)
		if !ok {
			return nil, "", &Error{Kind: KindUnavailable, Message: "The price of " + a.Symbol + " cannot be read now: give the amount in " + a.Symbol}
		}
		// Rounded down to a base unit: the customer gets no more than
		// the USD asked at this price.
		amount = usd.Shift(int32(a.Decimals)).Div(price).Floor().BigInt()
		if amount.Sign() <= 0 {
			probs.Add("amountUsd", "is less than one base unit of "+a.Symbol+" at its price now")
			return nil, "", probs.Err()
		}
		r.AmountUSD, r.RateUSD = &usd, &price
		return amount, "amountUsd", nil
	default:
		return left, "amount", nil
	}
}

// SetRefundAddress checks an address given for a refund and sets it, by
// whom (AddressFromCustomer, AddressFromMerchant). Once the transfer is
// sent, or the refund canceled, the address cannot change; the address the
// customer gave through the claim link is never replaced by the merchant
// (cancel the refund and make another). The customer's address goes to
// the signature; the merchant's waits for an owner's approval, given
// again whenever it changes.
func SetRefundAddress(r *Refund, address, source string, now time.Time) error {
	if r.Status != RefundAwaitingAddress && r.Status != RefundAwaitingApproval && r.Status != RefundAwaitingSignature {
		return Conflict("The refund's address cannot change: it is " + string(r.Status))
	}
	if r.AddressSource == AddressFromCustomer && source != AddressFromCustomer {
		return Conflict("The customer gave the refund's address through the claim link: it is not replaced without the customer. " +
			"Cancel the refund and make another if the customer asks for another address")
	}
	addr, msg := checkPayeeOf(r.Bitcoin(), address)
	if msg != "" {
		var probs Problems
		probs.Add("address", msg)
		return probs.Err()
	}
	r.ToAddress, r.AddressSource, r.Status, r.UpdatedAt = addr, source, RefundAwaitingSignature, now
	r.ApprovedBy, r.ApprovedAt = "", nil
	if source != AddressFromCustomer {
		r.Status = RefundAwaitingApproval
	}
	return nil
}

// CanApproveRefunds says whether the principal may approve a refund to an
// address the merchant gave: what approves a payout batch (an owner
// signed in, never an API key or an application).
func (p Principal) CanApproveRefunds() bool { return p.CanApprovePayouts() }

// ApproveRefund approves a refund waiting for approval: it waits for its
// signature.
func ApproveRefund(r *Refund, by string, now time.Time) error {
	if r.Status != RefundAwaitingApproval {
		return Conflict("The refund is " + string(r.Status) + ": only a refund awaiting approval is approved")
	}
	r.Status, r.ApprovedBy, r.ApprovedAt, r.UpdatedAt = RefundAwaitingSignature, by, &now, now
	return nil
}

// CancelRefund cancels a refund nothing has been sent for.
func CancelRefund(r *Refund, now time.Time) error {
	if !r.Status.Cancelable() {
		return Conflict("The refund cannot be canceled: it is " + string(r.Status))
	}
	r.Status, r.UpdatedAt = RefundCanceled, now
	return nil
}

// ReportRefundSent records the hash of the transaction the merchant sent
// for a refund. A refund waiting for its signature becomes sent; a sent
// one not yet mined takes a replacement's hash (the same transfer sent
// again at a higher fee). The same hash again changes nothing (""), so a
// signer may repeat its report.
func ReportRefundSent(r *Refund, hash string, now time.Time) (EventType, error) {
	switch r.Status {
	case RefundAwaitingAddress:
		return "", Conflict("The refund has no address yet: nothing can have been sent for it")
	case RefundAwaitingApproval:
		return "", Conflict("The refund's address was given by the merchant and awaits an owner's approval: nothing may be sent for it")
	}
	if changed, err := r.report("refund", hash, now); err != nil || !changed {
		return "", err
	}
	r.UpdatedAt = now
	return EventRefundSent, nil
}

// FollowRefund moves a followed refund along what the chain says of its
// transaction (Outgoing.follow) and names the event of the move ("" for
// none): refund.sent again when its block left the chain.
func FollowRefund(r *Refund, look SentLook) EventType {
	move := r.follow(look)
	if move == "" {
		return ""
	}
	r.UpdatedAt = look.Now
	return EventType("refund." + move)
}

// SpotRefund records as sent a refund waiting for its signature when the
// scanner sees its prepared transfer made, unreported, from the refund's
// source (Outgoing.spot): its own address, or one of proven, the
// addresses its project has proven it controls (which may pay it, as a
// reported transaction may: SentLook.Sources).
func SpotRefund(r *Refund, t Transfer, txHash string, now time.Time, proven ...string) EventType {
	if !r.spot(t, txHash, now, proven...) {
		return ""
	}
	r.UpdatedAt = now
	return EventRefundSent
}

// RefundBalance is what a session received in one asset (finalized), what
// went back to the customer (finalized refunds) and what remains to
// refund (less every refund that holds).
type RefundBalance struct {
	AssetID                       string
	Received, Refunded, Remaining *big.Int
}

// RefundBalances are a session's balances per asset received, in the
// order first received, and its refund status: RefundedAll when every
// asset received went back in full, RefundedPart when some did, "" when
// none did.
func RefundBalances(sessionID string, txs []Transaction, refunds []Refund) ([]RefundBalance, string) {
	var out []RefundBalance
	at := map[string]int{}
	for _, t := range txs {
		if !t.Counts(sessionID) || t.Status != TxFinalized {
			continue
		}
		i, ok := at[t.AssetDefinitionID]
		if !ok {
			i, at[t.AssetDefinitionID] = len(out), len(out)
			out = append(out, RefundBalance{AssetID: t.AssetDefinitionID, Received: new(big.Int), Refunded: new(big.Int)})
		}
		out[i].Received.Add(out[i].Received, units(t.AmountBaseUnits))
	}
	status, all := "", len(out) > 0
	for i := range out {
		for _, r := range refunds {
			if r.AssetDefinitionID == out[i].AssetID && r.Status == RefundFinalized {
				out[i].Refunded.Add(out[i].Refunded, units(r.AmountBaseUnits))
			}
		}
		out[i].Remaining = Refundable(sessionID, out[i].AssetID, txs, refunds)
		if out[i].Refunded.Sign() > 0 {
			status = RefundedPart
		}
		all = all && out[i].Refunded.Cmp(out[i].Received) >= 0
	}
	if status != "" && all {
		status = RefundedAll
	}
	return out, status
}

// A session's refund status.
const (
	RefundedAll  = "refunded"
	RefundedPart = "partially_refunded"
)
