package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

func newProject(t *testing.T, s *store.Store) payment.Principal {
	t.Helper()
	now := time.Now().UTC()
	p := payment.Project{ID: payment.NewID(payment.PrefixProject, now), Name: "Shop", CompleteOn: payment.TxFinalized, LatePaymentWindow: 24 * time.Hour, CreatedAt: now}
	if err := s.Checkout().CreateProject(context.Background(), p, nil); err != nil {
		t.Fatal(err)
	}
	return payment.Principal{ProjectID: p.ID, IsLive: false}
}

func TestIdempotencyKeyClaim(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	now := time.Now()
	a, b := []byte("record-a"), []byte("record-b")
	first, err := s.ClaimIdempotencyKey(ctx, a, "h1", now)
	if err != nil || first != nil {
		t.Fatalf("first claim = %v, %v; want a new claim", first, err)
	}
	again, err := s.ClaimIdempotencyKey(ctx, a, "h1", now)
	if err != nil || again == nil || again.StatusCode != 0 {
		t.Fatalf("claim while running = %+v, %v; want the running record", again, err)
	}
	if err := s.CompleteIdempotencyKey(ctx, a, 201, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	done, _ := s.ClaimIdempotencyKey(ctx, a, "h1", now)
	if done.StatusCode != 201 || string(done.Sealed) != "sealed" {
		t.Fatalf("replay = %+v", done)
	}
	other, _ := s.ClaimIdempotencyKey(ctx, b, "h1", now)
	if other != nil {
		t.Fatal("another record id is another claim")
	}
	later, _ := s.ClaimIdempotencyKey(ctx, a, "h2", now.Add(store.IdempotencyTTL+time.Minute))
	if later != nil {
		t.Fatal("a record older than the TTL is reclaimed")
	}
}

func TestIdempotencyRecordsAreDeletedAfterADay(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	now := time.Now()
	old, fresh := []byte("old"), []byte("fresh")
	for _, c := range []struct {
		id []byte
		at time.Time
	}{{old, now.Add(-store.IdempotencyTTL - time.Minute)}, {fresh, now.Add(-time.Hour)}} {
		if _, err := s.ClaimIdempotencyKey(ctx, c.id, "h", c.at); err != nil {
			t.Fatal(err)
		}
		if err := s.CompleteIdempotencyKey(ctx, c.id, 201, []byte("sealed")); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PurgeIdempotency(ctx, now)
	if err != nil || n != 1 {
		t.Fatalf("purge = %d, %v; want the one record older than a day", n, err)
	}
	if r, _ := s.ClaimIdempotencyKey(ctx, fresh, "h", now); r == nil || r.StatusCode != 201 {
		t.Fatalf("the record of an hour ago = %+v; want it kept", r)
	}
}

func TestSessionInsertIsIdempotent(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	amount := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pr.ProjectID, Title: "T", PricingModel: payment.PricingFixedUSD, AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := s.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret("t"), ProjectID: pr.ProjectID,
		PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now}
	render := func(cs payment.Session, v int) ([]byte, error) {
		return []byte(fmt.Sprintf(`{"status":%q,"version":%d}`, cs.Status, v)), nil
	}
	for range 3 {
		if err := s.Checkout().InsertSession(ctx, cs, render); err != nil {
			t.Fatal(err)
		}
	}
	_, total, err := s.Checkout().ListSessions(ctx, pr, payment.ListQuery{Page: 1, Limit: 20})
	if err != nil || total != 1 {
		t.Fatalf("sessions = %d, %v; want 1", total, err)
	}
	expire := (*payment.Session).Expire
	for range 2 {
		if err := s.Checkout().UpdateSession(ctx, cs.ID, now, expire, render); err != nil {
			t.Fatal(err)
		}
	}
	var events []string
	rows, _ := s.Pool().Query(ctx, `SELECT type || ':' || (data->>'status') || ':' || version FROM events WHERE object_id = $1 ORDER BY version`, cs.ID)
	for rows.Next() {
		var e string
		_ = rows.Scan(&e)
		events = append(events, e)
	}
	if strings.Join(events, ",") != "checkout.session.created:open:1,checkout.session.expired:expired:2" {
		t.Fatalf("events = %v: one per change, in version order", events)
	}
	got, _ := s.Checkout().SessionByTokenHash(ctx, cs.TokenHash)
	if got.Status != payment.SessionExpired || !got.AmountUSD.Equal(amount) {
		t.Fatalf("session = %+v", got)
	}

	// Another session with this one's token is refused, not taken for a
	// repeat.
	other := cs
	other.ID = payment.NewID(payment.PrefixSession, now)
	if err := s.Checkout().InsertSession(ctx, other, render); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("a second session with the same token: %v, want a conflict", err)
	}
	// The metrics read the counts the lists keep.
	counts, err := s.CountByStatus(ctx)
	if err != nil || len(counts) != 1 || counts[0] != (observability.RecordCount{Kind: "checkout_session", IsLive: false, Status: "expired", Count: 1}) {
		t.Fatalf("counts = %+v, %v; want the one expired sandbox session", counts, err)
	}
}

