package payment

import (
	"testing"
	"time"
)

// A sent refund moves with what the chain says of its transaction, and a
// transaction that moved the funds otherwise is an exception that keeps
// holding what the refund held.
func TestFollowRefund(t *testing.T) {
	now := time.Now()
	prepared := Transfer{LogIndex: 0, From: "0x00000000000000000000000000000000000000AA", To: "0x00000000000000000000000000000000000000bb",
		AssetID: "usdc-devnet", AmountBaseUnits: "4000000"}
	sentAt := now.Add(-time.Minute)
	sent := Refund{Outgoing: Outgoing{Status: RefundSent, AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "4000000",
		FromAddress: "0x00000000000000000000000000000000000000aa", ToAddress: "0x00000000000000000000000000000000000000BB", TxHash: "0x01",
		SentAt: &sentAt}}
	less := prepared
	less.AmountBaseUnits = "3999999"
	elsewhere := prepared
	elsewhere.To = "0x00000000000000000000000000000000000000cc"
	const treasuryAddr = "0x00000000000000000000000000000000000000dd"
	treasury := prepared
	treasury.From = treasuryAddr
	mined := func(l SentLook) SentLook {
		l.Mined, l.Succeeded, l.Now = true, true, now
		if l.Required == 0 {
			l.Confirmations, l.Required = 1, 3
		}
		return l
	}
	for _, c := range []struct {
		name  string
		from  RefundStatus
		look  SentLook
		want  RefundStatus
		event EventType
	}{
		{"not mined yet", RefundSent, SentLook{Now: now, StaleAfter: time.Hour}, RefundSent, ""},
		{"not mined within the bound", RefundSent, SentLook{Now: now, StaleAfter: time.Minute}, RefundStale, EventRefundStale},
		{"stale stays stale", RefundStale, SentLook{Now: now, StaleAfter: time.Minute}, RefundStale, ""},
		{"stale, then mined", RefundStale, mined(SentLook{Transfers: []Transfer{prepared}}), RefundConfirmed, EventRefundConfirmed},
		{"canceled while stale, then mined", RefundCanceled, mined(SentLook{Transfers: []Transfer{prepared}}), RefundConfirmed, EventRefundConfirmed},
		{"canceled while stale, replaced by a cancellation", RefundCanceled, mined(SentLook{Sender: prepared.From}), RefundCanceled, ""},
		{"mined, one confirmation", RefundSent, mined(SentLook{Transfers: []Transfer{prepared}}), RefundConfirmed, EventRefundConfirmed},
		{"deep enough", RefundConfirmed, mined(SentLook{Confirmations: 3, Required: 3, Transfers: []Transfer{prepared}}), RefundFinalized, EventRefundFinalized},
		{"final by the node's tag", RefundSent, mined(SentLook{Final: true, Confirmations: 1, Required: 64, Transfers: []Transfer{prepared}}), RefundFinalized, EventRefundFinalized},
		{"its block left the chain", RefundConfirmed, SentLook{Now: now}, RefundSent, EventRefundSent},
		{"reverted", RefundSent, SentLook{Mined: true, Now: now}, RefundFailed, EventRefundFailed},
		{"paid less", RefundSent, mined(SentLook{Sender: prepared.From, Transfers: []Transfer{less}}), RefundException, EventRefundException},
		{"paid elsewhere", RefundSent, mined(SentLook{Sender: prepared.From, Transfers: []Transfer{elsewhere}}), RefundException, EventRefundException},
		{"paid from a proven treasury", RefundSent, mined(SentLook{Sender: treasuryAddr, Transfers: []Transfer{treasury}, Sources: []string{treasuryAddr}}), RefundConfirmed, EventRefundConfirmed},
		{"paid from an address not proven", RefundSent, mined(SentLook{Sender: treasuryAddr, Transfers: []Transfer{treasury}}), RefundAwaitingSignature, EventRefundRejected},
		{"its transfer counted for another", RefundSent, mined(SentLook{Sender: prepared.From, Transfers: []Transfer{prepared}, Taken: map[int]string{0: "po_other"}}), RefundAwaitingSignature, EventRefundRejected},
		{"finalized stays", RefundFinalized, SentLook{Now: now}, RefundFinalized, ""},
	} {
		r := sent
		r.Status = c.from
		if got := FollowRefund(&r, c.look); got != c.event || r.Status != c.want {
			t.Errorf("%s: %s → %s (%q); want %s (%q)", c.name, c.from, r.Status, got, c.want, c.event)
		}
		switch {
		case c.event == EventRefundConfirmed || c.event == EventRefundFinalized:
			if r.LogIndex == nil || *r.LogIndex != 0 {
				t.Errorf("%s: the paying transfer is not recorded: %v", c.name, r.LogIndex)
			}
		case c.event == EventRefundRejected:
			if r.TxHash != "" || r.FailureReason == "" || r.LogIndex != nil {
				t.Errorf("%s: a rejected transaction is kept, or not explained: %+v", c.name, r.Outgoing)
			}
		}
	}
	if !RefundException.Holds() || RefundFailed.Holds() || !RefundStale.Holds() {
		t.Error("an exception and a stale refund must hold what the refund held; a failed refund must not")
	}
}

