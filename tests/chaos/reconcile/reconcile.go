package reconcile

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Kinds of discrepancy.
const (
	// KindSum: the chain's total to a deposit address in an asset differs
	// from what the engine counted for its session.
	KindSum = "sum"
	// KindMissing: a transfer on the canonical chain has no transactions row.
	KindMissing = "missing"
	// KindDuplicate: a transfer has more than one row.
	KindDuplicate = "duplicate"
	// KindMisplaced: a transfer's row is on another session, or records
	// another asset or amount.
	KindMisplaced = "misplaced"
	// KindNotCounted: a transfer's row ended failed.
	KindNotCounted = "not-counted"
	// KindNotFinal: a row is still pending or confirmed at the end.
	KindNotFinal = "not-final"
	// KindPhantom: a counted row matches no transfer on the canonical chain.
	KindPhantom = "phantom"
	// KindStaleBlock: a counted row names a block that is not the transfer's
	// canonical block.
	KindStaleBlock = "stale-block"
	// KindUnseenInflow: an address's balance differs from the transfers the
	// reconciler found to it.
	KindUnseenInflow = "unseen-inflow"
	// KindOutcome: a session's status or exception does not follow from
	// what was paid and when.
	KindOutcome = "outcome"
	// KindPaidUSD: a session's amount paid is not the sum of its counted rows.
	KindPaidUSD = "paid-usd"
	// KindEvents: an object's events do not match its state changes one to
	// one, or their versions have gaps.
	KindEvents = "events"
	// KindRefund: money out disagrees with the chain: a refund recorded
	// final that no canonical transfer pays, a refund whose transfer is
	// on the chain but not recorded final, or a refund's address holding
	// other than its finalized refunds.
	KindRefund = "refund"
)

// Discrepancy is one thing the engine's records get wrong.
type Discrepancy struct {
	Kind      string
	SessionID string // the session concerned, if any
	Detail    string
}

func (d Discrepancy) String() string {
	if d.SessionID == "" {
		return fmt.Sprintf("%-13s %s", d.Kind, d.Detail)
	}
	return fmt.Sprintf("%-13s %s: %s", d.Kind, d.SessionID, d.Detail)
}

// Settings are what the checks need besides the chain and the records.
type Settings struct {
	ChainID int64
	// Now is when the records were read: sessions whose expiry is later
	// are expected to be still open or processing.
	Now time.Time
	// Margin is the uncertainty of a block's time against a session's
	// expiry: a payment mined within Margin of expiresAt may count as in
	// time or late, and both outcomes are accepted.
	Margin time.Duration
	// NotMoneyOut are addresses a treasury pays that are not money out:
	// the run's own contracts (a payer's value to the multisend).
	NotMoneyOut []common.Address
}

// Result is what Reconcile found.
type Result struct {
	Discrepancies []Discrepancy
	// Transfers counts the canonical transfers to deposit addresses;
	// Internal those of them made by a contract's internal call.
	Transfers, Internal int
	// BitcoinOutputs counts the outputs to sessions' Bitcoin addresses on
	// the Bitcoin node's best chain.
	BitcoinOutputs int
	// Expected and Actual count sessions by outcome ("completed",
	// "expired/paid_late", ...).
	Expected, Actual map[string]int
	// Ambiguous counts sessions whose expected outcome depended on a
	// payment mined within Margin of their expiry.
	Ambiguous int
	// Refunds counts the refunds checked; RefundsPaid those the chain
	// shows paid.
	Refunds, RefundsPaid int
	// Payouts and PayoutsPaid are the same of payouts.
	Payouts, PayoutsPaid int
	// Outgoing counts the canonical transfers out of the treasuries
	// (to neither a deposit address, a treasury nor Settings.NotMoneyOut),
	// each of which must pay exactly one refund or payout.
	Outgoing int
}

// Outcome is a session's status and exception.
type Outcome struct{ Status, Exception string }

func (o Outcome) String() string {
	if o.Exception == "" {
		return o.Status
	}
	return o.Status + "/" + o.Exception
}

