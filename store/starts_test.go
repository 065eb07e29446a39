package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// A session's pending start is recorded with the session, is not a
// sweep's before its grace has passed, is taken by one of concurrent
// sweeps only, comes back after a claim's lease, and goes when deleted.
func TestSessionStartsAreClaimedOnceAndComeBack(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	pr := newProject(t, s)
	now, amount, plan := newPlan(t, s, pr)
	render := func(cs payment.Session, v int) ([]byte, error) { return []byte(fmt.Sprintf(`{"version":%d}`, v)), nil }
	open := func(i int, grace time.Duration) payment.Session {
		cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(fmt.Sprint("t", i)),
			ProjectID: pr.ProjectID, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount,
			ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now}
		input := fmt.Sprintf(`{"Session":{"ID":%q},  "n": 1.50}`, cs.ID)
		// A retried open records nothing more.
		for range 2 {
			if err := s.Checkout().InsertSessionToStart(ctx, cs, render, store.SessionStart{PlanTitle: "T", Input: []byte(input)}, grace); err != nil {
				t.Fatal(err)
			}
		}
		return cs
	}
	later := open(0, time.Hour)
	var due []string
	for i := range 30 {
		due = append(due, open(i+1, 0).ID)
	}
	if n, _, err := s.Checkout().CountSessionStarts(ctx); err != nil || n != 31 {
		t.Fatalf("pending starts = %d, %v; want 31", n, err)
	}
	pending, err := s.Checkout().PendingSessionStarts(ctx, []string{later.ID, "cs_unknown"})
	if err != nil || len(pending) != 1 || pending[0].SessionID != later.ID || pending[0].PlanTitle != "T" ||
		string(pending[0].Input) != fmt.Sprintf(`{"Session":{"ID":%q},  "n": 1.50}`, later.ID) {
		t.Fatalf("pending = %+v, %v; want the session's start with its input byte for byte", pending, err)
	}

	// Three sweeps at once take every due start once, and not the one in
	// its grace.
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				got, err := s.Checkout().ClaimSessionStarts(ctx, 4, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, st := range got {
					taken[st.SessionID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(taken) != len(due) || taken[later.ID] != 0 {
		t.Fatalf("claimed %d starts (%v); want the %d due ones", len(taken), taken, len(due))
	}
	for id, n := range taken {
		if n != 1 {
			t.Fatalf("start of %s claimed %d times", id, n)
		}
	}

	// A claim whose lease lapsed (its sweeper died) is due again.
	if _, err := s.Pool().Exec(ctx, `UPDATE session_starts SET due_at = now() WHERE session_id = $1`, due[0]); err != nil {
		t.Fatal(err)
	}
	again, err := s.Checkout().ClaimSessionStarts(ctx, 10, time.Hour)
	if err != nil || len(again) != 1 || again[0].SessionID != due[0] || again[0].Attempts != 2 {
		t.Fatalf("claimed again = %+v, %v; want the lapsed one, its second attempt", again, err)
	}
	for _, id := range due {
		if err := s.Checkout().SessionStarted(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if n, oldest, err := s.Checkout().CountSessionStarts(ctx); err != nil || n != 1 || oldest <= 0 {
		t.Fatalf("pending = %d (oldest %s), %v; want the one in its grace", n, oldest, err)
	}
}
