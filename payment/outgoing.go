package payment

import (
	"strings"
	"time"
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
	// BlockNumber and BlockHash are the block that mined its transfer,
	// once finalized: the finality watch checks it is still the chain's.
	BlockNumber *int64
	BlockHash   string
	// SentAt is when its transaction (TxHash) was reported or seen: a
	// sent one still not mined StaleAfter later is stale.
	SentAt *time.Time
	// LogIndex is the transfer of its transaction that pays it, once
	// mined: (chain, transaction, log index) counts for one incoming
	// payment or outgoing item at most.
	LogIndex *int
}

// Amount is the amount in whole units of its asset.
func (o Outgoing) Amount() string { return UnitsToAmount(o.AmountBaseUnits, o.Decimals) }

// paidBy tells whether a transfer makes its prepared transfer: its asset,
// its amount, to its address.
func (o Outgoing) paidBy(t Transfer) bool {
	return t.AssetID == o.AssetDefinitionID && strings.EqualFold(t.To, o.ToAddress) && sameUnits(t.AmountBaseUnits, o.AmountBaseUnits)
}

// Pays tells whether a transfer of transaction hash is this one's: its
// recorded transaction, its asset and amount to its address.
func (o Outgoing) Pays(t Transfer, hash string) bool {
	return o.TxHash != "" && strings.EqualFold(o.TxHash, hash) && o.paidBy(t)
}

// Followed tells whether its transaction is still followed on chain: sent,
// confirmed or stale, or canceled once stale (a transaction given up on
// may still be mined, and the chain decides).
// Awaited tells whether it waits, approved, for its transaction: its
// signature (again, after a rejected transaction), or an owner's approval
// of a changed address. Its workflow, started at approval, waits with it.
func (o Outgoing) Awaited() bool {
	return o.Status == RefundAwaitingSignature || o.Status == PayoutAwaitingApproval
}

func (o Outgoing) Followed() bool {
	switch o.Status {
	case RefundSent, RefundConfirmed, RefundStale, RefundReversed:
		return true
	case RefundCanceled:
		return o.TxHash != ""
	}
	return false
}

// spot records it as sent when the scanner sees its prepared transfer
// made, unreported, from its source (its own address, or one of sources,
// the other addresses that may pay it: addresses only the merchant's keys
// move): while it waits for its signature, or, sent or stale with another
// transaction not mined (the caller checks), as that transaction's
// replacement (a wallet's speed-up at the same nonce). A transfer from
// elsewhere is not taken for it: another payment of the same amount to
// the same address would be.
func (o *Outgoing) spot(t Transfer, txHash string, now time.Time, sources ...string) bool {
	// Its own source as recorded (a Bitcoin item's is its project's own
	// coins, which its caller proved: no address); another, only named.
	fromSource := strings.EqualFold(t.From, o.FromAddress)
	for _, a := range sources {
		fromSource = fromSource || a != "" && strings.EqualFold(t.From, a)
	}
	switch {
	case !fromSource || !o.paidBy(t) || strings.EqualFold(o.TxHash, txHash):
		return false
	case o.Status != RefundAwaitingSignature && o.Status != RefundSent && o.Status != RefundStale:
		return false
	}
	i := t.LogIndex
	o.Status, o.TxHash, o.SentAt, o.LogIndex, o.FailureReason = RefundSent, strings.ToLower(txHash), &now, &i, ""
	return true
}

// report records the hash of the transaction the merchant sent for it
// (what names it in errors), and tells whether that changed anything. One
// waiting for its signature becomes sent; a sent or stale one not yet
// mined takes a replacement's hash (the same transfer sent again at a
// higher fee, or at the same nonce); the same hash again changes nothing,
// so that a signer may repeat its report.
func (o *Outgoing) report(what, hash string, now time.Time) (bool, error) {
	if o.Bitcoin() {
		id, ok := NormalizeBitcoinTxID(hash)
		if !ok {
			var probs Problems
			probs.Add("txHash", BitcoinTxIDProblem)
			return false, probs.Err()
		}
		hash = id
	} else if !ValidTxHash(hash) {
		var probs Problems
		probs.Add("txHash", TxHashProblem)
		return false, probs.Err()
	}
	hash = strings.ToLower(hash)
	switch {
	case o.TxHash == hash && (o.Status == RefundSent || o.Status == RefundConfirmed || o.Status == RefundFinalized || o.Status == RefundStale):
		return false, nil
	case o.Status == RefundAwaitingSignature, o.Status == RefundSent, o.Status == RefundStale:
		o.Status, o.TxHash, o.SentAt, o.LogIndex, o.FailureReason = RefundSent, hash, &now, nil, ""
		return true, nil
	}
	return false, Conflict("The " + what + " is " + string(o.Status) + ": its transaction cannot change")
}

