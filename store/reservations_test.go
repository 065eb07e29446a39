package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// Sessions opened at once on one shared recipient each hold a distinct
// amount; a session asking again gets its own back; an amount is free for
// a new session only once its hold and the grace after it have passed;
// and Recipients finds the session holding a transfer's exact amount.
func TestSharedRecipientAmountsAreUniqueWhileHeld(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	recipient := fmt.Sprintf("0x%040x", now.UnixNano())
	usd := decimal.RequireFromString("4.5")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pr.ProjectID, Title: "T", PricingModel: payment.PricingTokenAmount,
		RecipientAddress: recipient, Status: payment.PlanActive, CreatedAt: now}
	if err := s.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	session := func(at time.Time) payment.Session {
		return payment.Session{ID: payment.NewID(payment.PrefixSession, at), TokenHash: payment.HashSecret(at.String() + fmt.Sprint(time.Now().UnixNano())),
			ProjectID: pr.ProjectID, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: usd, DepositAddress: recipient,
			SharedRecipient: true, ExpiresAt: at.Add(15 * time.Minute), QuoteExpiresAt: at.Add(15 * time.Minute), LateUntil: at.Add(time.Hour),
			CreatedAt: at, PaymentOptions: []payment.PaymentOption{{AssetDefinitionID: "usdc-devnet", Network: "devnet", Decimals: 6, AmountBaseUnits: "4500000"}}}
	}
	render := func(payment.Session, int) ([]byte, error) { return []byte(`{}`), nil }
	ownRecipient(t, s, pr.ProjectID, false, recipient)

	const n = 12
	var wg sync.WaitGroup
	got := make([]string, n)
	sessions := make([]payment.Session, n)
	for i := range n {
		sessions[i] = session(now)
		wg.Go(func() {
			opts, err := s.Checkout().ReserveAmounts(ctx, sessions[i], 100)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = opts[0].AmountBaseUnits
			sessions[i].PaymentOptions = opts
			if err := s.Checkout().InsertSession(ctx, sessions[i], render); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprint(4500000 + i)
	}
	sorted := slices.Clone(got)
	slices.Sort(sorted) // all seven digits long
	if !slices.Equal(sorted, want) {
		t.Fatalf("amounts %v, want each of %v once", got, want)
	}
	if again, err := s.Checkout().ReserveAmounts(ctx, sessions[3], 100); err != nil || again[0].AmountBaseUnits != got[3] {
		t.Fatalf("a retry gets %v (%v), want %s", again, err, got[3])
	}

	// Recipients: the exact amount finds its session; another amount
	// finds none, and names the recipient's project.
	to, err := s.Checkout().Recipients(ctx, "devnet", false, []payment.Transfer{
		{To: recipient, AssetID: "usdc-devnet", AmountBaseUnits: got[5]},
		{To: recipient, AssetID: "usdc-devnet", AmountBaseUnits: "4499000"}})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := to.SessionOf(payment.Transfer{To: recipient, AssetID: "usdc-devnet", AmountBaseUnits: got[5]}, now.Add(time.Minute)); !ok || s.ID != sessions[5].ID {
		t.Fatalf("the holder of %s: %+v", got[5], s)
	}
	if s, ok := to.SessionOf(payment.Transfer{To: recipient, AssetID: "usdc-devnet", AmountBaseUnits: "4499000"}, now.Add(time.Minute)); !ok || s.ID != "" || s.ProjectID != pr.ProjectID {
		t.Fatalf("an amount nobody holds: %+v %v", s, ok)
	}
	if watched, err := s.Checkout().SharedRecipients(ctx, "devnet", []string{recipient, "0x00000000000000000000000000000000000000aa"}); err != nil || !slices.Equal(watched, []string{recipient}) {
		t.Fatalf("watched %v %v", watched, err)
	}

	// Past the holds' end and the grace after it, the amounts are free.
	later := now.Add(time.Hour + payment.ReservationGrace + time.Second)
	next := session(later)
	if opts, err := s.Checkout().ReserveAmounts(ctx, next, 100); err != nil || opts[0].AmountBaseUnits != "4500000" {
		t.Fatalf("after the holds: %v %v", opts, err)
	}
	// Within the grace, not yet.
	early := session(now.Add(time.Hour + time.Minute))
	if opts, err := s.Checkout().ReserveAmounts(ctx, early, 100); err != nil || opts[0].AmountBaseUnits == "4500000" || slices.Contains(want, opts[0].AmountBaseUnits) {
		t.Fatalf("within the grace: %v %v", opts, err)
	}
}
