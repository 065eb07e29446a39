package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// openOwn opens a store on a database of its own, whose URL a second
// process (another Open) can take.
func openOwn(t *testing.T) (*store.Store, string) {
	t.Helper()
	url := storetest.NewDB(t)
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, url
}

// The scan's lookup through the process's set of deposit addresses finds
// every session's address however its creation interleaves with the
// lookups: created before the set was first read, after, and by a
// transaction that began before a read and committed after it (a later
// xid committed first would hide it from a set that read by commit time).
// A recipient no session has is not found, and a shared recipient is not a
// deposit address.
func TestWatchedRecipientsMissNoSession(t *testing.T) {
	ctx := context.Background()
	s, url := openOwn(t)
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	amount := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pr.ProjectID, Title: "T", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := s.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	render := func(cs payment.Session, v int) ([]byte, error) { return []byte(`{}`), nil }
	n := 0
	open := func(ctx context.Context, shared bool) string {
		t.Helper()
		n++
		address, index := fmt.Sprintf("0x%016x%024x", 0xabc000+n, n), int64(n)
		cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(address), ProjectID: pr.ProjectID,
			PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, DepositAddress: address, DepositIndex: &index,
			SharedRecipient: shared, ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now}
		if err := s.Checkout().InsertSession(ctx, cs, render); err != nil {
			t.Fatal(err)
		}
		return address
	}
	found := func(addresses ...string) []string {
		t.Helper()
		ws, err := s.Chains().WatchedRecipients(ctx, "devnet", append(addresses, "0xff000000000000000000000000000000000000ff"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range ws.Deposits {
			got = append(got, strings.ToLower(w.Address))
		}
		return got
	}

	before := open(ctx, false)
	if got := found(before); len(got) != 1 || got[0] != before {
		t.Fatalf("a session opened before the first lookup: found %v", got)
	}
	after := open(ctx, false)
	if got := found(after); len(got) != 1 || got[0] != after {
		t.Fatalf("a session opened after the first lookup: found %v", got)
	}
	var slow string
	if err := s.InTx(ctx, func(ctx context.Context) error {
		slow = open(ctx, false)
		// Its transaction has its ID and is still open: a lookup now
		// cannot see it, and a session committed meanwhile is found.
		quick := open(context.Background(), false)
		if got := found(slow, quick); len(got) != 1 || got[0] != quick {
			return fmt.Errorf("while a creation is under way: found %v, want only %s", got, quick)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := found(slow); len(got) != 1 || got[0] != slow {
		t.Fatalf("a session committed after a lookup that began before: found %v", got)
	}
	if got := found(open(ctx, true)); len(got) != 0 {
		t.Fatalf("a shared recipient found as a deposit address: %v", got)
	}
	// A fresh process reads them all at once.
	again, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	ws, err := again.Chains().WatchedRecipients(ctx, "devnet", []string{before, after, slow})
	if err != nil || len(ws.Deposits) != 3 {
		t.Fatalf("a new process found %d of 3 (%v)", len(ws.Deposits), err)
	}
	// A session the records lost (a database restored from a backup
	// taken before it) is not found, though the set still holds it.
	if _, err := s.Pool().Exec(ctx, `DELETE FROM checkout_sessions WHERE lower(deposit_address) = $1`, before); err != nil {
		t.Fatal(err)
	}
	if got := found(before, after); len(got) != 1 || got[0] != after {
		t.Fatalf("after the records lost a session: found %v, want only %s", got, after)
	}
}

// A shared recipient is watched from the hold that makes it one, whether
// the hold came before the process's first lookup or after, on its own
// network only; a fresh process finds it too, and a recipient nobody
// holds is not watched.
func TestWatchedRecipientsFindEveryHold(t *testing.T) {
	ctx := context.Background()
	s, url := openOwn(t)
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	render := func(payment.Session, int) ([]byte, error) { return []byte(`{}`), nil }
	hold := func(recipient string) {
		t.Helper()
		ownRecipient(t, s, pr.ProjectID, false, recipient)
		plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pr.ProjectID, Title: "T", PricingModel: payment.PricingTokenAmount,
			RecipientAddress: recipient, Status: payment.PlanActive, CreatedAt: now}
		if err := s.Checkout().CreatePlan(ctx, plan, nil); err != nil {
			t.Fatal(err)
		}
		cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(recipient), ProjectID: pr.ProjectID,
			PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: decimal.RequireFromString("1"), DepositAddress: recipient,
			SharedRecipient: true, ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour), LateUntil: now.Add(2 * time.Hour), CreatedAt: now,
			PaymentOptions: []payment.PaymentOption{{AssetDefinitionID: "usdc-devnet", Network: "devnet", Decimals: 6, AmountBaseUnits: "1000000"}}}
		opts, err := s.Checkout().ReserveAmounts(ctx, cs, 100)
		if err != nil {
			t.Fatal(err)
		}
		cs.PaymentOptions = opts
		if err := s.Checkout().InsertSession(ctx, cs, render); err != nil {
			t.Fatal(err)
		}
	}
	nobody := "0x00000000000000000000000000000000000000aa"
	shared := func(s *store.Store, network string, addresses ...string) []string {
		t.Helper()
		ws, err := s.Chains().WatchedRecipients(ctx, network, append(addresses, nobody))
		if err != nil {
			t.Fatal(err)
		}
		if len(ws.Deposits) != 0 {
			t.Fatalf("a shared recipient found as a deposit address: %v", ws.Deposits)
		}
		return ws.Shared
	}
	before := fmt.Sprintf("0x%040x", 0xb0)
	hold(before)
	if got := shared(s, "devnet", before); len(got) != 1 || got[0] != before {
		t.Fatalf("held before the first lookup: watched %v", got)
	}
	after := fmt.Sprintf("0x%040x", 0xa0)
	if got := shared(s, "devnet", after); len(got) != 0 {
		t.Fatalf("not yet held: watched %v", got)
	}
	hold(after)
	if got := shared(s, "devnet", after); len(got) != 1 || got[0] != after {
		t.Fatalf("held after the first lookup: watched %v", got)
	}
	if got := shared(s, "othernet", before, after); len(got) != 0 {
		t.Fatalf("held on devnet, watched on another network: %v", got)
	}
	again, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := shared(again, "devnet", before, after); len(got) != 2 {
		t.Fatalf("a new process watches %v, want both", got)
	}
}

// The scan's lookup of money out waiting for its transfer finds a payout
// whatever its destination's history: given before the process's first
// lookup, after it, or changed since, and by a fresh process; a recipient
// no item pays finds nothing, nor does a finalized item's.
func TestAwaitingOutgoingMissesNoDestination(t *testing.T) {
	ctx := context.Background()
	s, url := openOwn(t)
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	render := func(payment.BatchRecord, int) ([]byte, error) { return []byte(`{}`), nil }
	n := 0
	pay := func(to string, status payment.RefundStatus) string {
		t.Helper()
		n++
		b := payment.PayoutBatch{ID: payment.NewID(payment.PrefixPayoutBatch, now), ProjectID: pr.ProjectID, Status: payment.BatchApproved,
			FromAddress: "0x00000000000000000000000000000000000000f1", Count: 1, Version: 1, CreatedAt: now, UpdatedAt: now}
		p := payment.Payout{ID: payment.NewID(payment.PrefixPayout, now), BatchID: b.ID, ProjectID: pr.ProjectID, Line: 1,
			Outgoing: payment.Outgoing{Status: status, Network: "devnet", ChainID: 1337, AssetDefinitionID: "usdc-devnet",
				Symbol: "USDC", Decimals: 6, AmountBaseUnits: fmt.Sprint(n), FromAddress: b.FromAddress, ToAddress: to},
			Version: 1, CreatedAt: now, UpdatedAt: now}
		if err := s.MoneyOut().CreatePayoutBatch(ctx, payment.BatchRecord{Batch: b, Payouts: []payment.Payout{p}}, render); err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	awaiting := func(s *store.Store, addresses ...string) []string {
		t.Helper()
		_, payouts, err := s.MoneyOut().AwaitingOutgoingTo(ctx, "devnet", append(addresses, "0x00000000000000aa000000000000000000000000"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range payouts {
			got = append(got, p.ID)
		}
		return got
	}
	before := fmt.Sprintf("0x%016x%024x", 0xb1, 1)
	first := pay(before, payment.RefundAwaitingSignature)
	if got := awaiting(s, before); len(got) != 1 || got[0] != first {
		t.Fatalf("a payout approved before the first lookup: found %v", got)
	}
	after, changed := fmt.Sprintf("0x%016x%024x", 0xb2, 2), fmt.Sprintf("0x%016x%024x", 0xb3, 3)
	second := pay(after, payment.RefundAwaitingSignature)
	if got := awaiting(s, after); len(got) != 1 || got[0] != second {
		t.Fatalf("a payout approved after the first lookup: found %v", got)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE payouts SET to_address = $2 WHERE id = $1`, second, changed); err != nil {
		t.Fatal(err)
	}
	if got := awaiting(s, changed); len(got) != 1 || got[0] != second {
		t.Fatalf("a payout whose destination changed after the lookups: found %v", got)
	}
	done := fmt.Sprintf("0x%016x%024x", 0xb4, 4)
	pay(done, payment.RefundFinalized)
	if got := awaiting(s, done); len(got) != 0 {
		t.Fatalf("a finalized payout found awaiting: %v", got)
	}
	again, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := awaiting(again, before, changed, after); len(got) != 2 {
		t.Fatalf("a new process found %v, want the two awaiting payouts", got)
	}
}
