package payment

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func str(s string) *string { return &s }

var payoutCatalog = Catalog{Assets: []Asset{
	{ID: "usdc-devnet", Symbol: "USDC", Network: "devnet", ChainID: 1337, Decimals: 6, TokenAddress: "0x00000000000000000000000000000000000000e1"},
	{ID: "eth-devnet", Symbol: "ETH", Network: "devnet", ChainID: 1337, Decimals: 18},
	{ID: "usdc-base", Symbol: "USDC", Network: "base", ChainID: 8453, Decimals: 6, IsLive: true, TokenAddress: "0x00000000000000000000000000000000000000e2"},
}}

const (
	treasury = "0x00000000000000000000000000000000000000aa"
	alice    = "0x00000000000000000000000000000000000000b1"
	bob      = "0x00000000000000000000000000000000000000b2"
)

// A batch with bad lines is refused whole, every problem named by its
// line and field; a good one becomes its payouts, in line order.
func TestNewPayoutBatchNamesEveryBadLine(t *testing.T) {
	now := time.Now()
	line := func(label, addr, asset, amount, ref string) PayoutLine {
		return PayoutLine{Label: label, Address: str(addr), AssetDefinitionID: str(asset), Amount: str(amount), Reference: str(ref)}
	}
	bad := PayoutBatchInput{FromAddress: str(treasury), Lines: []PayoutLine{
		line("line 2", alice, "usdc-devnet", "10", "inv-1"),
		line("line 3", "0x123", "usdc-devnet", "10", "inv-2"),
		line("line 4", bob, "usdc-base", "10", "inv-3"),
		line("line 5", bob, "usdc-devnet", "1.0000001", "inv-4"),
		line("line 6", bob, "eth-devnet", "-1", "inv-1"),
		line("line 7", treasury, "eth-devnet", "1", ""),
		{Label: "line 8"},
	}}
	_, payouts, err := NewPayoutBatch(bad, payoutCatalog, false, "key_1", now)
	if err == nil || payouts != nil {
		t.Fatalf("a batch with bad lines: %v, %d payouts", err, len(payouts))
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindValidation {
		t.Fatalf("want a validation error, got %v", err)
	}
	got := map[string]string{}
	for _, d := range e.Details {
		got[d.Field] = d.Message
	}
	for _, field := range []string{"line 3.address", "line 4.asset", "line 5.amount", "line 6.amount", "line 6.reference",
		"line 7.address", "line 8.address", "line 8.asset", "line 8.amount"} {
		if got[field] == "" {
			t.Errorf("no problem named %s; got %v", field, got)
		}
	}
	if len(got) != 9 {
		t.Errorf("%d problems, want 9 (line 2 is good): %v", len(got), got)
	}
	if !strings.Contains(got["line 6.reference"], "line 2") {
		t.Errorf("a repeated reference names the line it repeats: %q", got["line 6.reference"])
	}

	good := PayoutBatchInput{FromAddress: str(treasury), Reference: str("November suppliers"), Lines: []PayoutLine{
		line("line 2", alice, "usdc-devnet", "12.5", "inv-1"),
		line("line 3", bob, "eth-devnet", "0.01", ""),
	}}
	b, payouts, err := NewPayoutBatch(good, payoutCatalog, false, "key_1", now)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != BatchAwaitingApproval || b.Count != 2 || len(payouts) != 2 {
		t.Fatalf("batch %+v, %d payouts", b, len(payouts))
	}
	if p := payouts[0]; p.Line != 1 || p.AmountBaseUnits != "12500000" || p.Status != PayoutAwaitingApproval || p.Network != "devnet" ||
		!strings.EqualFold(p.FromAddress, treasury) || p.TokenAddress == "" {
		t.Errorf("first payout %+v", p)
	}
	if p := payouts[1]; p.AmountBaseUnits != "10000000000000000" || p.TokenAddress != "" {
		t.Errorf("second payout %+v", p)
	}
	if _, _, err := NewPayoutBatch(PayoutBatchInput{FromAddress: str(treasury)}, payoutCatalog, false, "key_1", now); err == nil {
		t.Error("an empty batch was taken")
	}
}

// Approval opens the payouts to signing; a batch is canceled only while
// nothing was sent; it completes when every payout is done, and its
// report adds up.
func TestPayoutBatchLifecycle(t *testing.T) {
	now := time.Now()
	b := PayoutBatch{Status: BatchAwaitingApproval}
	payouts := []Payout{
		{ID: "po_1", Outgoing: Outgoing{Status: PayoutAwaitingApproval, AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "1000000", ToAddress: alice, FromAddress: treasury}},
		{ID: "po_2", Outgoing: Outgoing{Status: PayoutAwaitingApproval, AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "2000000", ToAddress: bob, FromAddress: treasury}},
	}
	if _, err := ReportPayoutSent(&payouts[0], "0x"+repeat("ab", 32), now); err == nil {
		t.Error("a payout of a batch not approved took a transaction")
	}
	if err := ApprovePayoutBatch(&b, payouts, "usr_1", now); err != nil || b.Status != BatchApproved || payouts[1].Status != RefundAwaitingSignature {
		t.Fatalf("approve: %v %+v", err, b)
	}
	if err := ApprovePayoutBatch(&b, payouts, "usr_1", now); err == nil {
		t.Error("a batch was approved twice")
	}
	if typ, err := ReportPayoutSent(&payouts[0], "0x"+repeat("ab", 32), now); err != nil || typ != EventPayoutSent {
		t.Fatalf("report: %q %v", typ, err)
	}
	if err := CancelPayoutBatch(&b, payouts, now); err == nil {
		t.Error("a batch with a payout sent was canceled")
	}
	// The scanner spots the second payout's transfer, from the batch's
	// address only.
	seen := Transfer{From: bob, To: bob, AssetID: "usdc-devnet", AmountBaseUnits: "2000000"}
	if SpotPayout(&payouts[1], seen, "0x"+repeat("cd", 32), now) != "" {
		t.Error("a transfer from another address was taken for the payout")
	}
	seen.From = treasury
	if SpotPayout(&payouts[1], seen, "0x"+repeat("cd", 32), now) != EventPayoutSent {
		t.Error("the payout's transfer was not spotted")
	}
	paid := Transfer{From: treasury, To: alice, AssetID: "usdc-devnet", AmountBaseUnits: "1000000"}
	if typ := FollowPayout(&payouts[0], SentLook{Mined: true, Succeeded: true, Final: true, Transfers: []Transfer{paid}, Now: now}); typ != EventPayoutFinalized {
		t.Errorf("follow: %q", typ)
	}
	if b.Complete(payouts, now) {
		t.Error("the batch completed with a payout still sent")
	}
	if typ := FollowPayout(&payouts[1], SentLook{Mined: true, Succeeded: true, Final: true, Transfers: []Transfer{paid}, Now: now}); typ != EventPayoutException {
		t.Errorf("a transaction that paid another payout's transfer: %q", typ)
	}
	if !b.Complete(payouts, now) || b.Status != BatchCompleted {
		t.Errorf("the batch did not complete: %+v", b)
	}
	r := ReportOf(payouts)
	if len(r.Totals) != 1 || r.Totals[0].Requested.String() != "3000000" || r.Totals[0].Paid.String() != "1000000" ||
		r.Totals[0].NotPaid.String() != "2000000" || r.Statuses[RefundFinalized] != 1 || r.Statuses[RefundException] != 1 {
		t.Errorf("report %+v", r)
	}

	fresh := PayoutBatch{Status: BatchApproved}
	todo := []Payout{{Outgoing: Outgoing{Status: RefundAwaitingSignature}}}
	if err := CancelPayoutBatch(&fresh, todo, now); err != nil || fresh.Status != BatchCanceled || todo[0].Status != RefundCanceled {
		t.Errorf("cancel before anything was sent: %v %+v", err, fresh)
	}
}

// Two lines alike (payee, asset, amount) are refused: on chain one
// transfer could be taken for either.
func TestNewPayoutBatchRefusesPayoutsAlike(t *testing.T) {
	line := func(label, amount, ref string) PayoutLine {
		return PayoutLine{Label: label, Address: str(alice), AssetDefinitionID: str("usdc-devnet"), Amount: str(amount), Reference: str(ref)}
	}
	_, _, err := NewPayoutBatch(PayoutBatchInput{FromAddress: str(treasury), Lines: []PayoutLine{
		line("line 2", "10", "inv-1"), line("line 3", "10.000000", "inv-2"), line("line 4", "11", "inv-3"),
	}}, payoutCatalog, false, "key_1", time.Now())
	var e *Error
	if !errors.As(err, &e) || len(e.Details) != 1 || e.Details[0].Field != "line 3.amount" || !strings.Contains(e.Details[0].Message, "repeats line 2") {
		t.Fatalf("two payouts alike: %v", err)
	}
}

// A payout canceled while stale keeps its transaction: mined after all
// and paying it, it is confirmed and counts again (as a refund canceled
// while stale does); a payout sent or done cannot be canceled.
func TestAStalePayoutCanceledCountsWhenMinedAfterAll(t *testing.T) {
	now := time.Now()
	sentAt := now.Add(-2 * time.Hour)
	p := Payout{Outgoing: Outgoing{Status: RefundStale, AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "1000000",
		FromAddress: "0x00000000000000000000000000000000000000aa", ToAddress: "0x00000000000000000000000000000000000000bb", TxHash: "0x01", SentAt: &sentAt}}
	if err := CancelPayout(&p, now); err != nil || p.Status != RefundCanceled || !p.Followed() || !p.Done() {
		t.Fatalf("a stale payout canceled: %+v, %v; want canceled, still followed", p.Outgoing, err)
	}
	paid := Transfer{From: p.FromAddress, To: p.ToAddress, AssetID: "usdc-devnet", AmountBaseUnits: "1000000"}
	look := SentLook{Mined: true, Succeeded: true, Confirmations: 1, Required: 3, Transfers: []Transfer{paid}, Now: now}
	if ev := FollowPayout(&p, look); ev != "payout.confirmed" || p.Status != RefundConfirmed {
		t.Fatalf("the canceled payout's transaction mined: %q, %s; want payout.confirmed", ev, p.Status)
	}
	for _, st := range []RefundStatus{PayoutAwaitingApproval, RefundSent, RefundConfirmed, RefundFinalized, RefundFailed, RefundCanceled, RefundException} {
		q := Payout{Outgoing: Outgoing{Status: st}}
		if err := CancelPayout(&q, now); KindOf(err) != KindConflict || q.Status != st {
			t.Errorf("a %s payout canceled: %v; want a conflict", st, err)
		}
	}
}
