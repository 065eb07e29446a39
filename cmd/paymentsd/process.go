package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/temporalconn"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
)

// temporalStartWait bounds how long a starting process waits for a
// Temporal server that cannot be reached yet.
const temporalStartWait = 30 * time.Second

// databaseStartWait bounds how long a starting process waits for a
// database it cannot reach yet: one restarting or failing over, or
// starting with it.
const databaseStartWait = 30 * time.Second

// checkSchema checks the database's schema (store.CheckSchema), waiting
// up to wait while the database cannot be reached, so that a process
// started during a database restart (a service manager's restart after a
// crash, a rollout) comes up when the database does instead of exiting.
// Any other error, a schema too old above all, returns at once.
func checkSchema(ctx context.Context, url string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for waited := false; ; waited = true {
		err := store.CheckSchema(ctx, url)
		if err == nil || !store.Unavailable(err) || !time.Now().Before(deadline) {
			return err
		}
		if !waited {
			slog.Warn("the database cannot be reached; waiting for it", "wait", wait, "err", err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// deps are a process's connections: Postgres, Temporal and the chains.
type deps struct {
	store    *store.Store
	temporal client.Client
	chains   chainwatch.Chains
}

func (d deps) Close() {
	d.temporal.Close()
	d.store.Close()
}

// open connects to Postgres, Temporal (with tel's metrics and traces) and
// the configured chains.
func open(ctx context.Context, c config, tel *observability.Telemetry) (deps, error) {
	if err := needDatabase(c); err != nil {
		return deps{}, err
	}
	if err := checkSchema(ctx, c.DatabaseURL, databaseStartWait); err != nil {
		return deps{}, err
	}
	st, err := store.Open(ctx, c.DatabaseURL)
	if err != nil {
		return deps{}, err
	}
	opts, err := c.Temporal.Options(tel.Temporal(client.Options{Logger: slogAdapter{}}))
	if err != nil {
		st.Close()
		return deps{}, err
	}
	tc, err := client.NewLazyClient(opts)
	if err != nil {
		st.Close()
		return deps{}, fmt.Errorf("temporal client: %w", err)
	}
	// A bad certificate, refused credentials or a namespace that does not
	// exist stop the process at once, saying so; a server still starting
	// is waited for a while.
	if err := temporalconn.Check(ctx, tc, c.Temporal, temporalStartWait); err != nil {
		tc.Close()
		st.Close()
		return deps{}, err
	}
	chains, err := connectChains(ctx, c)
	if err != nil {
		tc.Close()
		st.Close()
		return deps{}, err
	}
	return deps{st, tc, chains}, nil
}

// connectChains connects the configured networks (NETWORKS, with the
// catalog's assets): the processes' chains, and the admin commands' that
// read them.
func connectChains(ctx context.Context, c config) (chainwatch.Chains, error) {
	return chainwatch.Connect(ctx, c.Networks, c.Catalog, nil)
}

// serviceDeps are the engine's dependencies over a process's connections.
func serviceDeps(c config, d deps) service.Deps {
	return service.Deps{Store: d.store, Temporal: d.temporal, Catalog: c.Catalog, Chains: d.chains, Sealer: sealer(c),
		SessionLifetime: c.SessionLifetime, MaxOpenHolds: c.MaxOpenHolds}
}

// sealer is the webhook secrets' sealer, nil when no key is configured.
func sealer(c config) *webhook.Sealer {
	if c.WebhookKeys == nil {
		return nil
	}
	s, err := webhook.NewKeyring(c.WebhookKeys)
	if err != nil {
		panic(err) // ParseKeys checked the IDs and sizes
	}
	return s
}

// process is what a long-running process (api, worker) starts from: its
// configuration, its telemetry and its connections.
type process struct {
	c   config
	tel *observability.Telemetry
	d   deps
}

// startProcess loads the production configuration, starts the telemetry
// named service and opens the connections (open); the function it returns
// closes the connections, then flushes the telemetry.
func startProcess(ctx context.Context, service string) (process, func(), error) {
	c, err := loadProductionConfig()
	if err != nil {
		return process{}, nil, err
	}
	tel, err := startTelemetry(ctx, service)
	if err != nil {
		return process{}, nil, err
	}
	d, err := open(ctx, c, tel)
	if err != nil {
		closeTelemetry(tel)
		return process{}, nil, err
	}
	return process{c, tel, d}, func() { d.Close(); closeTelemetry(tel) }, nil
}

// startTelemetry starts the process's metrics and traces (docs/observability.md).
func startTelemetry(ctx context.Context, service string) (*observability.Telemetry, error) {
	tel, err := observability.Start(ctx, service)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if observability.TracingConfigured() {
		slog.Info("exporting traces over OTLP", "service", service)
	}
	return tel, nil
}

// closeTelemetry flushes the spans still buffered.
func closeTelemetry(tel *observability.Telemetry) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.Close(ctx); err != nil {
		slog.Warn("telemetry shutdown", "err", err)
	}
}
