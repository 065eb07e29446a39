// Package e2e holds the end-to-end tests: the HTTP contract of the API
// against a real Postgres, a real embedded Temporal server and the engine's
// worker, all started in the test process. The Temporal server runs on
// SQLite, or on Postgres with TEMPORAL_PERSISTENCE=postgres (see
// stacktest.Temporal).
package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/tests/rpcproxy"
	"github.com/paymentsd/paymentsd/tests/stacktest"
	"github.com/paymentsd/paymentsd/webhook"
)

// Shared by every test of the package: one database, one Temporal server,
// one dev chain, one worker (devstack.Stack, as `paymentsd dev` runs
// them). Tests keep apart by creating their own projects (each with its
// own deposit keys).
var (
	stack    *devstack.Stack
	st       *store.Store
	temporal client.Client
	chain    *devchain.Chain
	chains   chainwatch.Chains
	catalog  payment.Catalog
	sealer   *webhook.Sealer
	// dbURL is the shared database's URL.
	dbURL string
	// node is what the engine reads the dev chain through: a test can take
	// it down, as a node outage looks to the engine, or have it lie.
	node *rpcproxy.Proxy
	// bitcoinNode is what the engine reads the Bitcoin node through.
	bitcoinNode *rpcproxy.Proxy
)

// devnet is the dev chain's network: fast blocks, three confirmations.
func devnet(url string) chainwatch.Network {
	return chainwatch.Network{Key: "devnet", ChainID: 1337, RPCURLs: []string{url}, Confirmations: 3,
		BlockTime: chainwatch.Duration(250 * time.Millisecond), PollInterval: chainwatch.Duration(100 * time.Millisecond),
		PendingTimeout: chainwatch.Duration(time.Minute), ReorgWindow: 60, ReorgCheckInterval: chainwatch.Duration(time.Second)}
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
	dbURL = url
	temporalCfg, dropTemporal, err := stacktest.Temporal(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer dropTemporal()
	var proxyErr error
	stack, err = devstack.StartStack(context.Background(), devstack.StackConfig{
		DatabaseURL: url,
		Temporal:    temporalCfg,
		Chain:       devchain.Config{BlockInterval: 250 * time.Millisecond, Accounts: 6},
		Devnet:      devnet(""),
		DevnetURL: func(chainURL string) string {
			if node, proxyErr = rpcproxy.Start(chainURL, "", 1); proxyErr != nil {
				return chainURL
			}
			return node.URL
		},
		Assets: []payment.Asset{
			{ID: "usdt-devnet", Symbol: "USDT", Name: "Tether", Decimals: 6, Network: "devnet", ChainID: 1337,
				TokenAddress: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
			{ID: "usdc-base", Symbol: "USDC", Name: "USD Coin", Decimals: 6, Network: "base", ChainID: 8453, IsLive: true,
				TokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		},
		Bitcoin:     &btcnode.Config{},
		BitcoinTune: chainwatch.Network{PollInterval: chainwatch.Duration(200 * time.Millisecond), ReorgCheckInterval: chainwatch.Duration(time.Second)},
		BitcoinURL: func(nodeURL string) string {
			if bitcoinNode, proxyErr = rpcproxy.Start(nodeURL, "", 2); proxyErr != nil {
				return nodeURL
			}
			// The engine's credentials (the node's URL is
			// http://user:password@host:port), which the proxy passes on.
			creds, _, _ := strings.Cut(strings.TrimPrefix(nodeURL, "http://"), "@")
			return strings.Replace(bitcoinNode.URL, "http://", "http://"+creds+"@", 1)
		},
		Logger: quietLogger{},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stack.Close()
	if node == nil || bitcoinNode == nil {
		fmt.Fprintln(os.Stderr, "no proxy in front of the dev chain or the Bitcoin node:", proxyErr)
		return 1
	}
	defer node.Close()
	defer bitcoinNode.Close()
	st, temporal, chain, chains, catalog, sealer = stack.Store, stack.Temporal, stack.Chain, stack.Chains, stack.Catalog, stack.Sealer
	return m.Run()
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
	// db, when set, is the engine's store in place of the shared one (a
	// store over the same database, e.g. with a query tracer).
	db *store.Store
	// chains, when set, are the networks in place of the stack's.
	chains chainwatch.Chains
	// temporal, when set, is the API's Temporal client in place of the
	// stack's (one that cannot reach the server, say).
	temporal client.Client
	// shape is the API's shape (empty: the first).
	shape api.Shape
	// proxies are the API's trusted proxies: from them, X-Forwarded-For
	// names the client (tests from several client addresses).
	proxies []netip.Prefix
	// maxOpenHolds bounds a plan's open holds (zero: the default).
	maxOpenHolds int
}

// newAPI starts an API server over the shared stack; generous rate limits
// unless the test sets its own.
func newAPI(t *testing.T, opts apiOptions) (*httptest.Server, *service.Service) {
	t.Helper()
	d := stack.Deps(opts.lifetime)
	if opts.db != nil {
		d.Store = opts.db
	}
	if opts.chains != nil {
		d.Chains = opts.chains
	}
	if opts.temporal != nil {
		d.Temporal = opts.temporal
	}
	d.MaxOpenHolds = opts.maxOpenHolds
	e := service.New(d)
	limits := opts.limits
	if limits == nil {
		limits = map[api.Tier]uint64{api.Relaxed: 10000, api.SemiRelaxed: 10000, api.Standard: 10000, api.Moderate: 10000, api.Strict: 10000}
	}
	a, err := api.New(e, api.Config{Limits: limits, PublicURL: "https://pay.example.test", Shape: opts.shape, TrustedProxies: opts.proxies})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(a.Handler())
	defer func() {
		if opts.shape == api.ShapeSecond {
			secondShape.Store(ts.URL, true) // checked against the second shape's document
		}
	}()
	if opts.tls {
		ts.EnableHTTP2 = true
		ts.StartTLS()
		clients.Store(ts.URL, ts.Client())
	} else {
		ts.Start()
	}
	t.Cleanup(func() {
		ts.Close()
		a.Close()
		// Its port may be the next server's: that one is not this one.
		secondShape.Delete(ts.URL)
		clients.Delete(ts.URL)
	})
	return ts, e
}
