package payment

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// The prefixes of a payout batch's ID and of a payout's.
const (
	PrefixPayoutBatch = "pb_"
	PrefixPayout      = "po_"
)

// PayoutBatchStatus is where a payout batch stands.
type PayoutBatchStatus string

// A batch waits for an owner's approval; approved, its payouts wait for
// their signatures and are followed on chain; it is completed when every
// payout is finalized, failed, canceled or an exception. A batch is
// canceled before approval, or after it while nothing was sent.
const (
	BatchAwaitingApproval PayoutBatchStatus = "awaiting_approval"
	BatchApproved         PayoutBatchStatus = "approved"
	BatchCompleted        PayoutBatchStatus = "completed"
	BatchCanceled         PayoutBatchStatus = "canceled"
)

// PayoutBatchStatuses are the statuses a batches list filters by.
var PayoutBatchStatuses = []PayoutBatchStatus{BatchAwaitingApproval, BatchApproved, BatchCompleted, BatchCanceled}

// PayoutAwaitingApproval is a payout of a batch not yet approved; the
// other statuses of a payout are a refund's, from awaiting_signature on.
const PayoutAwaitingApproval = RefundAwaitingApproval

// The events of payout batches and payouts.
const (
	EventPayoutBatchCreated   EventType = "payout_batch.created"
	EventPayoutBatchApproved  EventType = "payout_batch.approved"
	EventPayoutBatchCanceled  EventType = "payout_batch.canceled"
	EventPayoutBatchCompleted EventType = "payout_batch.completed"
	EventPayoutSent           EventType = "payout.sent"
	EventPayoutConfirmed      EventType = "payout.confirmed"
	EventPayoutFinalized      EventType = "payout.finalized"
	EventPayoutFailed         EventType = "payout.failed"
	EventPayoutException      EventType = "payout.exception"
	EventPayoutStale          EventType = "payout.stale"
	EventPayoutReversed       EventType = "payout.reversed"
	EventPayoutCanceled       EventType = "payout.canceled"
	EventPayoutRejected       EventType = "payout." + MoveRejected
)

// Limits of a batch.
const (
	MaxPayoutsPerBatch = 1000
	MaxPayoutReference = 200
)