// DefaultStaleAfter is how long a sent transfer may stay unmined before
// it is stale, unless the engine is told otherwise (MONEY_OUT_STALE_AFTER).
const DefaultStaleAfter = time.Hour

// MaxInFlight bounds a project's refunds and payouts, in one environment,
// whose reported transactions are not mined yet (sent or stale): hashes
// that are never mined cost their project only, and that much at most.
const MaxInFlight = 5000

// SentLook is what the chain says of a sent transaction, with what a look
// needs to judge it.
type SentLook struct {
	Mined, Succeeded bool
	Final            bool
	Confirmations    int
	Required         int
	// BlockNumber and BlockHash are the block that mined it.
	BlockNumber int64
	BlockHash   string
	// PastFinality: the finality watch asks for a look at a finalized
	// one, whose block may have left the chain.
	PastFinality bool
	// Sender is the address that signed the transaction (its from).
	Sender string
	// Transfers are the transaction's transfers of the network's assets.
	Transfers []Transfer
	// Sources are the addresses, besides its own FromAddress, that may
	// pay it: the project's proven addresses (verified recipients) for a
	// refund, none for a payout.
	Sources []string
	// Taken names, by log index, the transaction's transfers that count
	// for another incoming payment or outgoing item already.
	Taken map[int]string
	// Now is when the look was made, and StaleAfter how long a sent
	// transaction may stay unmined before it is stale (0: never).
	Now        time.Time
	StaleAfter time.Duration
}

// The moves of a followed outgoing transfer that are not a status of
// their own (the others are named by the status they lead to).
const (
	// MoveRejected: the reported transaction was mined but does not pay it
	// from its source (another sender, or a transfer counted for another
	// item): it is not taken, and it waits for its signature again.
	MoveRejected = "transaction_rejected"
)

// fromSource tells whether the transfer, or the transaction that made
// it, comes from an address that may pay it.
func (o Outgoing) fromSource(t Transfer, look SentLook) bool {
	for _, a := range append([]string{o.FromAddress}, look.Sources...) {
		if strings.EqualFold(t.From, a) || strings.EqualFold(look.Sender, a) {
			return true
		}
	}
	return false
}

// follow moves a followed one along what the chain says of its
// transaction, and names the move ("" for none): its new status, or
// MoveRejected. Confirmed once mined paying exactly what was prepared from
// its source, with a transfer nothing else counts; finalized once final
// (or the network's confirmations deep); back to sent when its block
// leaves the chain; stale when not mined StaleAfter after it was sent;
// failed when it reverted (nothing moved, so nothing is held); an
// exception when its source moved the funds otherwise. A transaction
// that does not come from its source, or whose transfer counts for
// another item, is rejected: the item waits for its signature again and
// FailureReason says why. A canceled one (given up on while stale) moves
// only if its transaction pays it after all.
func (o *Outgoing) follow(look SentLook) string {
	chain := ChainLook{Mined: look.Mined, Succeeded: look.Succeeded, BlockHash: look.BlockHash, Final: look.Final,
		Confirmations: look.Confirmations, Required: look.Required}
	if o.Status == RefundFinalized && look.PastFinality {
		c := Confirmation{Status: TxFinalized, Block: o.BlockHash}
		if c.Step(chain, ConfirmOut); c.Status == TxFinalized {
			return "" // its block is still the chain's
		}
		o.FailureReason = "its block " + o.BlockHash + " left the canonical chain after it was final: nothing is paid unless it is mined again"
		o.Status, o.LogIndex = RefundReversed, nil
		return string(RefundReversed)
	}
	if !o.Followed() {
		return ""
	}
	canceled := o.Status == RefundCanceled
	if look.Mined && look.Succeeded {
		// Its chain counts for it only through a transfer that pays it.
		paying, move := o.payingTransfer(look)
		if paying == nil {
			return move
		}
		i, n := paying.LogIndex, look.BlockNumber
		o.LogIndex, o.FailureReason = &i, ""
		o.BlockNumber, o.BlockHash = &n, look.BlockHash
	}
	c := o.confirmation()
	c.Step(chain, ConfirmOut)
	next := RefundStatus("")
	switch c.Status {
	case TxPending:
		if o.Status == RefundConfirmed {
			next, o.LogIndex = RefundSent, nil
		} else if o.Status == RefundSent && look.StaleAfter > 0 && o.SentAt != nil && look.Now.Sub(*o.SentAt) >= look.StaleAfter {
			next = RefundStale
			o.FailureReason = "the transaction " + o.TxHash + " was not mined within " + look.StaleAfter.String() +
				": send it again at a higher fee and report the replacement, or cancel"
		}
	case TxFailed:
		if !canceled {
			next, o.FailureReason, o.LogIndex = RefundFailed, "the transaction reverted: nothing was paid", nil
		}
	case TxConfirmed:
		if o.Status != RefundConfirmed {
			next = RefundConfirmed
		}
	case TxFinalized:
		next = RefundFinalized
	}
	if next == "" {
		return ""
	}
	o.Status = next
	return string(next)
}

