package api

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// An IP's budget of failures is checked before the key, and comes back
// whole in the next window: the store's Get does not refill a bucket, so
// the check must not leave an IP locked out once its window has passed.
func TestFailureBudgetRefillsEachWindow(t *testing.T) {
	const window = 300 * time.Millisecond
	s, err := New(service.New(service.Deps{}), Config{Limits: map[Tier]uint64{Standard: 2},
		LimitStore: func(_ Tier, n uint64) (limiter.Store, error) {
			return memorystore.New(&memorystore.Config{Tokens: n, Interval: window})
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := func() payment.Kind {
		// Not an API key at all: refused without the engine, so only the
		// budget decides between 401 and 429.
		_, err := s.authenticateFrom(context.Background(), http.Header{"Authorization": {"Bearer nope"}}, "192.0.2.7", http.Header{})
		var e *payment.Error
		if !errors.As(err, &e) {
			t.Fatalf("error = %v", err)
		}
		return e.Kind
	}
	for round := range 2 {
		for i := range 2 {
			if k := call(); k != payment.KindUnauthenticated {
				t.Fatalf("round %d, failure %d: %v, want unauthenticated", round, i+1, k)
			}
		}
		if k := call(); k != payment.KindRateLimited {
			t.Fatalf("round %d, over budget: %v, want rate limited", round, k)
		}
		time.Sleep(window + 50*time.Millisecond) // not a wait: the window has to pass for the budget to refill
	}
}
