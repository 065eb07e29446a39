package payment

import (
	"fmt"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// matchFixture is two sessions paid in USDC, a clock and an ID source.
func matchFixture() (a, b Session, at time.Time, newID func() string) {
	at = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	opts := []PaymentOption{{AssetDefinitionID: "usdc", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "25000000"}}
	a = Session{ID: "cs_a", ProjectID: "proj_a", Status: SessionOpen, DepositAddress: "0xAaAa000000000000000000000000000000000001",
		AmountUSD: decimal.NewFromInt(25), PaymentOptions: opts, LateUntil: at.Add(time.Hour)}
	b = Session{ID: "cs_b", ProjectID: "proj_b", Status: SessionOpen, DepositAddress: "0xBbBb000000000000000000000000000000000002",
		AmountUSD: decimal.NewFromInt(25), PaymentOptions: opts, LateUntil: at.Add(time.Hour)}
	n := 0
	newID = func() string { n++; return fmt.Sprintf("tx_%d", n) }
	return a, b, at, newID
}

func mined(at time.Time, status TransactionStatus, transfers ...Transfer) Observation {
	block := int64(7)
	return Observation{Network: "devnet", ChainID: 1337, TxHash: "0xabc", Status: status, Mined: true, Succeeded: true,
		BlockNumber: &block, BlockHash: "0xb1", Confirmations: 1, RequiredConfirmations: 3, Transfers: transfers, At: at}
}

// apply plays changes onto rows the way the store records them.
func apply(rows []Transaction, changes []TxChange) []Transaction {
	for _, c := range changes {
		if c.Insert {
			rows = append(rows, c.Transaction)
			continue
		}
		for i := range rows {
			if rows[i].ID == c.Transaction.ID {
				rows[i] = c.Transaction
			}
		}
	}
	return rows
}

func TestOneTransactionPayingTwoSessionsRecordsATransferForEach(t *testing.T) {
	a, b, at, newID := matchFixture()
	obs := mined(at, TxConfirmed,
		Transfer{LogIndex: 3, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000000"},
		Transfer{LogIndex: 4, To: "0x0000000000000000000000000000000000000bad", AssetID: "usdc", AmountBaseUnits: "1"},
		Transfer{LogIndex: 5, To: b.DepositAddress, AssetID: "usdc", AmountBaseUnits: "10000000"})
	changes, unexpected := MatchTransfers(nil, obs, Recipients{Deposit: []Session{a, b}}, newID)
	rows := apply(nil, changes)
	if len(rows) != 2 || len(unexpected) != 0 {
		t.Fatalf("rows %+v, unexpected %v", rows, unexpected)
	}
	if rows[0].CheckoutSessionID != "cs_a" || rows[0].LogIndex != 3 || rows[0].AmountUSD.String() != "25" ||
		rows[1].CheckoutSessionID != "cs_b" || rows[1].LogIndex != 5 || rows[1].Amount != "10" || rows[1].ProjectID != "proj_b" {
		t.Fatalf("rows %+v", rows)
	}
	if rows[0].Status != TxConfirmed || changes[0].Event != "transaction.confirmed" {
		t.Fatalf("first change %+v", changes[0])
	}
	// Seen again: nothing new to record.
	if again, _ := MatchTransfers(rows, obs, Recipients{Deposit: []Session{a, b}}, newID); len(again) != 0 {
		t.Fatalf("a second look records %+v", again)
	}
}

func TestEveryTransferToOneAddressCounts(t *testing.T) {
	a, _, at, newID := matchFixture()
	obs := mined(at, TxConfirmed,
		Transfer{LogIndex: 1, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "5000000"},
		Transfer{LogIndex: 2, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "20000000"})
	changes, _ := MatchTransfers(nil, obs, Recipients{Deposit: []Session{a}}, newID)
	rows := apply(nil, changes)
	if len(rows) != 2 || rows[0].AmountBaseUnits != "5000000" || rows[1].AmountBaseUnits != "20000000" {
		t.Fatalf("rows %+v", rows)
	}
}

func TestAClaimBecomesItsSessionsTransfer(t *testing.T) {
	a, b, at, newID := matchFixture()
	claim := Claim(a, "devnet", 1337, "0xABC", "tx_claim", at)
	if !claim.IsClaim() || claim.TxHash != "0xabc" {
		t.Fatalf("claim %+v", claim)
	}
	// Not mined yet: the claim waits.
	pending := Observation{Network: "devnet", ChainID: 1337, TxHash: "0xabc", Status: TxPending, At: at}
	if changes, _ := MatchTransfers([]Transaction{claim}, pending, Recipients{Deposit: []Session{a}}, newID); len(changes) != 0 {
		t.Fatalf("a pending claim changed: %+v", changes)
	}
	obs := mined(at.Add(time.Minute), TxConfirmed,
		Transfer{LogIndex: 0, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000000"},
		Transfer{LogIndex: 1, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "1000000"})
	changes, _ := MatchTransfers([]Transaction{claim}, obs, Recipients{Deposit: []Session{a, b}}, newID)
	rows := apply([]Transaction{claim}, changes)
	if len(rows) != 2 || rows[0].ID != "tx_claim" || rows[0].LogIndex != 0 || rows[0].Status != TxConfirmed ||
		rows[0].Version != 2 || rows[1].LogIndex != 1 || rows[1].AmountBaseUnits != "1000000" {
		t.Fatalf("rows %+v", rows)
	}
}

func TestAClaimOnAnotherSessionsTransactionFailsAndHelpsThatSession(t *testing.T) {
	a, b, at, newID := matchFixture()
	squat := Claim(b, "devnet", 1337, "0xabc", "tx_squat", at)
	obs := mined(at, TxConfirmed, Transfer{LogIndex: 0, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000000"})
	changes, _ := MatchTransfers([]Transaction{squat}, obs, Recipients{Deposit: []Session{a}}, newID)
	rows := apply([]Transaction{squat}, changes)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	if rows[0].Status != TxFailed || rows[0].FailureReason != "pays nothing to this session" || rows[0].AmountBaseUnits != "0" {
		t.Fatalf("claim %+v", rows[0])
	}
	if rows[1].CheckoutSessionID != "cs_a" || rows[1].Status != TxConfirmed {
		t.Fatalf("transfer %+v", rows[1])
	}
}

func TestAReorgThatMovesTheLogsKeepsTheRecords(t *testing.T) {
	a, _, at, newID := matchFixture()
	first := mined(at, TxConfirmed,
		Transfer{LogIndex: 3, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "5000000"},
		Transfer{LogIndex: 4, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "20000000"})
	c1, _ := MatchTransfers(nil, first, Recipients{Deposit: []Session{a}}, newID)
	rows := apply(nil, c1)
	reorged := Observation{Network: "devnet", ChainID: 1337, TxHash: "0xabc", Status: TxPending,
		Reason: "its block left the canonical chain", At: at.Add(time.Minute)}
	c2, _ := MatchTransfers(rows, reorged, Recipients{Deposit: []Session{a}}, newID)
	rows = apply(rows, c2)
	if rows[0].Status != TxPending || c2[0].Event != "transaction.reorged" || rows[0].BlockNumber != nil {
		t.Fatalf("after the reorg %+v (%+v)", rows[0], c2)
	}
	again := mined(at.Add(2*time.Minute), TxConfirmed,
		Transfer{LogIndex: 4, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "5000000"},
		Transfer{LogIndex: 5, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "20000000"})
	c3, _ := MatchTransfers(rows, again, Recipients{Deposit: []Session{a}}, newID)
	rows = apply(rows, c3)
	if len(rows) != 2 || rows[0].LogIndex != 4 || rows[1].LogIndex != 5 || rows[0].Status != TxConfirmed ||
		rows[0].AmountBaseUnits != "5000000" || rows[0].Version != 3 {
		t.Fatalf("mined again %+v", rows)
	}
}

// A transfer to a session that no longer takes payments is recorded as
// unexpected; one mined while the session took payments counts, however
// late it is seen (a chainwatch workflow held behind).
func TestATransferToAClosedSessionIsRecordedUnexpected(t *testing.T) {
	a, _, at, newID := matchFixture()
	a.Status, a.LateUntil = SessionExpired, at.Add(-time.Second)
	obs := mined(at, TxConfirmed, Transfer{LogIndex: 0, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "1"})
	obs.BlockTime = at
	changes, unexpected := MatchTransfers(nil, obs, Recipients{Deposit: []Session{a}}, newID)
	if len(changes) != 1 || !changes[0].Insert || !changes[0].Transaction.Unexpected || len(unexpected) != 1 ||
		changes[0].Event != "transaction.confirmed" || changes[0].Transaction.CheckoutSessionID != a.ID {
		t.Fatalf("changes %+v unexpected %+v", changes, unexpected)
	}
	obs.BlockTime = a.LateUntil.Add(-time.Minute)
	changes, unexpected = MatchTransfers(nil, obs, Recipients{Deposit: []Session{a}}, newID)
	if len(changes) != 1 || changes[0].Transaction.Unexpected || len(unexpected) != 0 {
		t.Fatalf("mined inside the window: changes %+v unexpected %+v", changes, unexpected)
	}
}

func TestAClaimFailsWhenNotMinedInTimeOrReverted(t *testing.T) {
	a, _, at, newID := matchFixture()
	claim := Claim(a, "devnet", 1337, "0xabc", "tx_claim", at)
	timeout := Observation{Status: TxFailed, Reason: "not mined within 30m0s", At: at.Add(30 * time.Minute)}
	changes, _ := MatchTransfers([]Transaction{claim}, timeout, Recipients{Deposit: []Session{a}}, newID)
	if len(changes) != 1 || changes[0].Transaction.FailureReason != "not mined within 30m0s" || changes[0].Event != "transaction.failed" {
		t.Fatalf("timeout %+v", changes)
	}
	reverted := mined(at, TxFailed)
	reverted.Succeeded, reverted.Reason = false, "reverted"
	changes, _ = MatchTransfers([]Transaction{claim}, reverted, Recipients{Deposit: []Session{a}}, newID)
	if len(changes) != 1 || changes[0].Transaction.FailureReason != "reverted" {
		t.Fatalf("reverted %+v", changes)
	}
}

func TestATransactionFinalAtFirstSightGoesThroughConfirmed(t *testing.T) {
	a, _, at, newID := matchFixture()
	claim := Claim(a, "devnet", 1337, "0xabc", "tx_claim", at)
	changes, _ := MatchTransfers([]Transaction{claim}, mined(at, TxFinalized,
		Transfer{LogIndex: 0, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000000"}), Recipients{Deposit: []Session{a}}, newID)
	if len(changes) != 2 || changes[0].Event != "transaction.confirmed" || changes[1].Event != "transaction.finalized" ||
		changes[1].Transaction.Version != 3 {
		t.Fatalf("changes %+v", changes)
	}
}

// sharedFixture is two open sessions paying the same recipient in USDC,
// each holding its own amount, and the recipient's project.
func sharedFixture() (a, b Session, r Recipients, at time.Time, newID func() string) {
	a, b, at, newID = matchFixture()
	recipient := "0xCcCc000000000000000000000000000000000003"
	a.DepositAddress, b.DepositAddress = recipient, recipient
	a.PaymentOptions = []PaymentOption{{AssetDefinitionID: "usdc", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "25000000"}}
	b.PaymentOptions = []PaymentOption{{AssetDefinitionID: "usdc", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "25000001"}}
	b.ProjectID = a.ProjectID
	lower := "0xcccc000000000000000000000000000000000003"
	r = Recipients{
		Reserved: []Reservation{
			{Session: a, Network: "devnet", AssetID: "usdc", Recipient: lower, AmountBaseUnits: "25000000", From: at.Add(-time.Minute), Until: a.LateUntil},
			{Session: b, Network: "devnet", AssetID: "usdc", Recipient: lower, AmountBaseUnits: "25000001", From: at.Add(-time.Minute), Until: b.LateUntil},
		},
		Shared: map[string]RecipientOwner{lower: {ProjectID: a.ProjectID}},
		Asset: func(id string) (Asset, bool) {
			return Asset{ID: id, Symbol: "USDC", Decimals: 6, Network: "devnet"}, id == "usdc"
		},
	}
	return a, b, r, at, newID
}

func TestASharedRecipientAttributesTransfersByExactAmount(t *testing.T) {
	a, b, r, at, newID := sharedFixture()
	obs := mined(at, TxConfirmed,
		Transfer{LogIndex: 0, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000001"},
		Transfer{LogIndex: 1, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000000"},
		Transfer{LogIndex: 2, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "24975000"}) // fee deducted
	obs.BlockTime = at
	changes, unexpected := MatchTransfers(nil, obs, r, newID)
	if len(changes) != 3 {
		t.Fatalf("changes %+v", changes)
	}
	byLog := map[int]Transaction{}
	for _, c := range changes {
		byLog[c.Transaction.LogIndex] = c.Transaction
	}
	if byLog[0].CheckoutSessionID != b.ID || byLog[1].CheckoutSessionID != a.ID || byLog[0].Unexpected || byLog[1].Unexpected {
		t.Fatalf("each exact amount goes to the session holding it: %+v", byLog)
	}
	if !byLog[0].AmountUSD.Equal(decimal.NewFromInt(25)) || !byLog[1].AmountUSD.Equal(decimal.NewFromInt(25)) {
		t.Fatalf("each pays its session in full: %s, %s", byLog[0].AmountUSD, byLog[1].AmountUSD)
	}
	u := byLog[2]
	if u.CheckoutSessionID != "" || !u.Unexpected || u.ProjectID != a.ProjectID || u.Amount != "24.975" || u.Symbol != "USDC" {
		t.Fatalf("an amount nobody holds is unmatched, for the recipient's project: %+v", u)
	}
	if len(unexpected) != 1 || unexpected[0].LogIndex != 2 {
		t.Fatalf("unexpected %+v", unexpected)
	}
}

func TestASharedRecipientMatchesAHoldOnlyWhileItHolds(t *testing.T) {
	a, _, r, at, newID := sharedFixture()
	for name, minedAt := range map[string]time.Time{
		"after the late window":      a.LateUntil.Add(time.Second),
		"long before the hold began": at.Add(-time.Minute - ReservationGrace - time.Second),
	} {
		obs := mined(at, TxConfirmed, Transfer{LogIndex: 0, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000000"})
		obs.BlockTime = minedAt
		changes, _ := MatchTransfers(nil, obs, r, newID)
		if len(changes) != 1 || changes[0].Transaction.CheckoutSessionID != "" || !changes[0].Transaction.Unexpected {
			t.Fatalf("%s: %+v", name, changes)
		}
	}
}

func TestAClaimOnASharedRecipientIsCheckedAgainstTheAmount(t *testing.T) {
	a, b, r, at, newID := sharedFixture()
	claim := Claim(a, "devnet", 1337, "0xabc", "tx_claim", at)
	// The hash a's payer submitted pays b's amount: it is b's payment,
	// and a's claim fails.
	obs := mined(at, TxConfirmed, Transfer{LogIndex: 0, To: a.DepositAddress, AssetID: "usdc", AmountBaseUnits: "25000001"})
	obs.BlockTime = at
	changes, _ := MatchTransfers([]Transaction{claim}, obs, r, newID)
	var sawB, failedA bool
	for _, c := range changes {
		sawB = sawB || c.Insert && c.Transaction.CheckoutSessionID == b.ID
		failedA = failedA || c.Transaction.ID == "tx_claim" && c.Transaction.Status == TxFailed
	}
	if !sawB || !failedA {
		t.Fatalf("changes %+v", changes)
	}
}

func TestNextFreeUnitsSkipsHeldAmounts(t *testing.T) {
	if got := NextFreeUnits("100", []string{"101", "100", "103"}); got != "102" {
		t.Fatalf("got %s", got)
	}
	if got := NextFreeUnits("100", nil); got != "100" {
		t.Fatalf("got %s", got)
	}
}

// A Bitcoin payment is recorded from the mempool on: pending, with its
// amount, then confirmed when mined (the same record), or failed when a
// transaction replaces it. BIP21 asks for the amount in BTC.
func TestABitcoinPaymentIsRecordedFromTheMempool(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	s := Session{ID: "cs_btc", ProjectID: "proj_a", Status: SessionOpen, DepositAddress: "0xAaAa000000000000000000000000000000000001",
		BitcoinAddress: "bcrt1qexample", AmountUSD: decimal.NewFromInt(50), LateUntil: at.Add(time.Hour),
		PaymentOptions: []PaymentOption{{AssetDefinitionID: "btc", Symbol: "BTC", Decimals: 8, AmountBaseUnits: "50000",
			DepositAddress: "bcrt1qexample"}}}
	n := 0
	newID := func() string { n++; return fmt.Sprintf("tx_%d", n) }
	paid := Transfer{LogIndex: 1, To: "bcrt1qexample", AssetID: "btc", AmountBaseUnits: "50000"}
	seen := Observation{Network: "bitcoin", TxHash: "ab12", Status: TxPending, Transfers: []Transfer{paid}, At: at}
	changes, _ := MatchTransfers(nil, seen, Recipients{Deposit: []Session{s}}, newID)
	rows := apply(nil, changes)
	if len(rows) != 1 || rows[0].Status != TxPending || changes[0].Event != EventTxPending || rows[0].Amount != "0.0005" ||
		rows[0].CheckoutSessionID != s.ID || rows[0].LogIndex != 1 || rows[0].BlockNumber != nil {
		t.Fatalf("in the mempool: %+v (%v)", rows, changes)
	}
	if again, _ := MatchTransfers(rows, seen, Recipients{Deposit: []Session{s}}, newID); len(again) != 0 {
		t.Fatalf("seen again in the mempool: %+v", again)
	}
	block := int64(500)
	minedObs := Observation{Network: "bitcoin", TxHash: "ab12", Status: TxConfirmed, Mined: true, Succeeded: true,
		BlockNumber: &block, BlockHash: "00bb", Confirmations: 1, RequiredConfirmations: 2, Transfers: []Transfer{paid},
		BlockTime: at.Add(time.Minute), At: at.Add(time.Minute)}
	changes, _ = MatchTransfers(rows, minedObs, Recipients{Deposit: []Session{s}}, newID)
	mined := apply(slices.Clone(rows), changes)
	if len(mined) != 1 || mined[0].ID != rows[0].ID || mined[0].Status != TxConfirmed || *mined[0].BlockNumber != 500 ||
		changes[0].Event != EventTxConfirmed {
		t.Fatalf("mined: %+v (%v)", mined, changes)
	}

	replaced := seen
	replaced.Status, replaced.Reason, replaced.At = TxFailed, "replaced or double-spent by cd34 (in the mempool)", at.Add(time.Minute)
	changes, _ = MatchTransfers(rows, replaced, Recipients{Deposit: []Session{s}}, newID)
	failed := apply(slices.Clone(rows), changes)
	if len(failed) != 1 || failed[0].Status != TxFailed || changes[0].Event != EventTxFailed ||
		failed[0].StatusHistory[1].Reason != replaced.Reason {
		t.Fatalf("replaced: %+v (%v)", failed, changes)
	}
	// Replaced before the first look: recorded, and failed at once.
	changes, _ = MatchTransfers(nil, replaced, Recipients{Deposit: []Session{s}}, newID)
	if rows := apply(nil, changes); len(rows) != 1 || rows[0].Status != TxFailed {
		t.Fatalf("replaced at first sight: %+v", rows)
	}

	if got, want := BitcoinURI("bcrt1qexample", big.NewInt(50_000), "Order #7 & co"), "bitcoin:bcrt1qexample?amount=0.0005&label=Order+%237+%26+co"; got != want {
		t.Errorf("BIP21: %s, want %s", got, want)
	}
}