// Reconcile checks the records against the chain.
func Reconcile(ch *Chain, rec *Records, set Settings) *Result {
	r := &Result{Expected: map[string]int{}, Actual: map[string]int{}}
	add := func(kind, session, format string, args ...any) {
		r.Discrepancies = append(r.Discrepancies, Discrepancy{Kind: kind, SessionID: session, Detail: fmt.Sprintf(format, args...)})
	}
	counted := func(status string) bool {
		return status == "finalized" || status == "confirmed" && rec.CompleteOn == "confirmed"
	}

	sessions := make(map[common.Address]*Session, len(rec.Sessions))
	btcSessions := map[string]*Session{}
	for i := range rec.Sessions {
		s := &rec.Sessions[i]
		if s.BitcoinAddress != "" {
			btcSessions[s.BitcoinAddress] = s
		} else {
			sessions[s.DepositAddress] = s
		}
	}
	rows := map[string][]*Tx{}
	for i := range rec.Transactions {
		t := &rec.Transactions[i]
		if t.ChainID == set.ChainID || t.ChainID == 0 {
			rows[t.Key()] = append(rows[t.Key()], t)
		}
	}
	onChain := map[string]bool{}
	// paid are the payments to each session on the canonical chain, by
	// session ID, as Expect reads them.
	paid := map[string][]Transfer{}

	// recorded checks that a payment on the chain is recorded once, on its
	// session, for its amount, and counted in its block.
	recorded := func(s *Session, key, what string, opt Option, accepted bool, amount *big.Int, blockHash string) {
		onChain[key] = true
		found := rows[key]
		switch {
		case len(found) == 0:
			add(KindMissing, s.ID, "%s is not recorded", what)
			return
		case len(found) > 1:
			add(KindDuplicate, s.ID, "%s is recorded %d times", what, len(found))
		}
		row := found[0]
		switch {
		case row.SessionID != s.ID:
			add(KindMisplaced, s.ID, "%s is recorded on session %s", what, row.SessionID)
		case !accepted || row.AssetID != opt.AssetID || row.Amount.Cmp(amount) != 0:
			add(KindMisplaced, s.ID, "%s is recorded as %s %s", what, row.Amount, row.AssetID)
		}
		switch {
		case row.Status == "failed":
			add(KindNotCounted, s.ID, "%s is recorded as failed (%s)", what, row.ID)
		case counted(row.Status) && !sameHash(row.BlockHash, blockHash):
			add(KindStaleBlock, s.ID, "%s is recorded in block %s", what, row.BlockHash)
		}
	}

	// Every transfer on the canonical chain: recorded once, on its session,
	// for its amount, and counted.
	for _, t := range ch.Transfers {
		s, ok := sessions[t.To]
		if !ok {
			continue
		}
		r.Transfers++
		paid[s.ID] = append(paid[s.ID], t)
		if t.Internal {
			// The engine has no identity for an internal payment; the
			// sums below still hold it to the balance.
			r.Internal++
			continue
		}
		opt, accepted := s.option(t.Token)
		what := fmt.Sprintf("%s %s of %s in block %d", t.TxHash.Hex(), logName(t.LogIndex), amountName(t.Amount, opt, accepted), t.Block)
		recorded(s, t.Key(), what, opt, accepted, t.Amount, t.BlockHash.Hex())
	}
	// Every output to a session's Bitcoin address on the node's best chain,
	// the same way. A bitcoin session's one option is bitcoin, the native
	// coin of its chain. A bitcoin payment's time is the earlier of its
	// block's and the engine's first sight of it: one seen in the mempool
	// before expiresAt is in time however late a block mines it (BTCPay
	// Server's rule, and the engine's).
	if ch.Bitcoin != nil {
		for _, o := range ch.Bitcoin.Outputs {
			s, ok := btcSessions[o.Address]
			if !ok {
				continue
			}
			r.BitcoinOutputs++
			when := o.Time
			if seen, ok := rec.FirstSeen[strings.ToLower(o.TxID)]; ok && uint64(seen.Unix()) < when {
				when = uint64(seen.Unix())
			}
			paid[s.ID] = append(paid[s.ID], Transfer{Amount: o.Sats, Time: when})
			opt, accepted := s.option(common.Address{})
			what := fmt.Sprintf("%s:%d of %s in block %d", o.TxID, o.Vout, amountName(o.Sats, opt, accepted), o.Height)
			recorded(s, o.Key(), what, opt, accepted, o.Sats, o.BlockHash)
		}
	}

	// Every row: final, and counted only for a transfer on the chain.
	for i := range rec.Transactions {
		t := &rec.Transactions[i]
		if t.Status != "finalized" && t.Status != "failed" {
			add(KindNotFinal, t.SessionID, "%s (%s %s) is still %s", t.ID, t.TxHash, logName(t.LogIndex), t.Status)
		}
		if counted(t.Status) && !onChain[t.Key()] {
			add(KindPhantom, t.SessionID, "%s counts %s %s of %s, which is not on the canonical chain",
				t.ID, t.Amount, t.AssetID, t.TxHash)
		}
	}

	// Per session and asset: what the chain holds equals what was counted.
	for i := range rec.Sessions {
		s := &rec.Sessions[i]
		var paidUSD big.Rat
		for _, t := range rec.Transactions {
			if t.SessionID == s.ID && counted(t.Status) {
				paidUSD.Add(&paidUSD, t.AmountUSD)
			}
		}
		if paidUSD.Cmp(s.PaidUSD) != 0 {
			add(KindPaidUSD, s.ID, "amount paid is %s USD, its counted transactions make %s USD",
				s.PaidUSD.FloatString(6), paidUSD.FloatString(6))
		}
		for _, o := range s.Options {
			seen := new(big.Int)
			for _, t := range paid[s.ID] {
				if t.Token == o.Token {
					seen.Add(seen, t.Amount)
				}
			}
			where, held := s.DepositAddress.Hex(), ch.Native[s.DepositAddress]
			switch {
			case s.BitcoinAddress != "":
				where, held = s.BitcoinAddress, nil
				if ch.Bitcoin != nil {
					held = ch.Bitcoin.Indexed[s.BitcoinAddress]
				}
			case o.Token != (common.Address{}):
				held = ch.Tokens[o.Token][s.DepositAddress]
			}
			if held == nil {
				held = new(big.Int)
			}
			if held.Cmp(seen) != 0 {
				add(KindUnseenInflow, s.ID, "%s holds %s %s, the transfers found to it make %s", where, held, o.AssetID, seen)
			}
			engine := new(big.Int)
			for _, t := range rec.Transactions {
				if t.SessionID == s.ID && t.AssetID == o.AssetID && counted(t.Status) {
					engine.Add(engine, t.Amount)
				}
			}
			if held.Cmp(engine) != 0 {
				add(KindSum, s.ID, "%s: the chain holds %s, the engine counted %s", o.AssetID, held, engine)
			}
		}

		want, ambiguous := Expect(*s, paid[s.ID], set.Now, set.Margin, rec.Tolerance)
		if ambiguous {
			r.Ambiguous++
		}
		got := Outcome{s.Status, s.Exception}
		r.Actual[got.String()]++
		r.Expected[want[0].String()]++
		if !slices.Contains(want, got) {
			names := make([]string, len(want))
			for i, w := range want {
				names[i] = w.String()
			}
			add(KindOutcome, s.ID, "is %s, want %s (%s)", got, strings.Join(names, " or "),
				describePayments(*s, paid[s.ID]))
		}
	}

	checkMoneyOut(ch, rec, r, add)
	checkOutgoing(ch, rec, set, sessions, r, add)
	checkEvents(rec, add)
	sort.SliceStable(r.Discrepancies, func(i, j int) bool { return r.Discrepancies[i].Kind < r.Discrepancies[j].Kind })
	return r
}

