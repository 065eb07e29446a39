package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

func newProject(t *testing.T, s *store.Store) payment.Principal {
	t.Helper()
	now := time.Now().UTC()
	p := payment.Project{ID: payment.NewID(payment.PrefixProject, now), Name: "Shop", CompleteOn: payment.TxFinalized, LatePaymentWindow: 24 * time.Hour, CreatedAt: now}
	if err := s.CreateProject(context.Background(), p, nil); err != nil {
		t.Fatal(err)
	}
	return payment.Principal{ProjectID: p.ID, IsLive: false}
}

func TestIdempotencyKeyClaim(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	now := time.Now()
	first, err := s.ClaimIdempotencyKey(ctx, "key_a", "k1", "h1", now)
	if err != nil || first != nil {
		t.Fatalf("first claim = %v, %v; want a new claim", first, err)
	}
	again, err := s.ClaimIdempotencyKey(ctx, "key_a", "k1", "h1", now)
	if err != nil || again == nil || again.StatusCode != 0 {
		t.Fatalf("claim while running = %+v, %v; want the running record", again, err)
	}
	if err := s.CompleteIdempotencyKey(ctx, "key_a", "k1", 201, []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	done, _ := s.ClaimIdempotencyKey(ctx, "key_a", "k1", "h1", now)
	if done.StatusCode != 201 || string(done.Body) != `{"ok":true}` {
		t.Fatalf("replay = %+v", done)
	}
	other, _ := s.ClaimIdempotencyKey(ctx, "key_b", "k1", "h1", now)
	if other != nil {
		t.Fatal("a key is scoped to its credential")
	}
	later, _ := s.ClaimIdempotencyKey(ctx, "key_a", "k1", "h2", now.Add(store.IdempotencyTTL+time.Minute))
	if later != nil {
		t.Fatal("a key older than the TTL is reclaimed")
	}
}

func TestSessionInsertIsIdempotent(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	amount := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pr.ProjectID, Title: "T", PricingModel: payment.PricingFixedUSD, AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := s.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret("t"), ProjectID: pr.ProjectID,
		PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now}
	for range 3 {
		if err := s.InsertSession(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	_, total, err := s.ListSessions(ctx, pr, payment.ListQuery{Page: 1, Limit: 20})
	if err != nil || total != 1 {
		t.Fatalf("sessions = %d, %v; want 1", total, err)
	}
	changed, err := s.SetSessionStatus(ctx, cs.ID, payment.SessionExpired, now, payment.SessionOpen, payment.SessionProcessing)
	if err != nil || !changed {
		t.Fatalf("expire: %v %v", changed, err)
	}
	changed, _ = s.SetSessionStatus(ctx, cs.ID, payment.SessionExpired, now, payment.SessionOpen, payment.SessionProcessing)
	if changed {
		t.Fatal("expiring twice must change nothing")
	}
	got, _ := s.SessionByTokenHash(ctx, cs.TokenHash)
	if got.Status != payment.SessionExpired || !got.AmountUSD.Equal(amount) {
		t.Fatalf("session = %+v", got)
	}
}