// A signer's report of its transaction: once, again with the same hash
// (nothing changes), a replacement while unmined; never before the
// address is known or once confirmed.
func TestReportRefundSent(t *testing.T) {
	now := time.Now()
	h1, h2 := "0x"+repeat("ab", 32), "0x"+repeat("cd", 32)
	r := Refund{Outgoing: Outgoing{Status: RefundAwaitingSignature}}
	if typ, err := ReportRefundSent(&r, h1, now); err != nil || typ != EventRefundSent || r.Status != RefundSent || r.TxHash != h1 {
		t.Fatalf("first report: %q %v %+v", typ, err, r)
	}
	if typ, err := ReportRefundSent(&r, h1, now); err != nil || typ != "" {
		t.Fatalf("the same report again: %q %v", typ, err)
	}
	if typ, err := ReportRefundSent(&r, h2, now); err != nil || typ != EventRefundSent || r.TxHash != h2 {
		t.Fatalf("a replacement: %q %v %+v", typ, err, r)
	}
	r.Status = RefundConfirmed
	if _, err := ReportRefundSent(&r, h1, now); KindOf(err) != KindConflict {
		t.Fatalf("a new hash once confirmed: %v; want a conflict", err)
	}
	if _, err := ReportRefundSent(&Refund{Outgoing: Outgoing{Status: RefundAwaitingAddress}}, h1, now); KindOf(err) != KindConflict {
		t.Fatalf("a report before the address: %v; want a conflict", err)
	}
	if _, err := ReportRefundSent(&Refund{Outgoing: Outgoing{Status: RefundAwaitingSignature}}, "0x12", now); KindOf(err) != KindValidation {
		t.Fatalf("a malformed hash: %v; want a validation error", err)
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// A session's balances: received in finalized transfers, refunded in
// finalized refunds, and what remains once open refunds hold their part.
func TestRefundBalances(t *testing.T) {
	s := "cs_1"
	txs := []Transaction{
		{CheckoutSessionID: s, Status: TxFinalized, AssetDefinitionID: "usdc", AmountBaseUnits: "5000000"},
		{CheckoutSessionID: s, Status: TxConfirmed, AssetDefinitionID: "usdc", AmountBaseUnits: "7000000"},
		{CheckoutSessionID: s, Status: TxFinalized, AssetDefinitionID: "eth", AmountBaseUnits: "100"},
		{CheckoutSessionID: s, Status: TxFinalized, AssetDefinitionID: "usdc", AmountBaseUnits: "9", Unexpected: true},
	}
	balances, status := RefundBalances(s, txs, nil)
	if status != "" || len(balances) != 2 || balances[0].Received.String() != "5000000" || balances[1].Remaining.String() != "100" {
		t.Fatalf("nothing refunded: %+v %q", balances, status)
	}
	refunds := []Refund{
		{Outgoing: Outgoing{AssetDefinitionID: "usdc", Status: RefundFinalized, AmountBaseUnits: "2000000"}},
		{Outgoing: Outgoing{AssetDefinitionID: "usdc", Status: RefundSent, AmountBaseUnits: "1000000"}},
		{Outgoing: Outgoing{AssetDefinitionID: "usdc", Status: RefundCanceled, AmountBaseUnits: "2000000"}},
	}
	balances, status = RefundBalances(s, txs, refunds)
	if status != RefundedPart || balances[0].Refunded.String() != "2000000" || balances[0].Remaining.String() != "2000000" {
		t.Fatalf("part refunded: %+v %q", balances, status)
	}
	refunds = append(refunds, Refund{Outgoing: Outgoing{AssetDefinitionID: "usdc", Status: RefundFinalized, AmountBaseUnits: "3000000"}},
		Refund{Outgoing: Outgoing{AssetDefinitionID: "eth", Status: RefundFinalized, AmountBaseUnits: "100"}})
	if _, status = RefundBalances(s, txs, refunds); status != RefundedAll {
		t.Fatalf("all refunded: %q", status)
	}
}

// The scanner takes an unreported transfer for a refund only when it is
// the prepared one, from the refund's own address: for a refund waiting
// for its signature, or as the replacement of a sent one's transaction
// (the caller checks that one is not mined); never for a confirmed one.
func TestSpotRefund(t *testing.T) {
	now := time.Now()
	r := Refund{Outgoing: Outgoing{Status: RefundAwaitingSignature, AssetDefinitionID: "usdc", AmountBaseUnits: "5",
		FromAddress: "0x00000000000000000000000000000000000000aa", ToAddress: "0x00000000000000000000000000000000000000bb"}}
	prepared := Transfer{From: "0x00000000000000000000000000000000000000AA", To: "0x00000000000000000000000000000000000000BB", AssetID: "usdc", AmountBaseUnits: "5"}
	other := prepared
	other.From = "0x00000000000000000000000000000000000000cc"
	if got := SpotRefund(&r, other, "0x01", now); got != "" || r.Status != RefundAwaitingSignature {
		t.Fatalf("a transfer of the same amount from another address was taken for the refund: %q", got)
	}
	if got := SpotRefund(&r, prepared, "0xAB", now); got != EventRefundSent || r.Status != RefundSent || r.TxHash != "0xab" {
		t.Fatalf("the prepared transfer: %q %+v", got, r)
	}
	if got := SpotRefund(&r, prepared, "0xab", now); got != "" || r.TxHash != "0xab" {
		t.Fatalf("a sent refund spotted again in its own transaction: %q %+v", got, r)
	}
	if got := SpotRefund(&r, prepared, "0xcd", now); got != EventRefundSent || r.TxHash != "0xcd" || r.Status != RefundSent {
		t.Fatalf("a sent refund's replacement: %q %+v", got, r)
	}
	r.Status = RefundConfirmed
	if got := SpotRefund(&r, prepared, "0xef", now); got != "" || r.TxHash != "0xcd" {
		t.Fatalf("a confirmed refund took another transaction: %q %+v", got, r)
	}
}

// A refund may be paid from an address its project proved it controls
// (its treasury), reported or not: the scanner takes the prepared transfer
// from one of those, and still from no other address.
func TestSpotRefundFromAProvenAddress(t *testing.T) {
	now := time.Now()
	r := Refund{Outgoing: Outgoing{Status: RefundAwaitingSignature, AssetDefinitionID: "usdc", AmountBaseUnits: "5",
		FromAddress: "0x00000000000000000000000000000000000000aa", ToAddress: "0x00000000000000000000000000000000000000bb"}}
	fromTreasury := Transfer{From: "0x00000000000000000000000000000000000000CC", To: "0x00000000000000000000000000000000000000bb", AssetID: "usdc", AmountBaseUnits: "5"}
	if got := SpotRefund(&r, fromTreasury, "0x01", now, "0x00000000000000000000000000000000000000dd"); got != "" || r.Status != RefundAwaitingSignature {
		t.Fatalf("a transfer from an address the project did not prove was taken: %q", got)
	}
	if got := SpotRefund(&r, fromTreasury, "0x02", now, "0x00000000000000000000000000000000000000dd", "0x00000000000000000000000000000000000000cc"); got != EventRefundSent ||
		r.Status != RefundSent || r.TxHash != "0x02" {
		t.Fatalf("the prepared transfer from the project's treasury: %q %+v", got, r.Outgoing)
	}
}