// newPlan creates an active plan of pr at 10 USD, and returns the time
// it was made, its amount and the plan.
func newPlan(t *testing.T, s *store.Store, pr payment.Principal) (time.Time, decimal.Decimal, payment.Plan) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	amount := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pr.ProjectID, Title: "T", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := s.Checkout().CreatePlan(context.Background(), plan, nil); err != nil {
		t.Fatal(err)
	}
	return now, amount, plan
}

// The export of used deposit addresses lists them by index with the run
// of unused indexes before each, only the principal's environment.
func TestDepositAddressesListsUsedIndexesWithTheirGaps(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	pr := newProject(t, s)
	now, amount, plan := newPlan(t, s, pr)
	render := func(cs payment.Session, v int) ([]byte, error) { return []byte(`{}`), nil }
	sessions := map[int64]payment.Session{}
	for i, index := range []int64{3, 0, 1, 30} {
		idx := index
		cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now.Add(time.Duration(i)*time.Millisecond)), TokenHash: payment.HashSecret(fmt.Sprint(i)),
			ProjectID: pr.ProjectID, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, ExpiresAt: now.Add(time.Hour),
			QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now, DepositAddress: fmt.Sprintf("0x%040d", index), DepositIndex: &idx}
		if err := s.Checkout().InsertSession(ctx, cs, render); err != nil {
			t.Fatal(err)
		}
		sessions[index] = cs
	}
	// Index 3 was paid twice in USDC and once in ETH; index 1 has only a
	// transfer that failed and index 30 one still pending: neither holds
	// anything yet.
	for n, tx := range []struct {
		index         int64
		status        payment.TransactionStatus
		asset, amount string
	}{{3, payment.TxFinalized, "usdc-devnet", "1000000"}, {3, payment.TxConfirmed, "usdc-devnet", "2500000"},
		{3, payment.TxFinalized, "eth-devnet", "1000000000000000000"}, {1, payment.TxFailed, "usdc-devnet", "7"}, {30, payment.TxPending, "usdc-devnet", "9"}} {
		cs := sessions[tx.index]
		if err := s.Payments().InsertTransaction(ctx, payment.Transaction{ID: payment.NewID(payment.PrefixTx, now.Add(time.Duration(n)*time.Millisecond)),
			ProjectID: pr.ProjectID, CheckoutSessionID: cs.ID, PaymentPlanID: plan.ID, Status: tx.status, Network: "devnet", ChainID: 1337,
			TxHash: fmt.Sprintf("0x%064x", n), ToAddress: cs.DepositAddress, AssetDefinitionID: tx.asset, Symbol: "X", Amount: "1",
			AmountBaseUnits: tx.amount, AmountUSD: decimal.NewFromInt(1), Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	funded, total, err := s.Chains().ListDepositAddresses(ctx, pr, payment.DepositQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 20}, Funded: true})
	if err != nil || total != 1 || len(funded) != 1 || funded[0].Index != 3 || funded[0].GapBefore != 1 {
		t.Fatalf("funded addresses = %d %+v, %v; want index 3 alone, its gap counted over every used index", total, funded, err)
	}
	if got := fmt.Sprint(funded[0].Received); got != "[{eth-devnet devnet 1000000000000000000} {usdc-devnet devnet 3500000}]" {
		t.Fatalf("index 3 received %s; want its confirmed and finalized transfers summed per asset", got)
	}
	got, total, err := s.Chains().ListDepositAddresses(ctx, pr, payment.DepositQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 20}})
	if err != nil || total != 4 {
		t.Fatalf("list = %d, %v", total, err)
	}
	var indexes, gaps []int64
	for _, d := range got {
		indexes, gaps = append(indexes, d.Index), append(gaps, d.GapBefore)
	}
	if fmt.Sprint(indexes) != "[0 1 3 30]" || fmt.Sprint(gaps) != "[0 0 1 26]" {
		t.Fatalf("indexes %v, gaps %v; want [0 1 3 30], [0 0 1 26]", indexes, gaps)
	}
	if len(got[1].Received) != 0 || len(got[3].Received) != 0 {
		t.Fatalf("failed or pending transfers counted as received: %+v", got)
	}
	page2, _, _ := s.Chains().ListDepositAddresses(ctx, pr, payment.DepositQuery{ListQuery: payment.ListQuery{Page: 2, Limit: 3}})
	if len(page2) != 1 || page2[0].Index != 30 || page2[0].GapBefore != 26 {
		t.Fatalf("page 2 = %+v; the gap is counted over every index, not the page", page2)
	}
	live := payment.Principal{ProjectID: pr.ProjectID, IsLive: true}
	if _, total, _ := s.Chains().ListDepositAddresses(ctx, live, payment.DepositQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 20}}); total != 0 {
		t.Fatalf("the live environment sees %d sandbox addresses", total)
	}
}

