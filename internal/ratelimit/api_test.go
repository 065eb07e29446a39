package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/internal/ratelimit"
	"github.com/paymentsd/paymentsd/internal/testkit/redistest"
	"github.com/paymentsd/paymentsd/service"
)

// Two API servers on one Redis, as two replicas behind a load balancer,
// give a client its tier's limit once between them, where each would
// otherwise give it whole.
func TestTwoAPIServersShareTheirLimits(t *testing.T) {
	const limit = 4
	srv := redistest.Start(t)
	handlers := make([]http.Handler, 2)
	for i := range handlers {
		client := srv.Client(t)
		s, err := api.New(service.New(service.Deps{}), api.Config{Limits: map[api.Tier]uint64{api.Relaxed: limit},
			LimitStore: func(tier api.Tier, perMinute uint64) (limiter.Store, error) {
				return ratelimit.NewRedis(client, ratelimit.RedisConfig{Tokens: perMinute, Interval: time.Minute,
					Prefix: "paymentsd:ratelimit:" + string(tier) + ":"})
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		handlers[i] = s.Handler()
	}

	get := func(i int, remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/assets", nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		handlers[i%2].ServeHTTP(w, r)
		return w
	}
	for i := range limit {
		w := get(i, "203.0.113.5:40000")
		if w.Code != http.StatusOK {
			t.Fatalf("call %d (server %d): %d, want 200", i+1, i%2+1, w.Code)
		}
		if got, want := w.Header().Get("RateLimit-Remaining"), strconv.Itoa(limit-1-i); got != want {
			t.Fatalf("call %d: RateLimit-Remaining %s, want %s", i+1, got, want)
		}
	}
	for i := range 2 {
		if w := get(i, "203.0.113.5:40000"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
			t.Fatalf("server %d over the shared limit: %d (Retry-After %q), want 429 with Retry-After", i+1, w.Code, w.Header().Get("Retry-After"))
		}
	}
	if w := get(0, "198.51.100.7:40000"); w.Code != http.StatusOK {
		t.Fatalf("another client: %d, want 200", w.Code)
	}
}
