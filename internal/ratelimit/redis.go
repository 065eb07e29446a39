// Package ratelimit provides a go-limiter store kept in Redis, so that
// several API processes count every client against one budget instead of
// each process counting alone.
package ratelimit

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sethvargo/go-limiter"
)

// RedisConfig configures a store made by NewRedis.
type RedisConfig struct {
	// Tokens is the number of takes a key is allowed per interval
	// (default 1, as in go-limiter's memorystore).
	Tokens uint64
	// Interval is the length of a bucket's window (default 1 s, at least
	// 1 µs).
	Interval time.Duration
	// Prefix is put before every key, so that stores with other limits,
	// and other applications, can share the Redis database.
	Prefix string
	// TTL is how long a bucket no one takes from is kept. It is never
	// shorter than the rest of the bucket's window, so an expired bucket is
	// one a new bucket would replace anyway; it matters only for keys
	// given their own limits with Set. Default: Interval.
	TTL time.Duration
	// Timeout bounds each call, retries included (default 500 ms), so that
	// a Redis that stops answering delays requests by no more than that.
	// It cuts a slow reply short only if the client has
	// ContextTimeoutEnabled, as NewRedisClient's has.
	Timeout time.Duration
}

// maxExact is the largest count the script keeps exactly: Lua's numbers
// are doubles.
const maxExact = 1 << 53

// bucketScript is the whole token bucket: one script, so that reading,
// refilling and taking are atomic however many processes share the key.
//
//go:embed bucket.lua
var bucketScript string

var bucket = redis.NewScript(bucketScript)

type redisStore struct {
	client   redis.UniversalClient
	prefix   string
	tokens   uint64
	interval time.Duration
	ttl      time.Duration
	timeout  time.Duration
	stopped  atomic.Bool
}

var _ limiter.Store = (*redisStore)(nil)

// NewRedis returns a limiter.Store that keeps its buckets in Redis (5 or
// later). Each key is a fixed window of cfg.Interval from its first take,
// refilled to cfg.Tokens when a new window starts, as in go-limiter's
// memorystore; the windows are measured by the Redis server's clock, so
// processes whose clocks disagree still share one bucket per key.
//
// The store does not own client: Close stops the store but leaves the
// client open for its other users. Errors talking to Redis are returned
// as they are; the caller decides whether to let the request through.
func NewRedis(client redis.UniversalClient, cfg RedisConfig) (limiter.Store, error) {
	if client == nil {
		return nil, errors.New("redis rate limit store: no client")
	}
	s := &redisStore{client: client, prefix: cfg.Prefix, tokens: cfg.Tokens, interval: cfg.Interval, ttl: cfg.TTL, timeout: cfg.Timeout}
	if s.tokens == 0 {
		s.tokens = 1
	}
	if s.interval <= 0 {
		s.interval = time.Second
	}
	if err := checkLimit(s.tokens, s.interval); err != nil {
		return nil, fmt.Errorf("redis rate limit store: %w", err)
	}
	if s.ttl < s.interval {
		s.ttl = s.interval
	}
	if s.timeout <= 0 {
		s.timeout = 500 * time.Millisecond
	}
	return s, nil
}

// NewRedisClient returns a client of the Redis server of a redis://,
// rediss:// or unix:// URL (redis://user:password@host:6379/0), as
// go-redis's ParseURL reads it, with the deadlines of contexts applied to
// its reads and writes (RedisConfig.Timeout). It does not dial until the
// first command. Its errors never repeat the URL, which may hold a
// password.
func NewRedisClient(rawURL string) (redis.UniversalClient, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	opts.ContextTimeoutEnabled = true
	return redis.NewClient(opts), nil
}

func checkLimit(tokens uint64, interval time.Duration) error {
	switch {
	case tokens > maxExact:
		return fmt.Errorf("%d tokens is more than the store counts exactly (2^53)", tokens)
	case interval < time.Microsecond:
		return fmt.Errorf("interval %s is shorter than a microsecond", interval)
	}
	return nil
}

// bucketState is the script's answer.
type bucketState struct {
	tokens, remaining uint64
	reset             uint64 // Unix nanoseconds when the next window starts
	ok                bool
}

// run runs op on key's bucket. A new bucket gets tokens per interval.
func (s *redisStore) run(ctx context.Context, op, key string, tokens uint64, interval time.Duration, burst uint64) (bucketState, error) {
	if s.stopped.Load() {
		return bucketState{}, limiter.ErrStopped
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ttl := (s.ttl + time.Millisecond - 1) / time.Millisecond
	v, err := bucket.Run(ctx, s.client, []string{s.prefix + key},
		op, tokens, interval.Microseconds(), int64(ttl), burst).Int64Slice()
	if err != nil {
		return bucketState{}, fmt.Errorf("redis rate limit %s: %w", op, err)
	}
	if len(v) != 4 || v[0] < 0 || v[1] < 0 || v[2] < 0 {
		return bucketState{}, fmt.Errorf("redis rate limit %s: unexpected reply %v", op, v)
	}
	return bucketState{tokens: uint64(v[0]), remaining: uint64(v[1]), reset: uint64(v[2]) * 1000, ok: v[3] == 1}, nil
}

// Take takes a token from key's bucket, if one is left.
func (s *redisStore) Take(ctx context.Context, key string) (tokens, remaining, reset uint64, ok bool, err error) {
	b, err := s.run(ctx, "take", key, s.tokens, s.interval, 0)
	if err != nil {
		return 0, 0, 0, false, err
	}
	return b.tokens, b.remaining, b.reset, b.ok, nil
}

// Get reads key's bucket without taking from it: zeros for a key that has
// none. A bucket whose window has passed reads as full, where memorystore
// reports the window it last took from.
func (s *redisStore) Get(ctx context.Context, key string) (tokens, remaining uint64, err error) {
	b, err := s.run(ctx, "get", key, s.tokens, s.interval, 0)
	if err != nil {
		return 0, 0, err
	}
	return b.tokens, b.remaining, nil
}

// Set gives key a bucket of its own, full, with tokens per interval,
// replacing any it had.
func (s *redisStore) Set(ctx context.Context, key string, tokens uint64, interval time.Duration) error {
	if err := checkLimit(tokens, interval); err != nil {
		return fmt.Errorf("redis rate limit set: %w", err)
	}
	_, err := s.run(ctx, "set", key, tokens, interval, 0)
	return err
}

// Burst adds tokens to key's current window; the next window starts full,
// without them. A key without a bucket gets a new one with its tokens on
// top (its limit stays the store's, where memorystore raises it).
func (s *redisStore) Burst(ctx context.Context, key string, tokens uint64) error {
	if tokens > maxExact {
		return fmt.Errorf("redis rate limit burst: %d tokens is more than the store counts exactly (2^53)", tokens)
	}
	_, err := s.run(ctx, "burst", key, s.tokens, s.interval, tokens)
	return err
}

// Close stops the store: every later call returns limiter.ErrStopped. The
// buckets stay in Redis for the other processes, and the client open.
func (s *redisStore) Close(context.Context) error {
	s.stopped.Store(true)
	return nil
}