// sameHash compares hashes as the engine and the nodes write them, with
// or without 0x and in either case.
func sameHash(a, b string) bool {
	return strings.EqualFold(strings.TrimPrefix(a, "0x"), strings.TrimPrefix(b, "0x"))
}

func logName(i int) string {
	if i < 0 {
		return "(value)"
	}
	return fmt.Sprintf("log %d", i)
}

func amountName(amount *big.Int, o Option, accepted bool) string {
	if !accepted {
		return amount.String() + " of an asset the session does not accept"
	}
	return amount.String() + " " + o.AssetID
}

// describePayments says what was paid to a session and when, against its
// expiry, for a discrepancy's reader.
func describePayments(s Session, paid []Transfer) string {
	if len(paid) == 0 {
		return "nothing paid"
	}
	parts := make([]string, 0, len(paid))
	for _, t := range paid {
		o, _ := s.option(t.Token)
		when := time.Unix(int64(t.Time), 0).Sub(s.ExpiresAt).Round(time.Second)
		parts = append(parts, fmt.Sprintf("%s/%s %s at expiry%+v", t.Amount, o.Due, o.AssetID, when))
	}
	return "paid " + strings.Join(parts, ", ")
}

// Expect works out the outcomes a session may have, given the transfers to
// its address on the canonical chain (docs/reconciliation.md):
//
//   - completed once what was paid before expiresAt reaches the amount due
//     (less the project's tolerance), whenever it is confirmed; overpaid if
//     everything paid exceeds the amount due;
//   - before expiresAt otherwise: open with nothing paid, processing and
//     underpaid with part of it;
//   - after expiresAt otherwise: expired, with overpaid if more than the
//     amount due arrived, else paid_late if any payment arrived after
//     expiry, else underpaid if part of it arrived.
//
// Amounts are compared exactly, as fractions of the amount due in each
// payment's own asset. A payment mined within margin of expiresAt counts
// both ways, and ambiguous says whether that happened.
func Expect(s Session, paid []Transfer, now time.Time, margin time.Duration, tolerance *big.Rat) (outcomes []Outcome, ambiguous bool) {
	threshold := big.NewRat(1, 1)
	if tolerance != nil {
		threshold.Sub(threshold, new(big.Rat).Quo(tolerance, big.NewRat(100, 1)))
	}
	type payment struct {
		share *big.Rat
		when  time.Time
	}
	var pays []payment
	var unsure []int
	for _, t := range paid {
		o, ok := s.option(t.Token)
		if !ok {
			continue // an asset the session does not accept is worth nothing to it
		}
		when := time.Unix(int64(t.Time), 0)
		if when.After(s.LateUntil) && !s.LateUntil.IsZero() {
			continue // after the late window: the engine no longer watches
		}
		if near(when, s.ExpiresAt, margin) && len(unsure) < 8 {
			unsure = append(unsure, len(pays))
		}
		pays = append(pays, payment{new(big.Rat).SetFrac(t.Amount, o.Due), when})
	}
	expiredNow := []bool{!now.Before(s.ExpiresAt)}
	if near(now, s.ExpiresAt, margin) {
		expiredNow = []bool{false, true}
	}
	ambiguous = len(unsure) > 0 || len(expiredNow) > 1
	for combo := 0; combo < 1<<len(unsure); combo++ {
		late := make([]bool, len(pays))
		for i, p := range pays {
			late[i] = !p.when.Before(s.ExpiresAt)
		}
		for bit, i := range unsure {
			late[i] = combo&(1<<bit) != 0
		}
		for _, expired := range expiredNow {
			onTime, all := new(big.Rat), new(big.Rat)
			anyLate := false
			for i, p := range pays {
				all.Add(all, p.share)
				if late[i] {
					anyLate = true
				} else {
					onTime.Add(onTime, p.share)
				}
			}
			if anyLate && !expired {
				continue // a late payment means the session has expired
			}
			one := big.NewRat(1, 1)
			var o Outcome
			switch {
			case onTime.Cmp(threshold) >= 0:
				o.Status = "completed"
				if all.Cmp(one) > 0 {
					o.Exception = "overpaid"
				}
			case !expired:
				o.Status = "open"
				if all.Sign() > 0 {
					o.Status, o.Exception = "processing", "underpaid"
				}
			default:
				o.Status = "expired"
				switch {
				case all.Cmp(one) > 0:
					o.Exception = "overpaid"
				case anyLate:
					o.Exception = "paid_late"
				case all.Sign() > 0:
					o.Exception = "underpaid"
				}
			}
			if !slices.Contains(outcomes, o) {
				outcomes = append(outcomes, o)
			}
		}
	}
	return outcomes, ambiguous
}