// confirmation is where its transaction stands on the confirmation state
// machine: sent, stale or canceled ones are not mined as far as it knows.
func (o Outgoing) confirmation() Confirmation {
	c := Confirmation{Status: TxPending, Block: o.BlockHash}
	switch o.Status {
	case RefundConfirmed:
		c.Status = TxConfirmed
	case RefundReversed:
		c.Status = TxReversed
	}
	return c
}

// payingTransfer finds, in a mined transaction, the transfer that pays it
// from its source and counts for nothing else. Without one it answers
// with the move that makes (MoveRejected, an exception, or none for a
// canceled one).
func (o *Outgoing) payingTransfer(look SentLook) (*Transfer, string) {
	var taken string
	for _, t := range look.Transfers {
		if !o.paidBy(t) || !o.fromSource(t, look) {
			continue
		}
		if by := look.Taken[t.LogIndex]; by != "" {
			taken = by
			continue
		}
		return &t, ""
	}
	reject := func(why string) (*Transfer, string) {
		o.FailureReason = why
		o.Status, o.TxHash, o.SentAt, o.LogIndex = RefundAwaitingSignature, "", nil, nil
		return nil, MoveRejected
	}
	switch {
	case o.Status == RefundCanceled:
		// Its transaction did something else (a cancellation at the
		// same nonce): the cancellation stands.
		return nil, ""
	case taken != "":
		return reject("the transaction " + o.TxHash + " is counted for " + taken + " already: it is not taken for this one")
	case o.Bitcoin():
		// The project's coins are one pool, not the item's: a
		// transaction of them that does not pay it leaves it to be paid.
		return reject("the transaction " + o.TxHash + " does not pay " + o.Amount() + " " + o.Symbol + " to " + o.ToAddress +
			" from the project's own coins (outputs at its deposit addresses): it is not taken")
	case strings.EqualFold(look.Sender, o.FromAddress) || o.movedFromSource(look):
		o.Status, o.LogIndex = RefundException, nil
		o.FailureReason = "the transaction did not make the prepared transfer of " + o.Amount() + " " + o.Symbol + " to " + o.ToAddress
		return nil, string(RefundException)
	}
	return reject("the transaction " + o.TxHash + " was not sent from " + o.FromAddress + " (nor from a proven address of the project): it is not taken")
}

// movedFromSource tells whether the transaction moved any of the
// network's assets from its source.
func (o Outgoing) movedFromSource(look SentLook) bool {
	for _, t := range look.Transfers {
		if strings.EqualFold(t.From, o.FromAddress) {
			return true
		}
	}
	return false
}

// CheckReported judges a reported transaction that is mined already as
// the item's workflow would, so that the report is refused now, with the
// reason, rather than recorded and then rejected: a transaction that does
// not pay it from its source, or whose transfer counts for another item.
func CheckReported(o Outgoing, hash string, look SentLook) error {
	o.Status, o.TxHash, o.LogIndex = RefundSent, strings.ToLower(hash), nil
	if o.follow(look) != MoveRejected {
		return nil
	}
	var probs Problems
	probs.Add("txHash", "is not taken: "+o.FailureReason)
	return probs.Err()
}

// SameBlock compares two block hashes as the families write them (EVM
// hashes 0x-prefixed; Bitcoin's in display order, with or without it).
func SameBlock(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimPrefix(a, "0x"), strings.TrimPrefix(b, "0x"))
}
