package reconcile

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

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