// PayoutBatch is a list of transfers a merchant pays out from one address
// of theirs (a treasury), uploaded at once, approved once by an owner,
// signed by the merchant transfer by transfer and followed by the engine.
type PayoutBatch struct {
	ID          string
	ProjectID   string
	IsLive      bool
	Status      PayoutBatchStatus
	Reference   string
	FromAddress string
	// CreatedBy and ApprovedBy name who did it: a member's user ID, an
	// application's client ID, or an API key's ID.
	CreatedBy  string
	ApprovedBy string
	ApprovedAt *time.Time
	Count      int
	Version    int
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Payout is one transfer of a batch: an amount of one asset to one
// address, from the batch's address (Outgoing, as a refund's).
type Payout struct {
	ID        string
	BatchID   string
	ProjectID string
	IsLive    bool
	Line      int // its place in the batch, from 1
	Reference string
	// Outgoing is the prepared transfer, from the batch's address.
	Outgoing
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// BatchRecord is a batch with its payouts, in line order.
type BatchRecord struct {
	Batch   PayoutBatch
	Payouts []Payout
}

// Done tells whether nothing more happens to a payout.
func (p Payout) Done() bool {
	switch p.Status {
	case RefundFinalized, RefundFailed, RefundCanceled, RefundException:
		return true
	}
	return false
}

// PayoutLine is one line of an uploaded batch. Label names it in errors:
// "payouts[0]" in JSON, "line 2" in CSV.
type PayoutLine struct {
	Label             string
	Address           *string
	AssetDefinitionID *string
	Amount            *string
	Reference         *string
}

// PayoutBatchInput is an uploaded batch.
type PayoutBatchInput struct {
	FromAddress *string
	Reference   *string
	Lines       []PayoutLine
	Problems    Problems
}

// NewPayoutBatch checks an uploaded batch line by line, every error
// named by its line, and returns the batch and its payouts to record
// (without IDs). A batch with any bad line is refused whole: nothing of
// it is recorded.
func NewPayoutBatch(in PayoutBatchInput, catalog Catalog, isLive bool, createdBy string, now time.Time) (PayoutBatch, []Payout, error) {
	probs := in.Problems
	b := PayoutBatch{IsLive: isLive, Status: BatchAwaitingApproval, CreatedBy: createdBy, Version: 1, CreatedAt: now, UpdatedAt: now}
	b.FromAddress = batchFrom(in, catalog, &probs)
	if in.Reference != nil {
		if len(*in.Reference) > MaxPayoutReference {
			probs.Addf("reference", "must be at most %d bytes", MaxPayoutReference)
		}
		b.Reference = *in.Reference
	}
	switch {
	case len(in.Lines) == 0:
		probs.Add("payouts", "the batch has no payouts")
	case len(in.Lines) > MaxPayoutsPerBatch:
		probs.Addf("payouts", "the batch has %d payouts, more than %d: split it", len(in.Lines), MaxPayoutsPerBatch)
		return b, nil, probs.Err()
	}
	lc := payoutLines{catalog: catalog, isLive: isLive, now: now, from: b.FromAddress, probs: &probs,
		refs: map[string]string{}, alike: map[string]string{}}
	payouts := make([]Payout, 0, len(in.Lines))
	for i, l := range in.Lines {
		payouts = append(payouts, lc.check(i, l))
	}
	if len(probs) > 0 {
		return b, nil, probs.Err()
	}
	b.Count = len(payouts)
	return b, payouts, nil
}

// batchFrom checks the address a batch is paid from, and returns it:
// none for a batch of bitcoin alone, which is paid from the project's
// Bitcoin deposit key, which proves itself; none either when it is wrong.
func batchFrom(in PayoutBatchInput, catalog Catalog, probs *Problems) string {
	allBitcoin := len(in.Lines) > 0
	for _, l := range in.Lines {
		if a, ok := catalog.Asset(deref(l.AssetDefinitionID)); !ok || !a.Bitcoin() {
			allBitcoin = false
		}
	}
	if in.FromAddress == nil || *in.FromAddress == "" && allBitcoin {
		if !allBitcoin {
			probs.Add("fromAddress", "is required: the address of yours the payouts are paid from")
		}
		return ""
	}
	addr, msg := CheckPayee(*in.FromAddress)
	if msg != "" {
		probs.Add("fromAddress", msg)
		return ""
	}
	return addr
}

// payoutLines checks a batch's lines, each into its payout; refs and
// alike hold the lines seen by reference and by what they pay.
type payoutLines struct {
	catalog     Catalog
	isLive      bool
	now         time.Time
	from        string
	probs       *Problems
	refs, alike map[string]string
}

// check checks line l (the i-th) into its payout.
func (lc payoutLines) check(i int, l PayoutLine) Payout {
	p := Payout{IsLive: lc.isLive, Line: i + 1, Outgoing: Outgoing{Status: PayoutAwaitingApproval, FromAddress: lc.from},
		Version: 1, CreatedAt: lc.now, UpdatedAt: lc.now}
	field := func(name string) string { return l.Label + "." + name }
	probs := lc.probs
	lineAsset, _ := lc.catalog.Asset(deref(l.AssetDefinitionID))
	if lineAsset.Bitcoin() {
		p.FromAddress = "" // the project's Bitcoin deposit key
	}
	if l.Address == nil || *l.Address == "" {
		probs.Add(field("address"), "is required")
	} else if addr, msg := checkPayeeOf(lineAsset.Bitcoin() && lineAsset.ID != "", *l.Address); msg != "" {
		probs.Add(field("address"), msg)
	} else if strings.EqualFold(addr, lc.from) {
		probs.Add(field("address"), "is the address the batch is paid from")
	} else {
		p.ToAddress = addr
	}
	var asset Asset
	var known bool
	if l.AssetDefinitionID == nil || *l.AssetDefinitionID == "" {
		probs.Add(field("asset"), "is required")
	} else if asset, known = lc.catalog.Asset(*l.AssetDefinitionID); !known || asset.IsLive != lc.isLive {
		known = false
		probs.Addf(field("asset"), "%q is not an asset of the %s environment (GET /api/v1/assets lists them)", *l.AssetDefinitionID, EnvironmentName(lc.isLive))
	} else {
		p.AssetDefinitionID, p.Network, p.ChainID, p.Symbol = asset.ID, asset.Network, asset.ChainID, asset.Symbol
		p.Decimals, p.TokenAddress = asset.Decimals, asset.TokenAddress
	}
	switch {
	case l.Amount == nil || *l.Amount == "":
		probs.Add(field("amount"), "is required")
	case known:
		base, msg := ParseTokenAmount(*l.Amount, asset.Decimals)
		if msg != "" {
			probs.Add(field("amount"), msg)
		}
		p.AmountBaseUnits = base
	}
	lc.once(l, p)
	if l.Reference != nil {
		p.Reference = lc.reference(l, *l.Reference)
	}
	return p
}

// once refuses payout p of line l when an earlier line pays the same: two
// payouts alike could not be told apart on chain, one transfer could be
// taken for either.
func (lc payoutLines) once(l PayoutLine, p Payout) {
	if p.ToAddress == "" || p.AssetDefinitionID == "" || p.AmountBaseUnits == "" {
		return
	}
	key := strings.ToLower(p.ToAddress) + "|" + p.AssetDefinitionID + "|" + p.AmountBaseUnits
	if first, ok := lc.alike[key]; ok {
		lc.probs.Addf(l.Label+".amount", "repeats %s: the same amount of the same asset to the same address; merge the two into one payout", first)
	} else {
		lc.alike[key] = l.Label
	}
}

// reference checks line l's reference ref, which names one payout.
func (lc payoutLines) reference(l PayoutLine, ref string) string {
	field := l.Label + ".reference"
	switch {
	case len(ref) > MaxPayoutReference:
		lc.probs.Addf(field, "must be at most %d bytes", MaxPayoutReference)
	case ref != "" && lc.refs[ref] != "":
		lc.probs.Addf(field, "%q is the reference of %s too: a reference names one payout", ref, lc.refs[ref])
	case ref != "":
		lc.refs[ref] = l.Label
	}
	return ref
}

// CanApprovePayouts says whether the principal may approve a payout
// batch: an owner signed in, never an API key or an application.
func (p Principal) CanApprovePayouts() bool { return p.CanManageKeys() }

// ApprovePayoutBatch approves a batch waiting for approval: its payouts
// wait for their signatures.
func ApprovePayoutBatch(b *PayoutBatch, payouts []Payout, by string, now time.Time) error {
	if b.Status != BatchAwaitingApproval {
		return Conflict("The payout batch is " + string(b.Status) + ": only a batch awaiting approval is approved")
	}
	b.Status, b.ApprovedBy, b.ApprovedAt, b.UpdatedAt = BatchApproved, by, &now, now
	for i := range payouts {
		payouts[i].Status, payouts[i].UpdatedAt = RefundAwaitingSignature, now
	}
	return nil
}

// CancelPayoutBatch cancels a batch whose payouts have not been sent:
// one awaiting approval, or approved with no payout sent yet.
func CancelPayoutBatch(b *PayoutBatch, payouts []Payout, now time.Time) error {
	if b.Status != BatchAwaitingApproval && b.Status != BatchApproved {
		return Conflict("The payout batch is " + string(b.Status) + ": it cannot be canceled")
	}
	for _, p := range payouts {
		if p.Status != PayoutAwaitingApproval && p.Status != RefundAwaitingSignature {
			return Conflict(fmt.Sprintf("Payout %s (line %d) is %s: a batch with a payout sent cannot be canceled", p.ID, p.Line, p.Status))
		}
	}
	b.Status, b.UpdatedAt = BatchCanceled, now
	for i := range payouts {
		payouts[i].Status, payouts[i].UpdatedAt = RefundCanceled, now
	}
	return nil
}

// CancelPayout cancels one payout of an approved batch: one waiting for
// its signature (the merchant will not pay it), or one whose transaction
// is stale (given up on; still followed, and mined after all it counts
// again, as a refund canceled while stale does). A payout awaiting its
// batch's approval is canceled with its batch; one sent, confirmed or
// done runs its course.
func CancelPayout(p *Payout, now time.Time) error {
	switch p.Status {
	case RefundAwaitingSignature, RefundStale, RefundReversed:
	case PayoutAwaitingApproval:
		return Conflict("The payout's batch awaits approval: cancel the batch, or approve it and then cancel this payout")
	default:
		return Conflict("The payout cannot be canceled: it is " + string(p.Status) + " (only a payout awaiting its signature, stale or reversed is)")
	}
	p.Status, p.UpdatedAt = RefundCanceled, now
	return nil
}

// ReportPayoutSent records the hash of the transaction the merchant sent
// for a payout (as ReportRefundSent does for a refund).
func ReportPayoutSent(p *Payout, hash string, now time.Time) (EventType, error) {
	if p.Status == PayoutAwaitingApproval {
		return "", Conflict("The payout's batch is not approved: nothing may be sent for it")
	}
	if changed, err := p.report("payout", hash, now); err != nil || !changed {
		return "", err
	}
	p.UpdatedAt = now
	return EventPayoutSent, nil
}

// FollowPayout moves a sent payout along what the chain says of its
// transaction (as FollowRefund moves a refund).
func FollowPayout(p *Payout, look SentLook) EventType {
	move := p.follow(look)
	if move == "" {
		return ""
	}
	p.UpdatedAt = look.Now
	return EventType("payout." + move)
}

// SpotPayout records as sent a payout waiting for its signature when the
// scanner sees its prepared transfer made, unreported, from the batch's
// address (as SpotRefund does).
func SpotPayout(p *Payout, t Transfer, txHash string, now time.Time) EventType {
	if !p.spot(t, txHash, now) {
		return ""
	}
	p.UpdatedAt = now
	return EventPayoutSent
}

// PayoutTotal is a batch's sum in one asset: asked, paid (finalized),
// in flight (sent or confirmed), still to sign (awaiting approval or
// signature), and not paid (failed, canceled, exception).
type PayoutTotal struct {
	AssetID, Symbol, Network                   string
	Decimals                                   int
	Requested, Paid, InFlight, ToSign, NotPaid *big.Int
}

// PayoutReport is a batch's account: its payouts per status and its
// totals per asset, in the order of first appearance.
type PayoutReport struct {
	Statuses map[RefundStatus]int
	Totals   []PayoutTotal
}

// ReportOf accounts for a batch's payouts.
func ReportOf(payouts []Payout) PayoutReport {
	r := PayoutReport{Statuses: map[RefundStatus]int{}}
	at := map[string]int{}
	for _, p := range payouts {
		r.Statuses[p.Status]++
		i, ok := at[p.AssetDefinitionID]
		if !ok {
			i, at[p.AssetDefinitionID] = len(r.Totals), len(r.Totals)
			r.Totals = append(r.Totals, PayoutTotal{AssetID: p.AssetDefinitionID, Symbol: p.Symbol, Network: p.Network,
				Decimals: p.Decimals, Requested: new(big.Int), Paid: new(big.Int),
				InFlight: new(big.Int), ToSign: new(big.Int), NotPaid: new(big.Int)})
		}
		t, n := &r.Totals[i], units(p.AmountBaseUnits)
		t.Requested.Add(t.Requested, n)
		switch p.Status {
		case RefundFinalized:
			t.Paid.Add(t.Paid, n)
		case RefundSent, RefundConfirmed, RefundStale:
			t.InFlight.Add(t.InFlight, n)
		case RefundAwaitingSignature, PayoutAwaitingApproval:
			t.ToSign.Add(t.ToSign, n)
		default:
			t.NotPaid.Add(t.NotPaid, n)
		}
	}
	return r
}

// Complete moves an approved batch whose payouts are all done to
// completed, and tells whether it did.
func (b *PayoutBatch) Complete(payouts []Payout, now time.Time) bool {
	if b.Status != BatchApproved {
		return false
	}
	for _, p := range payouts {
		if !p.Done() {
			return false
		}
	}
	b.Status, b.UpdatedAt = BatchCompleted, now
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
