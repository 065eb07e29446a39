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
