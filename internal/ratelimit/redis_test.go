package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testkit/redistest"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/redis/go-redis/v9"
	"github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
)

func newStore(tb testing.TB, client redis.UniversalClient, cfg RedisConfig) limiter.Store {
	tb.Helper()
	st, err := NewRedis(client, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close(context.Background()) })
	return st
}

// A key gets exactly Tokens takes in a window, each saying how many are
// left and when the window ends, and is refused after that until the
// window has passed.
func TestTakeUpToTokensThenRefillAfterInterval(t *testing.T) {
	const tokens, interval = 3, 200 * time.Millisecond
	ctx := context.Background()
	// Kept for an hour, so the next window is the same bucket's.
	st := newStore(t, redistest.Start(t).Client(t), RedisConfig{Tokens: tokens, Interval: interval, Prefix: "t:", TTL: time.Hour})

	before := time.Now()
	var reset uint64
	for i := range tokens {
		limit, remaining, r, ok, err := st.Take(ctx, "ip:192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if !ok || limit != tokens || remaining != uint64(tokens-1-i) {
			t.Fatalf("take %d = (limit %d, remaining %d, ok %v), want (%d, %d, true)", i+1, limit, remaining, ok, tokens, tokens-1-i)
		}
		if i == 0 {
			reset = r
		} else if r != reset {
			t.Fatalf("take %d: reset %d, want the window's end %d as before", i+1, r, reset)
		}
	}
	// The window ends one interval after the first take, by the server's
	// clock, which is this machine's.
	end := time.Unix(0, int64(reset))
	if end.Before(before.Add(interval-20*time.Millisecond)) || end.After(time.Now().Add(interval+20*time.Millisecond)) {
		t.Fatalf("reset %s is not one interval (%s) after the first take at %s", end.Format(time.RFC3339Nano), interval, before.Format(time.RFC3339Nano))
	}

	limit, remaining, r, ok, err := st.Take(ctx, "ip:192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if ok || limit != tokens || remaining != 0 || r != reset {
		t.Fatalf("take over the limit = (limit %d, remaining %d, reset %d, ok %v), want (%d, 0, %d, false)", limit, remaining, r, ok, tokens, reset)
	}
	// Another key has a bucket of its own.
	if _, remaining, _, ok, err := st.Take(ctx, "ip:192.0.2.2"); err != nil || !ok || remaining != tokens-1 {
		t.Fatalf("another key: remaining %d, ok %v, err %v; want %d, true", remaining, ok, err, tokens-1)
	}

	// Refused until the window ends, then the bucket is full again.
	testwait.Until(t, 10*interval, func() (bool, string) {
		_, remaining, r, ok, err = st.Take(ctx, "ip:192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		return ok, fmt.Sprintf("still refused %s after the window's end", time.Since(end))
	})
	if time.Now().Before(end.Add(-20 * time.Millisecond)) {
		t.Fatalf("the bucket refilled before its window ended at %s", end.Format(time.RFC3339Nano))
	}
	if remaining != tokens-1 {
		t.Fatalf("take in the next window = (remaining %d, ok %v), want (%d, true)", remaining, ok, tokens-1)
	}
	// Windows follow each other from the first: the next ends a whole
	// number of intervals later (one, unless this machine stalled).
	if r <= reset || (r-reset)%uint64(interval) != 0 {
		t.Fatalf("next window's reset = %d, want %d plus a whole number of intervals", r, reset)
	}
}

// Two API processes, each with its own client and store, count one
// client against one budget.
func TestStoresOfTwoProcessesShareOneBudget(t *testing.T) {
	const tokens = 10
	ctx := context.Background()
	srv := redistest.Start(t)
	cfg := RedisConfig{Tokens: tokens, Interval: time.Minute, Prefix: "paymentsd:relaxed:"}
	stores := []limiter.Store{newStore(t, srv.Client(t), cfg), newStore(t, srv.Client(t), cfg)}

	taken := 0
	for i := range 2 * tokens {
		_, remaining, _, ok, err := stores[i%2].Take(ctx, "ip:198.51.100.7")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			taken++
			if remaining != uint64(tokens-taken) {
				t.Fatalf("take %d (process %d): remaining %d, want %d", i+1, i%2+1, remaining, tokens-taken)
			}
		}
	}
	if taken != tokens {
		t.Fatalf("two processes took %d tokens together, want %d", taken, tokens)
	}
	for i, st := range stores {
		if _, remaining, err := st.Get(ctx, "ip:198.51.100.7"); err != nil || remaining != 0 {
			t.Fatalf("process %d reads remaining %d (err %v), want 0", i+1, remaining, err)
		}
	}
}