func near(a, b time.Time, margin time.Duration) bool {
	d := a.Sub(b)
	return d > -margin && d < margin
}

var sessionMoves = map[string][]string{
	"open":       {"processing", "completed", "expired", "canceled"},
	"processing": {"completed", "expired", "open"},
}

var txMoves = map[string][]string{
	"pending":   {"confirmed", "failed"},
	"confirmed": {"finalized", "pending"},
	"finalized": {"reversed"}, // its block left the chain past finality
	"reversed":  {"confirmed", "failed"},
}

// checkMoneyOut checks money out, refunds and payouts alike: one the
// canonical chain shows paid (its transaction moving its asset and
// amount to its address) is finalized, one recorded confirmed or
// finalized is paid so, and what an address paid holds is what its
// finalized refunds and payouts make.
func checkMoneyOut(ch *Chain, rec *Records, r *Result, add func(kind, session, format string, args ...any)) {
	byTo := map[common.Address][]Transfer{}
	for _, t := range ch.Transfers {
		byTo[t.To] = append(byTo[t.To], t)
	}
	type holding struct{ to, token common.Address }
	final := map[holding]*big.Int{}
	owner := map[holding]string{}
	check := func(what string, list []Refund, checked, paidOnChain *int) {
		for _, f := range list {
			*checked++
			k := holding{f.To, f.Token}
			if final[k] == nil {
				final[k], owner[k] = new(big.Int), f.SessionID
			}
			paid := slices.ContainsFunc(byTo[f.To], func(t Transfer) bool {
				return strings.EqualFold(t.TxHash.Hex(), f.TxHash) && t.Token == f.Token && t.Amount.Cmp(f.Amount) == 0
			})
			switch {
			case paid && f.Status != "finalized":
				add(KindRefund, f.SessionID, "%s %s is %s, but the chain shows it paid by %s", what, f.ID, f.Status, f.TxHash)
			case !paid && (f.Status == "finalized" || f.Status == "confirmed"):
				add(KindRefund, f.SessionID, "%s %s is %s, but no canonical transfer %s pays %s to %s", what, f.ID, f.Status, f.TxHash, f.Amount, f.To.Hex())
			}
			if paid {
				*paidOnChain++
			}
			if f.Status == "finalized" {
				final[k].Add(final[k], f.Amount)
			}
		}
	}
	check("refund", rec.Refunds, &r.Refunds, &r.RefundsPaid)
	check("payout", rec.Payouts, &r.Payouts, &r.PayoutsPaid)
	for k, want := range final {
		held := ch.Native[k.to]
		if k.token != (common.Address{}) {
			held = ch.Tokens[k.token][k.to]
		}
		if held == nil {
			held = new(big.Int)
		}
		if held.Cmp(want) != 0 {
			add(KindRefund, owner[k], "address %s holds %s of %s; its finalized refunds and payouts make %s", k.to.Hex(), held, k.token.Hex(), want)
		}
	}
	// An approved batch is completed when, and only when, every payout of
	// it is done.
	pending := map[string]int{}
	for _, f := range rec.Payouts {
		switch f.Status {
		case "finalized", "failed", "canceled", "exception":
		default:
			pending[f.SessionID]++
		}
	}
	for id, b := range rec.Batches {
		switch {
		case b.Status == "completed" && pending[id] > 0:
			add(KindRefund, id, "payout batch %s is completed with %d payouts not done", id, pending[id])
		case b.Status == "approved" && pending[id] == 0:
			add(KindRefund, id, "payout batch %s is approved with every payout done, not completed", id)
		}
	}
}