// The Bitcoin account key's used addresses are listed apart from the EVM
// key's, with their own gaps, each address with what was paid to it
// alone: a session offering both has two addresses, and neither lists the
// other's payments.
func TestBitcoinDepositAddressesListedApart(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	pr := newProject(t, s)
	now, amount, plan := newPlan(t, s, pr)
	render := func(cs payment.Session, v int) ([]byte, error) { return []byte(`{}`), nil }
	// Session 0 offers both (EVM index 7, Bitcoin index 0), session 1
	// Bitcoin alone at index 4.
	var sessions []payment.Session
	for i, btcIndex := range []int64{0, 4} {
		bi := btcIndex
		cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now.Add(time.Duration(i)*time.Millisecond)), TokenHash: payment.HashSecret(fmt.Sprint("b", i)),
			ProjectID: pr.ProjectID, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, ExpiresAt: now.Add(time.Hour),
			QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now, BitcoinAddress: fmt.Sprintf("bcrt1q%038d", btcIndex), BitcoinIndex: &bi}
		if i == 0 {
			evm := int64(7)
			cs.DepositAddress, cs.DepositIndex = fmt.Sprintf("0x%040d", evm), &evm
		}
		if err := s.Checkout().InsertSession(ctx, cs, render); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, cs)
	}
	for n, tx := range []struct {
		session        int
		chainID        int64
		network, asset string
		to, amount     string
	}{{0, 0, "bitcoin-regtest", "btc-regtest", sessions[0].BitcoinAddress, "60000"},
		{0, 1337, "devnet", "usdc-devnet", sessions[0].DepositAddress, "1000000"}} {
		if err := s.Payments().InsertTransaction(ctx, payment.Transaction{ID: payment.NewID(payment.PrefixTx, now.Add(time.Duration(n)*time.Millisecond)),
			ProjectID: pr.ProjectID, CheckoutSessionID: sessions[tx.session].ID, PaymentPlanID: plan.ID, Status: payment.TxFinalized,
			Network: tx.network, ChainID: tx.chainID, TxHash: fmt.Sprintf("%064x", n), ToAddress: tx.to, AssetDefinitionID: tx.asset,
			Symbol: "X", Amount: "1", AmountBaseUnits: tx.amount, AmountUSD: decimal.NewFromInt(1), Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(chain string, funded bool) []payment.DepositAddress {
		t.Helper()
		got, total, err := s.Chains().ListDepositAddresses(ctx, pr, payment.DepositQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 20}, Funded: funded, Chain: chain})
		if err != nil || total != len(got) {
			t.Fatalf("list %s: %d of %d, %v", chain, len(got), total, err)
		}
		return got
	}
	btc := list(payment.ChainBitcoin, false)
	if len(btc) != 2 || btc[0].Address != sessions[0].BitcoinAddress || btc[0].SessionID != sessions[0].ID || btc[1].Index != 4 || btc[1].GapBefore != 3 {
		t.Fatalf("bitcoin addresses = %+v; want indexes 0 and 4 of their sessions, 3 unused before 4", btc)
	}
	if got := fmt.Sprint(btc[0].Received, btc[1].Received); got != "[{btc-regtest bitcoin-regtest 60000}] []" {
		t.Fatalf("bitcoin received %s; want the bitcoin payment alone", got)
	}
	if got := fmt.Sprint(btc[0].Outputs); got != fmt.Sprintf("[{%064x 0 60000 finalized}]", 0) {
		t.Fatalf("bitcoin outputs %s; want the payment's output, what a sweep spends", got)
	}
	if funded := list(payment.ChainBitcoin, true); len(funded) != 1 || funded[0].Index != 0 {
		t.Fatalf("funded bitcoin addresses = %+v; want index 0", funded)
	}
	evm := list(payment.ChainEVM, false)
	if len(evm) != 1 || evm[0].Index != 7 || fmt.Sprint(evm[0].Received) != "[{usdc-devnet devnet 1000000}]" || evm[0].Outputs != nil {
		t.Fatalf("evm addresses = %+v; want index 7 with its USDC alone", evm)
	}
	live := payment.Principal{ProjectID: pr.ProjectID, IsLive: true}
	if _, total, _ := s.Chains().ListDepositAddresses(ctx, live, payment.DepositQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 20}, Chain: payment.ChainBitcoin}); total != 0 {
		t.Fatalf("the live environment sees %d sandbox bitcoin addresses", total)
	}
	other := newProject(t, s)
	if _, total, _ := s.Chains().ListDepositAddresses(ctx, other, payment.DepositQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 20}, Chain: payment.ChainBitcoin}); total != 0 {
		t.Fatalf("another project sees %d of this project's bitcoin addresses", total)
	}
}
