package payment

import (
	"slices"
	"strings"
)

// Outgoing is a transfer out the engine prepared for the merchant to sign:
// a refund's or a payout's. It is the part of both that moves money: from
// which address, which asset, how much, to whom, and where its
// transaction stands.
type Outgoing struct {
	Status            RefundStatus
	Network           string
	ChainID           int64
	AssetDefinitionID string
	Symbol            string
	Decimals          int
	TokenAddress      string // empty: the network's native coin
	AmountBaseUnits   string
	// FromAddress holds the funds; ToAddress is where they go (empty
	// while a refund waits for its address).
	FromAddress   string
	ToAddress     string
	TxHash        string
	FailureReason string
}

// Amount is the amount in whole units of its asset.
func (o Outgoing) Amount() string { return UnitsToAmount(o.AmountBaseUnits, o.Decimals) }

// paidBy tells whether a transfer pays it: its asset, its amount, to its
// address. A reported transaction may pay it from any address (a
// treasury, once a deposit address is swept); the merchant's report says
// it is this one's.
func (o Outgoing) paidBy(t Transfer) bool {
	return t.AssetID == o.AssetDefinitionID && strings.EqualFold(t.To, o.ToAddress) && sameUnits(t.AmountBaseUnits, o.AmountBaseUnits)
}

// Pays tells whether a transfer of transaction hash is this one's: its
// recorded transaction, its asset and amount to its address.
func (o Outgoing) Pays(t Transfer, hash string) bool {
	return o.TxHash != "" && strings.EqualFold(o.TxHash, hash) && o.paidBy(t)
}

// spot records it as sent when it waits for its signature and the scanner
// sees its prepared transfer made, unreported, from its own address (which
// only the merchant's key moves). A transfer from elsewhere is not taken
// for it: another payment of the same amount to the same address would be.
func (o *Outgoing) spot(t Transfer, txHash string) bool {
	if o.Status != RefundAwaitingSignature || !strings.EqualFold(t.From, o.FromAddress) || !o.paidBy(t) {
		return false
	}
	o.Status, o.TxHash = RefundSent, strings.ToLower(txHash)
	return true
}

// report records the hash of the transaction the merchant sent for it
// (what names it in errors), and tells whether that changed anything. One
// waiting for its signature becomes sent; a sent one not yet mined takes a
// replacement's hash (the same transfer sent again at a higher fee); the
// same hash again changes nothing, so that a signer may repeat its report.
func (o *Outgoing) report(what, hash string) (bool, error) {
	if !ValidTxHash(hash) {
		var probs Problems
		probs.Add("txHash", TxHashProblem)
		return false, probs.Err()
	}
	hash = strings.ToLower(hash)
	switch {
	case o.TxHash == hash && (o.Status == RefundSent || o.Status == RefundConfirmed || o.Status == RefundFinalized):
		return false, nil
	case o.Status == RefundAwaitingSignature, o.Status == RefundSent:
		o.Status, o.TxHash = RefundSent, hash
		return true, nil
	}
	return false, Conflict("The " + what + " is " + string(o.Status) + ": its transaction cannot change")
}

// SentLook is what the chain says of a sent transaction.
type SentLook struct {
	Mined, Succeeded bool
	Final            bool
	Confirmations    int
	Required         int
	// Transfers are the transaction's transfers of the network's assets.
	Transfers []Transfer
}

// follow moves a sent one along what the chain says of its transaction,
// and tells whether it moved: confirmed once mined paying exactly what was
// prepared, finalized once final (or the network's confirmations deep),
// back to sent when its block leaves the chain, failed when it reverted
// (nothing moved, so nothing is held), and an exception when it moved the
// funds otherwise.
func (o *Outgoing) follow(look SentLook) bool {
	if o.Status != RefundSent && o.Status != RefundConfirmed {
		return false
	}
	next := RefundStatus("")
	switch {
	case !look.Mined:
		if o.Status == RefundConfirmed {
			next = RefundSent
		}
	case !look.Succeeded:
		next, o.FailureReason = RefundFailed, "the transaction reverted: nothing was paid"
	case !slices.ContainsFunc(look.Transfers, o.paidBy):
		next, o.FailureReason = RefundException, "the transaction did not make the prepared transfer of "+o.Amount()+" "+o.Symbol+" to "+o.ToAddress
	case look.Final || look.Confirmations >= look.Required:
		next = RefundFinalized
	case o.Status == RefundSent:
		next = RefundConfirmed
	}
	if next == "" {
		return false
	}
	o.Status = next
	return true
}
