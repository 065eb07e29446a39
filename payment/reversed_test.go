package payment

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// A finalized payment whose block leaves the chain past finality is
// recorded reversed, with its event, and stops counting; mined again, the
// same record returns through confirmed to finalized and counts once.
func TestAPaymentReversedPastFinalityReturnsOnceMinedAgain(t *testing.T) {
	a, _, at, newID := matchFixture()
	pay := Transfer{LogIndex: 3, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000000"}
	to := Recipients{Deposit: []Session{a}}
	changes, _ := MatchTransfers(nil, mined(at, TxFinalized, pay), to, newID)
	rows := apply(nil, changes)
	if len(rows) != 1 || rows[0].Status != TxFinalized {
		t.Fatalf("rows %+v", rows)
	}

	gone := Observation{Network: "devnet", ChainID: 1337, TxHash: "0xabc", Status: TxReversed, At: at.Add(time.Hour)}
	changes, _ = MatchTransfers(rows, gone, to, newID)
	if len(changes) != 1 || changes[0].Event != EventTxReversed || changes[0].Transaction.Status != TxReversed {
		t.Fatalf("changes when its block left the chain past finality = %+v", changes)
	}
	rows = apply(rows, changes)
	if again, _ := MatchTransfers(rows, gone, to, newID); len(again) != 0 {
		t.Fatalf("the same observation again changed %+v", again)
	}
	if !Resettle(Session{ID: a.ID, Status: SessionCompleted, AmountUSD: a.AmountUSD, PaymentOptions: a.PaymentOptions,
		ExpiresAt: at.Add(time.Hour)}, rows, TxFinalized, decimal.Zero).PaidUSD.IsZero() {
		t.Fatal("a reversed payment still counts")
	}

	back := mined(at.Add(2*time.Hour), TxConfirmed, pay)
	changes, _ = MatchTransfers(rows, back, to, newID)
	if len(changes) != 1 || changes[0].Insert || changes[0].Event != EventTxConfirmed {
		t.Fatalf("changes when mined again = %+v", changes)
	}
	rows = apply(rows, changes)
	changes, _ = MatchTransfers(rows, mined(at.Add(3*time.Hour), TxFinalized, pay), to, newID)
	rows = apply(rows, changes)
	if len(rows) != 1 || rows[0].Status != TxFinalized || rows[0].Version != 5 {
		t.Fatalf("rows after it returned = %+v", rows)
	}
}

// A reversed Bitcoin payment whose transaction was double-spent fails.
func TestAReversedPaymentThatCannotReturnFails(t *testing.T) {
	a, _, at, newID := matchFixture()
	rows := []Transaction{{ID: "tx_1", CheckoutSessionID: a.ID, Status: TxReversed, LogIndex: 0, AssetDefinitionID: "usdc",
		AmountBaseUnits: "25000000", Version: 3}}
	obs := Observation{Network: "devnet", ChainID: 1337, TxHash: "0xabc", Status: TxFailed, Reason: "double-spent", At: at}
	changes, _ := MatchTransfers(rows, obs, Recipients{Deposit: []Session{a}}, newID)
	if len(changes) != 1 || changes[0].Transaction.Status != TxFailed || changes[0].Transaction.FailureReason != "double-spent" {
		t.Fatalf("changes = %+v", changes)
	}
}

// A completed session's books follow its records: a reversed payment
// flags payment_reversed with what still counts; back, the flag clears,
// and a merchant's accepted underpayment holds again.
func TestResettleFollowsTheRecords(t *testing.T) {
	a, _, at, _ := matchFixture()
	s := Session{ID: a.ID, Status: SessionCompleted, AmountUSD: a.AmountUSD, PaymentOptions: a.PaymentOptions, ExpiresAt: at.Add(time.Hour)}
	rec := func(status TransactionStatus, units string) Transaction {
		return Transaction{ID: "tx", CheckoutSessionID: a.ID, Status: status, LogIndex: 1, AssetDefinitionID: "usdc",
			AmountBaseUnits: units, CreatedAt: at}
	}
	got := Resettle(s, []Transaction{rec(TxReversed, "25000000")}, TxFinalized, decimal.Zero)
	if got.Status != SessionCompleted || got.Exception != ExceptionReversed || !got.PaidUSD.IsZero() {
		t.Fatalf("reversed: %+v", got)
	}
	got = Resettle(s, []Transaction{rec(TxFinalized, "25000000")}, TxFinalized, decimal.Zero)
	if got.Exception != "" || got.PaidUSD.String() != "25" {
		t.Fatalf("returned: %+v", got)
	}
	s.Resolution = ResolutionUnderpaymentAccepted
	if got = Resettle(s, []Transaction{rec(TxFinalized, "20000000")}, TxFinalized, decimal.Zero); got.Exception != "" {
		t.Fatalf("accepted underpayment, nothing reversed: %+v", got)
	}
	if got = Resettle(s, []Transaction{rec(TxReversed, "20000000")}, TxFinalized, decimal.Zero); got.Exception != ExceptionReversed {
		t.Fatalf("accepted underpayment reversed: %+v", got)
	}
}

// A finalized refund whose block left the chain is reversed when the
// finality watch asks, and left alone while its block stands; mined
// again, it returns through confirmed.
func TestAFinalizedRefundWhoseBlockLeftTheChainIsReversed(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	n := int64(40)
	o := Outgoing{Status: RefundFinalized, AssetDefinitionID: "usdc", AmountBaseUnits: "5000000", FromAddress: "0xf",
		ToAddress: "0xc", TxHash: "0xabc", BlockNumber: &n, BlockHash: "0xb1"}
	pays := []Transfer{{LogIndex: 2, From: "0xf", To: "0xc", AssetID: "usdc", AmountBaseUnits: "5000000"}}
	still := SentLook{Mined: true, Succeeded: true, Final: true, BlockNumber: 40, BlockHash: "0xB1", Transfers: pays, Now: now, PastFinality: true}
	if move := o.follow(still); move != "" || o.Status != RefundFinalized {
		t.Fatalf("block still there: move %q, status %s", move, o.Status)
	}
	if move := o.follow(SentLook{Mined: true, Succeeded: true, Final: true, BlockHash: "0xb1", Transfers: pays, Now: now}); move != "" {
		t.Fatalf("a look the finality watch did not ask for moved a finalized refund: %q", move)
	}
	if move := o.follow(SentLook{Now: now, PastFinality: true}); move != string(RefundReversed) || o.Status != RefundReversed || !o.Status.Cancelable() {
		t.Fatalf("block gone: move %q, status %s", move, o.Status)
	}
	if move := o.follow(SentLook{Now: now}); move != "" {
		t.Fatalf("not mined again: move %q", move)
	}
	again := SentLook{Mined: true, Succeeded: true, Confirmations: 1, Required: 3, BlockNumber: 45, BlockHash: "0xb2", Transfers: pays, Now: now}
	if move := o.follow(again); move != string(RefundConfirmed) || o.BlockHash != "0xb2" {
		t.Fatalf("mined again: move %q, block %s", move, o.BlockHash)
	}
}
