package workflows

import (
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
)

// The ledger counts each payment once, in the order the session first
// saw it, whatever the order its words arrive in.
func TestLedgerCountsEachPaymentOnce(t *testing.T) {
	transfer := func(tx string, logIndex int, amount string) SessionTransfer {
		return SessionTransfer{ChainID: 1337, TxHash: tx, LogIndex: logIndex, AssetID: "usdc-devnet", AmountBaseUnits: amount}
	}
	a, b := transfer("0xa", 0, "1000000"), transfer("0xb", 0, "2000000")
	l := newLedger()
	l.addReported(a, payment.PaymentLine{AmountBaseUnits: a.AmountBaseUnits, Status: payment.TxPending}, true)
	l.addRecord("tx_claim", payment.PaymentLine{Status: payment.TxPending}, false)
	l.addReported(b, payment.PaymentLine{AmountBaseUnits: b.AmountBaseUnits, Status: payment.TxPending}, false)
	amounts := func() []string {
		var out []string
		for p := range l.payments() {
			out = append(out, p.AmountBaseUnits)
		}
		return out
	}

	// A reported transfer's record takes its line, in its place.
	if line := l.told("tx_a", a.TransferKey(), false); line.AmountBaseUnits != "1000000" || !line.seenLate {
		t.Fatalf("the record of a reported transfer has a line of its own: %+v", line)
	}
	// The claim turns out to be the second transfer: one line, seen late
	// only if both words came late.
	line := l.told("tx_claim", b.TransferKey(), true)
	line.AmountBaseUnits = b.AmountBaseUnits
	if line.seenLate || !slices.Equal(amounts(), []string{"1000000", "2000000"}) {
		t.Fatalf("after the claim's transfer is told: lines %v, seen late %v", amounts(), line.seenLate)
	}
	// The first transfer recorded again under another ID counts once, its
	// line as it was (seen late, as first seen).
	if again := l.told("tx_a_again", a.TransferKey(), false); !again.seenLate || l.ofRecord("tx_a") != nil ||
		!slices.Equal(amounts(), []string{"1000000", "2000000"}) {
		t.Fatalf("a transfer recorded again: lines %v", amounts())
	}
	if !l.knows(a.TransferKey()) || !l.knows(b.TransferKey()) {
		t.Fatal("a transfer told of is not known")
	}

	// A transaction's workflow that ended without recording a reported
	// transfer takes its line away, and only its.
	c := transfer("0xc", 3, "3000000")
	l.addReported(c, payment.PaymentLine{AmountBaseUnits: c.AmountBaseUnits}, false)
	l.transactionEnded(a.Key())
	l.transactionEnded(c.Key())
	if !slices.Equal(amounts(), []string{"1000000", "2000000"}) || !l.knows(c.TransferKey()) {
		t.Fatalf("after the transactions ended: lines %v", amounts())
	}
	// A transfer recorded for no session leaves no line.
	d := transfer("0xd", 0, "4000000")
	l.addReported(d, payment.PaymentLine{AmountBaseUnits: d.AmountBaseUnits}, false)
	l.recordedForNoSession(d.TransferKey())
	if !slices.Equal(amounts(), []string{"1000000", "2000000"}) {
		t.Fatalf("after an unexpected transfer: lines %v", amounts())
	}
}