// checkOutgoing counts money out like money in: every canonical transfer
// out of a treasury to an address that is neither a session's deposit
// address, a treasury (a cancellation sends to itself) nor one of
// set.NotMoneyOut pays exactly one refund or payout, which records its
// transaction, address, asset and amount (checkMoneyOut then holds the
// item finalized). One that pays none is money out the engine does not
// know of; one that closes two items counts one transfer twice.
func checkOutgoing(ch *Chain, rec *Records, set Settings, sessions map[common.Address]*Session, r *Result, add func(kind, session, format string, args ...any)) {
	skip := map[common.Address]bool{}
	for _, a := range append(slices.Clone(ch.Treasuries), set.NotMoneyOut...) {
		skip[a] = true
	}
	type item struct{ what, id, owner string }
	byHash := map[string][]Refund{}
	kinds := map[string]string{}
	for _, f := range rec.Refunds {
		byHash[f.TxHash] = append(byHash[f.TxHash], f)
		kinds[f.ID] = "refund"
	}
	for _, f := range rec.Payouts {
		byHash[f.TxHash] = append(byHash[f.TxHash], f)
		kinds[f.ID] = "payout"
	}
	for _, t := range ch.Outgoing {
		if _, deposit := sessions[t.To]; deposit || skip[t.To] {
			continue
		}
		r.Outgoing++
		var items []item
		for _, f := range byHash[strings.ToLower(t.TxHash.Hex())] {
			if f.To == t.To && f.Token == t.Token && f.Amount.Cmp(t.Amount) == 0 {
				items = append(items, item{kinds[f.ID], f.ID, f.SessionID})
			}
		}
		what := fmt.Sprintf("the transfer %s %s of %s (token %s) from %s to %s in block %d", t.TxHash.Hex(), logName(t.LogIndex), t.Amount,
			t.Token.Hex(), t.From.Hex(), t.To.Hex(), t.Block)
		switch {
		case len(items) == 0:
			add(KindRefund, "", "%s is money out that no refund or payout records", what)
		case len(items) > 1:
			names := make([]string, len(items))
			for i, it := range items {
				names[i] = it.what + " " + it.id
			}
			add(KindRefund, items[0].owner, "%s is recorded for %d items: %s", what, len(items), strings.Join(names, ", "))
		}
	}
}