// Takes racing from many goroutines, over two clients, never get more
// than Tokens between them.
func TestConcurrentTakesNeverExceedTokens(t *testing.T) {
	const tokens, goroutines, each = 20, 50, 3
	ctx := context.Background()
	srv := redistest.Start(t)
	cfg := RedisConfig{Tokens: tokens, Interval: time.Minute}
	stores := []limiter.Store{newStore(t, srv.Client(t), cfg), newStore(t, srv.Client(t), cfg)}

	var taken, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				_, _, _, ok, err := stores[g%2].Take(ctx, "key:k_1")
				switch {
				case err != nil:
					errs <- err
				case ok:
					taken.Add(1)
				default:
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if taken.Load() != tokens || refused.Load() != goroutines*each-tokens {
		t.Fatalf("taken %d, refused %d; want %d and %d", taken.Load(), refused.Load(), tokens, goroutines*each-tokens)
	}
}

// op is one call on a store, with what it returned.
type op struct {
	name string // take, get, set or burst
	key  string
	n    uint64 // set: tokens; burst: tokens added
}

type result struct {
	tokens, remaining uint64
	ok                bool
}

func apply(ctx context.Context, st limiter.Store, o op) (result, error) {
	switch o.name {
	case "take":
		tokens, remaining, _, ok, err := st.Take(ctx, o.key)
		return result{tokens, remaining, ok}, err
	case "get":
		tokens, remaining, err := st.Get(ctx, o.key)
		return result{tokens, remaining, false}, err
	case "set":
		return result{}, st.Set(ctx, o.key, o.n, time.Minute)
	case "burst":
		return result{}, st.Burst(ctx, o.key, o.n)
	}
	return result{}, fmt.Errorf("unknown op %q", o.name)
}

func repeat(o op, n int) []op {
	ops := make([]op, n)
	for i := range ops {
		ops[i] = o
	}
	return ops
}

// Within a window, the Redis store answers every call as go-limiter's
// memorystore does.
func TestSameAnswersAsMemorystore(t *testing.T) {
	const tokens = 3
	take, get := op{name: "take", key: "k"}, op{name: "get", key: "k"}
	cases := []struct {
		name string
		ops  []op
	}{
		{"takes past the limit", repeat(take, tokens+2)},
		{"get of a key never taken", []op{get, {name: "get", key: "other"}}},
		{"get reads without taking", []op{take, get, get, take, get}},
		{"set replaces the limit and fills the bucket", append([]op{take, take, {name: "set", key: "k", n: 5}, get}, repeat(take, 6)...)},
		{"set of a new key", append([]op{{name: "set", key: "k", n: 1}, get}, repeat(take, 2)...)},
		{"set to zero refuses every take", []op{{name: "set", key: "k", n: 0}, take, get}},
		{"burst adds to the current window", append(append(repeat(take, tokens+1), op{name: "burst", key: "k", n: 2}, get), repeat(take, 3)...)},
		{"bursts add up", []op{take, {name: "burst", key: "k", n: 1}, {name: "burst", key: "k", n: 4}, get}},
	}
	srv := redistest.Start(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mem, err := memorystore.New(&memorystore.Config{Tokens: tokens, Interval: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close(ctx)
			red := newStore(t, srv.Client(t), RedisConfig{Tokens: tokens, Interval: time.Minute, Prefix: fmt.Sprintf("case%d:", i)})
			for j, o := range c.ops {
				want, err := apply(ctx, mem, o)
				if err != nil {
					t.Fatal(err)
				}
				got, err := apply(ctx, red, o)
				if err != nil {
					t.Fatalf("op %d (%s %s): %v", j+1, o.name, o.key, err)
				}
				if got != want {
					t.Fatalf("op %d (%s %s %d) = %+v, memorystore says %+v", j+1, o.name, o.key, o.n, got, want)
				}
			}
		})
	}
}

// Where memorystore's answers are an accident of its implementation, the
// Redis store does what go-limiter's Store documents.
func TestDocumentedSemanticsWhereMemorystoreDiffers(t *testing.T) {
	const tokens, interval = 2, 150 * time.Millisecond
	ctx := context.Background()
	st := newStore(t, redistest.Start(t).Client(t), RedisConfig{Tokens: tokens, Interval: interval, TTL: time.Hour})

	// A burst on a key without a bucket adds to the store's limit for the
	// current window only; memorystore makes the sum the key's limit.
	if err := st.Burst(ctx, "new", 3); err != nil {
		t.Fatal(err)
	}
	limit, remaining, err := st.Get(ctx, "new")
	if err != nil || limit != tokens || remaining != tokens+3 {
		t.Fatalf("after a burst of 3 on a new key: limit %d, remaining %d, err %v; want %d, %d", limit, remaining, err, tokens, tokens+3)
	}

	// Get after the window has passed reads the full new window, without
	// starting it; memorystore reads the last window's count.
	for range tokens {
		if _, _, _, ok, err := st.Take(ctx, "spent"); err != nil || !ok {
			t.Fatalf("take: ok %v, err %v", ok, err)
		}
	}
	if _, remaining, err := st.Get(ctx, "spent"); err != nil || remaining != 0 {
		t.Fatalf("spent bucket: remaining %d, err %v; want 0", remaining, err)
	}
	testwait.Until(t, 10*interval, func() (bool, string) {
		_, remaining, err := st.Get(ctx, "spent")
		if err != nil {
			t.Fatal(err)
		}
		return remaining == tokens, fmt.Sprintf("a window later: remaining %d; want %d", remaining, tokens)
	})
}

// Buckets expire once idle, and a bucket Set with a longer interval lives
// at least until its window ends.
func TestIdleBucketsExpire(t *testing.T) {
	const interval = 200 * time.Millisecond
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	st := newStore(t, client, RedisConfig{Tokens: 5, Interval: interval, Prefix: "rl:strict:"})

	if _, _, _, _, err := st.Take(ctx, "ip:203.0.113.9"); err != nil {
		t.Fatal(err)
	}
	ttl, err := client.PTTL(ctx, "rl:strict:ip:203.0.113.9").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > interval {
		t.Fatalf("bucket TTL %s, want (0, %s]", ttl, interval)
	}
	if err := st.Set(ctx, "long", 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if ttl, err := client.PTTL(ctx, "rl:strict:long").Result(); err != nil || ttl < 59*time.Minute {
		t.Fatalf("bucket set for an hour: TTL %s, err %v; want about an hour", ttl, err)
	}

	testwait.Until(t, 10*interval, func() (bool, string) {
		n, err := client.Exists(ctx, "rl:strict:ip:203.0.113.9").Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0, fmt.Sprintf("idle bucket still there %s after its TTL", 10*interval)
	})
	if _, remaining, _, ok, err := st.Take(ctx, "ip:203.0.113.9"); err != nil || !ok || remaining != 4 {
		t.Fatalf("take after expiry: remaining %d, ok %v, err %v; want a new bucket (4 left)", remaining, ok, err)
	}

	// A longer TTL keeps idle buckets longer.
	long := newStore(t, client, RedisConfig{Tokens: 5, Interval: interval, Prefix: "rl:kept:", TTL: time.Hour})
	if _, _, _, _, err := long.Take(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if ttl, err := client.PTTL(ctx, "rl:kept:k").Result(); err != nil || ttl < 59*time.Minute {
		t.Fatalf("TTL %s, err %v; want about an hour", ttl, err)
	}
}

// Redis errors come back to the caller, which decides whether to let the
// request through; a closed store refuses with limiter.ErrStopped.
func TestErrorsAreReturned(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)

	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	st := newStore(t, client, RedisConfig{Tokens: 1, Interval: time.Minute})
	_ = client.Close()
	if _, _, _, ok, err := st.Take(ctx, "k"); err == nil || ok {
		t.Fatalf("take on a closed client: ok %v, err %v; want an error", ok, err)
	}

	st = newStore(t, srv.Client(t), RedisConfig{Tokens: 1, Interval: time.Minute})
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok, err := st.Take(ctx, "k"); !errors.Is(err, limiter.ErrStopped) || ok {
		t.Fatalf("take on a closed store: ok %v, err %v; want limiter.ErrStopped", ok, err)
	}
	if _, _, err := st.Get(ctx, "k"); !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("get on a closed store: err %v; want limiter.ErrStopped", err)
	}

	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer dead.Close()
	st = newStore(t, dead, RedisConfig{Tokens: 1, Interval: time.Minute})
	if _, _, _, _, err := st.Take(ctx, "k"); err == nil {
		t.Fatal("take with no server: no error")
	}

	// A server that accepts connections and never answers costs a call
	// its Timeout, not go-redis's seconds of timeouts and retries.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	mute, err := NewRedisClient("redis://" + silent.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	st = newStore(t, mute, RedisConfig{Tokens: 1, Interval: time.Minute, Timeout: 200 * time.Millisecond})
	start := time.Now()
	if _, _, _, _, err := st.Take(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("take from a server that does not answer: %v, want the deadline", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("take from a server that does not answer took %s, want about the 200ms timeout", d)
	}

	for _, cfg := range []RedisConfig{{Tokens: 1 << 54}, {Interval: time.Nanosecond}} {
		if _, err := NewRedis(client, cfg); err == nil {
			t.Fatalf("NewRedis(%+v): no error", cfg)
		}
	}
	if _, err := NewRedis(nil, RedisConfig{}); err == nil {
		t.Fatal("NewRedis without a client: no error")
	}
}

func TestNewRedisClient(t *testing.T) {
	srv := redistest.Start(t)
	client, err := NewRedisClient("redis://" + srv.Addr + "/2")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	st := newStore(t, client, RedisConfig{Tokens: 1, Interval: time.Minute, Prefix: "db2:"})
	if _, _, _, ok, err := st.Take(context.Background(), "k"); err != nil || !ok {
		t.Fatalf("take: ok %v, err %v", ok, err)
	}
	// The URL's database number is the one used.
	other := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 2})
	defer other.Close()
	if n, err := other.Exists(context.Background(), "db2:k").Result(); err != nil || n != 1 {
		t.Fatalf("bucket in database 2: exists %d, err %v", n, err)
	}
	for _, bad := range []string{"", "http://localhost:6379", "redis://user:s3cret@host:port", "redis://:s3cret@host/x"} {
		_, err := NewRedisClient(bad)
		if err == nil {
			t.Fatalf("NewRedisClient(%q): no error", bad)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("NewRedisClient(%q): error %q shows the password", bad, err)
		}
	}
}

func BenchmarkTakeMemory(b *testing.B) {
	st, err := memorystore.New(&memorystore.Config{Tokens: 1 << 40, Interval: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(context.Background())
	benchmarkTake(b, st)
}

func BenchmarkTakeRedis(b *testing.B) {
	st := newStore(b, redistest.Start(b).Client(b), RedisConfig{Tokens: 1 << 40, Interval: time.Minute})
	benchmarkTake(b, st)
}

func benchmarkTake(b *testing.B, st limiter.Store) {
	ctx := context.Background()
	for b.Loop() {
		if _, _, _, ok, err := st.Take(ctx, "ip:192.0.2.1"); err != nil || !ok {
			b.Fatalf("take: ok %v, err %v", ok, err)
		}
	}
}
