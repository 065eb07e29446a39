package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sethvargo/go-limiter"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/ratelimit"
	"github.com/paymentsd/paymentsd/service"
)

// Deps are what an API process runs on. `paymentsd api`, the dev stack
// and the tests' stacks serve the API through Run, so they serve the same
// thing.
type Deps struct {
	// Service are the engine's dependencies (store, Temporal client,
	// catalog, chains, sealer, session settings).
	Service service.Deps
	Config  Config
	// Addr is where the API listens, unless Listener is set.
	Addr     string
	Listener net.Listener
	// RedisURL, when set, keeps the rate limits in Redis (REDIS_URL), one
	// budget per client shared by every API process, in place of
	// Config.LimitStore. Run fails when Redis does not answer at start.
	RedisURL string
	// Telemetry, when it traces, makes each request a span; nil: none.
	Telemetry *observability.Telemetry
}

// Run builds the service and the API server over d and serves it until ctx
// ends, then shuts down gracefully.
func Run(ctx context.Context, d Deps) error {
	cfg := d.Config
	if d.RedisURL != "" {
		client, err := openRedis(ctx, d.RedisURL)
		if err != nil {
			return err
		}
		defer client.Close()
		cfg.LimitStore = func(tier Tier, perMinute uint64) (limiter.Store, error) {
			return ratelimit.NewRedis(client, ratelimit.RedisConfig{Tokens: perMinute, Interval: time.Minute,
				Prefix: "paymentsd:ratelimit:" + string(tier) + ":"})
		}
	}
	srv, err := New(service.New(d.Service), cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	if cfg.MetricsAddr != "" {
		mctx, stop := context.WithCancel(ctx)
		defer stop()
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("METRICS_ADDR: %w", err)
		}
		go func() {
			if err := observability.ServeMetricsOn(mctx, mln); err != nil {
				slog.Error("metrics listener stopped", "addr", cfg.MetricsAddr, "err", err)
			}
		}()
	}
	ln := d.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", listenAddr(d.Addr)); err != nil {
			return err
		}
	}
	return Serve(ctx, ln, d.Telemetry.HTTP(srv.Handler(), "paymentsd-api"))
}

// listenAddr is addr as http.Server reads it: empty is ":http".
func listenAddr(addr string) string {
	if addr == "" {
		return ":http"
	}
	return addr
}

// openRedis connects to the Redis server of REDIS_URL and checks that it
// answers, so that a wrong URL stops the start instead of leaving every
// process counting alone. Later outages let requests through (Server logs
// them).
func openRedis(ctx context.Context, rawURL string) (redis.UniversalClient, error) {
	client, err := ratelimit.NewRedisClient(rawURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	ping, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Ping(ping).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	return client, nil
}

// Serve serves h on ln until ctx ends, then shuts down gracefully (15
// seconds for the requests under way). gRPC clients speak HTTP/2 without
// TLS (h2c) to it.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	slog.Info("listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}
