package evmrpc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
)

// tooMany answers the first n calls of method with HTTP 429, Retry-After
// retryAfter (none when empty) and Alchemy's JSON-RPC error.
func tooMany(node *stubNode, method string, n int, retryAfter func() string) *atomic.Int64 {
	var seen atomic.Int64
	node.setHook(func(m string, _ []json.RawMessage) *stubReply {
		if m != method || seen.Add(1) > int64(n) {
			return nil
		}
		rep := &stubReply{status: http.StatusTooManyRequests, err: &stubError{Code: 429,
			Message: "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput"}}
		if v := retryAfter(); v != "" {
			rep.header = http.Header{"Retry-After": {v}}
		}
		return rep
	})
	return &seen
}

// An endpoint that answers 429 is benched until its Retry-After and the
// call moves to the next one; the benched endpoint is not asked again
// before its time, even when the other fails; with one endpoint the call
// waits for it, and without a Retry-After it backs off exponentially.
func TestRateLimitedEndpointIsBenched(t *testing.T) {
	ctx := context.Background()
	chain := newStubChain(50)

	t.Run("the call moves on, and the benched endpoint waits for its time", func(t *testing.T) {
		a, b := newStubNode(t, chain, 50), newStubNode(t, chain, 50)
		tooMany(a, "eth_blockNumber", 1, func() string { return "5" })
		f, clock := dialStubs(t, a, b)
		start := clock.Now()
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber: %d, %v", n, err)
		}
		if a.count("eth_blockNumber") != 1 || b.count("eth_blockNumber") != 1 {
			t.Fatalf("calls: a %d, b %d", a.count("eth_blockNumber"), b.count("eth_blockNumber"))
		}
		if counted(t, f, "rate_limited") != 1 {
			t.Errorf("rate_limited counted %v times", counted(t, f, "rate_limited"))
		}
		// b fails now: the call waits for a's Retry-After rather than
		// asking it early or failing.
		var mu sync.Mutex
		var aAsked []time.Time
		a.setHook(func(m string, _ []json.RawMessage) *stubReply {
			if m == "eth_blockNumber" {
				mu.Lock()
				aAsked = append(aAsked, clock.Now())
				mu.Unlock()
			}
			return nil
		})
		b.setHook(func(string, []json.RawMessage) *stubReply {
			return &stubReply{status: http.StatusBadGateway}
		})
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber with b failing: %d, %v", n, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(aAsked) != 1 || aAsked[0].Before(start.Add(5*time.Second)) {
			t.Errorf("a asked at %v, want once, 5s after %v", aAsked, start)
		}
		if p := clock.slept(); len(p) != 1 || p[0] != 5*time.Second {
			t.Errorf("waited %v, want 5s", p)
		}
	})

	t.Run("one endpoint: the call waits and succeeds", func(t *testing.T) {
		for _, form := range []string{"seconds", "HTTP-date"} {
			a := newStubNode(t, chain, 50)
			f, clock := dialStubs(t, a)
			tooMany(a, "eth_blockNumber", 1, func() string {
				if form == "seconds" {
					return "3"
				}
				return clock.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
			})
			if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
				t.Fatalf("%s: BlockNumber: %d, %v", form, n, err)
			}
			if p := clock.slept(); len(p) != 1 || p[0] != 3*time.Second {
				t.Errorf("%s: waited %v, want 3s", form, p)
			}
			if a.count("eth_blockNumber") != 2 {
				t.Errorf("%s: %d calls, want 2", form, a.count("eth_blockNumber"))
			}
		}
	})

	t.Run("a 503 with a Retry-After benches the endpoint too", func(t *testing.T) {
		a := newStubNode(t, chain, 50)
		var seen atomic.Int64
		a.setHook(func(m string, _ []json.RawMessage) *stubReply {
			if m == "eth_blockNumber" && seen.Add(1) == 1 {
				return &stubReply{status: http.StatusServiceUnavailable, header: http.Header{"Retry-After": {"4"}}}
			}
			return nil
		})
		f, clock := dialStubs(t, a)
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber: %d, %v", n, err)
		}
		if p := clock.slept(); len(p) != 1 || p[0] != 4*time.Second {
			t.Errorf("waited %v, want 4s", p)
		}
	})

	t.Run("no Retry-After: exponential backoff with jitter", func(t *testing.T) {
		a := newStubNode(t, chain, 50)
		tooMany(a, "eth_blockNumber", 4, func() string { return "" })
		f, clock := dialStubs(t, a)
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber: %d, %v", n, err)
		}
		p := clock.slept()
		if len(p) != 4 {
			t.Fatalf("waited %v, want 4 times", p)
		}
		for i, d := range p {
			nominal := time.Second << i
			if d > nominal || d < nominal*3/4 {
				t.Errorf("wait %d: %v, want within [%v, %v]", i+1, d, nominal*3/4, nominal)
			}
		}
		// A success starts the backoff over.
		tooMany(a, "eth_blockNumber", 1, func() string { return "" })
		if _, err := f.BlockNumber(ctx); err != nil {
			t.Fatal(err)
		}
		if p := clock.slept(); p[len(p)-1] > time.Second {
			t.Errorf("after a success the backoff is %v, want 1s again", p[len(p)-1])
		}
	})

	t.Run("JSON-RPC rate-limit errors count too", func(t *testing.T) {
		cases := []struct {
			name string
			err  stubError
			want time.Duration // 0: the backoff
		}{
			{"Infura's backoff_seconds", stubError{Code: -32005, Message: "project ID request rate exceeded",
				Data: map[string]any{"see": "https://infura.io/dashboard", "current_rps": 13.333, "allowed_rps": 10.0, "backoff_seconds": 30.0}}, 30 * time.Second},
			{"Infura's, nested", stubError{Code: -32005, Message: "exceeded project rate limit",
				Data: map[string]any{"rate": map[string]any{"allowed_rps": 5, "backoff_seconds": 7, "current_rps": 5.2}, "see": "https://infura.io/dashboard"}}, 7 * time.Second},
			{"Base's public node", stubError{Code: -32016, Message: "over rate limit"}, 0},
			{"Tenderly", stubError{Code: -32005, Message: "rate limit exceeded"}, 0},
			{"QuickNode", stubError{Code: -32007, Message: "15/second request limit reached - reduce calls per second or upgrade your account at quicknode.com"}, 0},
		}
		for _, c := range cases {
			a := newStubNode(t, chain, 50)
			var seen atomic.Int64
			a.setHook(func(m string, _ []json.RawMessage) *stubReply {
				if m == "eth_blockNumber" && seen.Add(1) == 1 {
					e := c.err
					return &stubReply{err: &e}
				}
				return nil
			})
			f, clock := dialStubs(t, a)
			if _, err := f.BlockNumber(ctx); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			p := clock.slept()
			if len(p) != 1 || c.want != 0 && p[0] != c.want || c.want == 0 && p[0] > time.Second {
				t.Errorf("%s: waited %v, want %v", c.name, p, c.want)
			}
		}
	})

	t.Run("a bench past the deadline fails the call at once", func(t *testing.T) {
		a := newStubNode(t, chain, 50)
		tooMany(a, "eth_blockNumber", 1, func() string { return "60" })
		f, clock := dialStubs(t, a)
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := f.BlockNumber(ctx)
		var he rpc.HTTPError
		if !errors.As(err, &he) || he.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("BlockNumber: %v, want the 429", err)
		}
		if p := clock.slept(); len(p) != 0 {
			t.Errorf("waited %v", p)
		}
		// Meanwhile the endpoint is not asked.
		if _, err := f.BlockNumber(ctx); !errors.Is(err, errAllBenched) || a.count("eth_blockNumber") != 1 {
			t.Errorf("while benched: %v after %d calls", err, a.count("eth_blockNumber"))
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 1 ", time.Second, true},
		{"0", 0, false},
		{"Tue, 01 Sep 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Tue, 01 Sep 2026 11:59:00 GMT", 0, false}, // past
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		if d, ok := parseRetryAfter(c.v, now); d != c.want && c.ok || ok != c.ok {
			t.Errorf("%q: %v, %v; want %v, %v", c.v, d, ok, c.want, c.ok)
		}
	}
}
