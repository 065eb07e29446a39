// Package e2e holds the end-to-end tests: the HTTP contract of the API
// against a real Postgres, a real embedded Temporal server and the engine's
// worker, all started in the test process.
package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/devchain"
	"github.com/paymentsd/paymentsd/devstack"
	"github.com/paymentsd/paymentsd/engine"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/worker"
)

// Shared by every test of the package: one database, one Temporal server,
// one dev chain, one worker. Tests keep apart by creating their own
// projects (each with its own deposit keys).
var (
	st       *store.Store
	temporal client.Client
	chain    *devchain.Chain
	chains   chainwatch.Chains
	catalog  payment.Catalog
)

// devnet is the dev chain's network: fast blocks, three confirmations.
func devnet(url string) chainwatch.Network {
	return chainwatch.Network{Key: "devnet", ChainID: 1337, RPCURLs: []string{url}, Confirmations: 3,
		BlockTime: chainwatch.Duration(250 * time.Millisecond), PollInterval: chainwatch.Duration(100 * time.Millisecond),
		PendingTimeout: chainwatch.Duration(time.Minute)}
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	url, drop, err := storetest.CreateDB()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer drop()
	if st, err = store.Open(context.Background(), url); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	if chain, err = devchain.Start(context.Background(), devchain.Config{BlockInterval: 250 * time.Millisecond}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer chain.Close()
	catalog = payment.Catalog{Assets: []payment.Asset{
		{ID: "usdc-devnet", Symbol: "USDC", Name: "Dev USD Coin", Decimals: 6, Network: "devnet", ChainID: 1337,
			TokenAddress: chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		{ID: "usdt-devnet", Symbol: "USDT", Name: "Tether", Decimals: 6, Network: "devnet", ChainID: 1337,
			TokenAddress: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		{ID: "eth-devnet", Symbol: "ETH", Name: "Ether", Decimals: 18, Network: "devnet", ChainID: 1337,
			Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: chain.PriceFeed.Hex()}},
		{ID: "usdc-base", Symbol: "USDC", Name: "USD Coin", Decimals: 6, Network: "base", ChainID: 8453, IsLive: true,
			TokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
	}}
	if chains, err = chainwatch.Connect(context.Background(), []chainwatch.Network{devnet(chain.URL)}, catalog, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := devstack.StartTemporal(devstack.TemporalConfig{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Stop()
	if temporal, err = client.Dial(client.Options{HostPort: srv.Address, Namespace: srv.Namespace, Logger: quietLogger{}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer temporal.Close()
	if err := startWorker(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { wrk.Stop() }()
	if err := worker.StartScanners(context.Background(), temporal, []string{"devnet"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := worker.StartDispatcher(context.Background(), temporal); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// wrk is the engine's worker; a test may stop it and start another.
var wrk sdkworker.Worker

// sealer seals the webhook secrets of the tests' endpoints.
var sealer = func() *webhook.Sealer {
	s, err := webhook.NewSealer(make([]byte, webhook.KeySize))
	if err != nil {
		panic(err)
	}
	return s
}()

func startWorker() error {
	wrk = worker.New(temporal, &activities.Activities{Store: st, Chains: chains, Webhooks: activities.Webhooks{
		Temporal: temporal, Sealer: sealer, Client: webhook.NewClient(webhook.ClientOptions{AllowPrivate: true})}})
	return wrk.Start()
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// apiOptions tune one test's API server.
type apiOptions struct {
	limits   map[api.Tier]uint64
	lifetime time.Duration
	tls      bool // serve HTTP/2 over TLS, for gRPC clients
}

// newAPI starts an API server over the shared stack; generous rate limits
// unless the test sets its own.
func newAPI(t *testing.T, opts apiOptions) (*httptest.Server, *engine.Engine) {
	t.Helper()
	e := &engine.Engine{Store: st, Temporal: temporal, Catalog: catalog, Chains: chains, Sealer: sealer, SessionLifetime: opts.lifetime}
	limits := opts.limits
	if limits == nil {
		limits = map[api.Tier]uint64{api.Relaxed: 10000, api.SemiRelaxed: 10000, api.Standard: 10000, api.Moderate: 10000, api.Strict: 10000}
	}
	a, err := api.New(e, api.Config{Limits: limits, PublicURL: "https://pay.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(a.Handler())
	if opts.tls {
		ts.EnableHTTP2 = true
		ts.StartTLS()
		clients.Store(ts.URL, ts.Client())
	} else {
		ts.Start()
	}
	t.Cleanup(func() { ts.Close(); a.Close() })
	return ts, e
}