// checkEvents checks that each object's events have versions 1..n without
// gaps, n being the object's version, and that they match its state
// changes one to one.
func checkEvents(rec *Records, add func(kind, session, format string, args ...any)) {
	byObject := map[string][]Event{}
	for _, e := range rec.Events {
		byObject[e.ObjectID] = append(byObject[e.ObjectID], e)
	}
	known := map[string]bool{}
	versions := func(id, session string, version int) []Event {
		known[id] = true
		evs := byObject[id]
		if len(evs) != version {
			add(KindEvents, session, "%s is at version %d with %d events", id, version, len(evs))
		}
		for i, e := range evs {
			if e.Version != i+1 {
				add(KindEvents, session, "%s: event %d of %d has version %d", id, i+1, len(evs), e.Version)
				break
			}
			if e.DataVersion != e.Version {
				add(KindEvents, session, "%s: event %s (version %d) carries version %d", id, e.ID, e.Version, e.DataVersion)
			}
		}
		return evs
	}

	for _, s := range rec.Sessions {
		evs := versions(s.ID, s.ID, s.Version)
		if len(evs) == 0 {
			continue
		}
		if evs[0].Type != "checkout.session.created" {
			add(KindEvents, s.ID, "first event is %s", evs[0].Type)
		}
		prev := evs[0].DataStatus
		for _, e := range evs[1:] {
			switch {
			case e.DataStatus != prev && e.Type != "checkout.session."+e.DataStatus:
				add(KindEvents, s.ID, "the move from %s to %s has event %s", prev, e.DataStatus, e.Type)
			case e.DataStatus != prev && !slices.Contains(sessionMoves[prev], e.DataStatus):
				add(KindEvents, s.ID, "moved from %s to %s, which the state machine does not allow", prev, e.DataStatus)
			case e.DataStatus == prev && e.Type != "checkout.session.exception" && e.Type != "checkout.session.updated":
				add(KindEvents, s.ID, "event %s (version %d) changes no status", e.Type, e.Version)
			}
			prev = e.DataStatus
		}
		if prev != s.Status {
			add(KindEvents, s.ID, "last event says %s, the session is %s", prev, s.Status)
		}
	}

	for _, t := range rec.Transactions {
		evs := versions(t.ID, t.SessionID, t.Version)
		if len(t.History) != t.Version {
			add(KindEvents, t.SessionID, "%s is at version %d with %d status changes", t.ID, t.Version, len(t.History))
		}
		for i, st := range t.History {
			want := "transaction." + st
			if i > 0 && t.History[i-1] == "confirmed" && st == "pending" {
				want = "transaction.reorged"
			}
			if i > 0 && !slices.Contains(txMoves[t.History[i-1]], st) {
				add(KindEvents, t.SessionID, "%s moved from %s to %s, which the state machine does not allow", t.ID, t.History[i-1], st)
			}
			if i < len(evs) && (evs[i].Type != want || evs[i].DataStatus != st) {
				add(KindEvents, t.SessionID, "%s: change %d to %s has event %s (%s)", t.ID, i+1, st, evs[i].Type, evs[i].DataStatus)
			}
		}
	}

	for id, v := range rec.PlanVersions {
		versions(id, "", v)
	}
	for _, f := range rec.Refunds {
		evs := versions(f.ID, f.SessionID, f.Version)
		if len(evs) == 0 {
			continue
		}
		if evs[0].Type != "refund.created" {
			add(KindEvents, f.SessionID, "%s: first event is %s", f.ID, evs[0].Type)
		}
		for _, e := range evs[1:] {
			// An address given, and a transaction rejected, leave the
			// refund waiting for its signature (the merchant's address for
			// an owner's approval first); an approval, for its signature.
			waiting := e.DataStatus == "awaiting_signature" || e.Type == "refund.address_provided" && e.DataStatus == "awaiting_approval"
			if e.Type != "refund."+e.DataStatus && ((e.Type != "refund.address_provided" && e.Type != "refund.transaction_rejected" &&
				e.Type != "refund.approved") || !waiting) {
				add(KindEvents, f.SessionID, "%s: event %s (version %d) carries status %s", f.ID, e.Type, e.Version, e.DataStatus)
			}
		}
		if last := evs[len(evs)-1].DataStatus; last != f.Status {
			add(KindEvents, f.SessionID, "%s: last event says %s, the refund is %s", f.ID, last, f.Status)
		}
	}
	for id, b := range rec.Batches {
		evs := versions(id, id, b.Version)
		if len(evs) > 0 && (evs[0].Type != "payout_batch.created" || evs[len(evs)-1].Type != "payout_batch."+b.Status && b.Status != "awaiting_approval") {
			add(KindEvents, id, "%s: events %s … %s, the batch is %s", id, evs[0].Type, evs[len(evs)-1].Type, b.Status)
		}
	}
	// A payout's version counts its batch's approval, which has the
	// batch's event, not one of its own: its events are its moves from
	// sent on, each naming the status it carries.
	for _, f := range rec.Payouts {
		known[f.ID] = true
		evs := byObject[f.ID]
		for _, e := range evs {
			rejected := e.Type == "payout.transaction_rejected" && e.DataStatus == "awaiting_signature"
			if e.Type != "payout."+e.DataStatus && !rejected || e.DataVersion != e.Version {
				add(KindEvents, f.SessionID, "%s: event %s (version %d) carries status %s and version %d", f.ID, e.Type, e.Version, e.DataStatus, e.DataVersion)
			}
		}
		if len(evs) > 0 && evs[len(evs)-1].DataStatus != f.Status {
			add(KindEvents, f.SessionID, "%s: last event says %s, the payout is %s", f.ID, evs[len(evs)-1].DataStatus, f.Status)
		}
	}
	for id, evs := range byObject {
		if !known[id] {
			add(KindEvents, "", "%d events of %s, which is not a session, transaction, refund, payout, batch or plan of the project", len(evs), id)
		}
	}
}
