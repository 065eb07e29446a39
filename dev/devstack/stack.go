package devstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/sessionstart"
	"github.com/paymentsd/paymentsd/internal/views"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/worker"
)

// StackConfig configures a Stack. DatabaseURL is required; the rest has
// usable zero values.
type StackConfig struct {
	// DatabaseURL is the engine's database; Start migrates it.
	DatabaseURL string
	Temporal    TemporalConfig
	Chain       devchain.Config
	// Devnet tunes the dev chain's network (confirmations, block time,
	// poll interval, pending timeout); its key and chain ID come from the
	// chain.
	Devnet chainwatch.Network
	// DevnetURL, when set, is the URL the engine reads the dev chain at,
	// given the chain's own (a proxy in front of it, for tests).
	DevnetURL func(chainURL string) string
	// Networks and Assets are watched and accepted besides the dev chain
	// and its assets.
	Networks []chainwatch.Network
	Assets   []payment.Asset
	// WebhookKey seals webhook secrets; zero makes one. WebhookKeys,
	// when set, are used instead: a key rotation's keys, newest first.
	WebhookKey          []byte
	WebhookKeys         []webhook.Key
	WebhookDisableAfter time.Duration
	// Logger is the Temporal client's logger.
	Logger sdklog.Logger
	// WebhookClient, when set, delivers webhooks in place of the dev
	// stack's own, which reaches loopback (where its receivers live).
	WebhookClient *http.Client
	// Shape is the API's shape, which webhook payloads follow.
	Shape views.Shape
}

// Stack is the whole engine on embedded parts: a database, a Temporal
// server, the dev chain, and a worker with the engine's scanners and
// webhook dispatcher running. `paymentsd dev` and the end-to-end tests
// assemble the system through it, so both run the same thing.
type Stack struct {
	Store    *store.Store
	Server   *Temporal
	Temporal client.Client
	Chain    *devchain.Chain
	Chains   chainwatch.Chains
	Catalog  payment.Catalog
	Sealer   *webhook.Sealer
	// Worker is the running worker; StartWorker replaces it.
	Worker sdkworker.Worker

	activities *activities.Activities
	closers    []func()
}

// DevAssets are the dev chain's assets: its USDC, and its native coin
// priced by its feed.
func DevAssets(c *devchain.Chain) []payment.Asset {
	return []payment.Asset{
		{ID: "usdc-devnet", Symbol: "USDC", Name: "Dev USD Coin", Decimals: devchain.USDCDecimals, Network: "devnet",
			ChainID: c.ChainID.Int64(), TokenAddress: c.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		// The dev feed is set once, at the chain's start.
		{ID: "eth-devnet", Symbol: "ETH", Name: "Dev Ether", Decimals: 18, Network: "devnet", ChainID: c.ChainID.Int64(),
			Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: c.PriceFeed.Hex(), HeartbeatSeconds: 365 * 24 * 3600}},
	}
}

// StartStack starts every part and the worker. Close stops them.
func StartStack(ctx context.Context, cfg StackConfig) (s *Stack, err error) {
	if cfg.DatabaseURL == "" {
		return nil, errors.New("devstack: no database URL")
	}
	s = &Stack{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := store.Migrate(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	if s.Store, err = store.Open(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.Store.Close)
	if s.Chain, err = devchain.Start(ctx, cfg.Chain); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = s.Chain.Close() })
	s.Catalog = payment.Catalog{Assets: append(append([]payment.Asset{}, cfg.Assets...), DevAssets(s.Chain)...)}
	devnet := cfg.Devnet
	devnet.Key, devnet.ChainID = "devnet", s.Chain.ChainID.Int64()
	devnet.TraceInternalTransfers = true // the dev chain serves debug_trace*
	if cfg.DevnetURL == nil {
		devnet.RPCURLs = []string{s.Chain.URL}
	} else {
		devnet.RPCURLs = []string{cfg.DevnetURL(s.Chain.URL)}
	}
	if s.Chains, err = chainwatch.Connect(ctx, append(append([]chainwatch.Network{}, cfg.Networks...), devnet), s.Catalog, nil); err != nil {
		return nil, err
	}
	if s.Server, err = StartTemporal(cfg.Temporal); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.Server.Stop)
	if s.Temporal, err = client.DialContext(ctx, client.Options{HostPort: s.Server.Address, Namespace: s.Server.Namespace,
		Logger: cfg.Logger}); err != nil {
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	s.closers = append(s.closers, s.Temporal.Close)
	keys := cfg.WebhookKeys
	if keys == nil {
		key := cfg.WebhookKey
		if key == nil {
			key = make([]byte, webhook.KeySize)
		}
		keys = []webhook.Key{{ID: webhook.LegacyKeyID, Secret: key}}
	}
	if s.Sealer, err = webhook.NewKeyring(keys); err != nil {
		return nil, err
	}
	hooks := cfg.WebhookClient
	if hooks == nil {
		// The dev stack's receivers live on loopback.
		hooks = webhook.NewClient(webhook.ClientOptions{AllowPrivate: true})
	}
	s.activities = &activities.Activities{Store: s.Store, Chains: s.Chains, Webhooks: activities.Webhooks{
		Temporal: s.Temporal, Sealer: s.Sealer, DisableAfter: cfg.WebhookDisableAfter, Client: hooks, Shape: cfg.Shape}}
	if err := s.StartWorker(); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { s.Worker.Stop() })
	networks := make([]string, 0, len(s.Chains))
	for k := range s.Chains {
		networks = append(networks, k)
	}
	if err := worker.StartScanners(ctx, s.Temporal, networks); err != nil {
		return nil, err
	}
	if err := worker.StartDispatcher(ctx, s.Temporal); err != nil {
		return nil, err
	}
	sweep, stopSweep := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		sessionstart.New(s.Store, s.Temporal).RunSweeper(sweep, time.Second)
	}()
	s.closers = append(s.closers, func() { stopSweep(); <-swept })
	return s, nil
}

// StartWorker starts a new worker (after the running one was stopped, to
// test a restart).
func (s *Stack) StartWorker() error {
	s.Worker = worker.New(s.Temporal, s.activities)
	if err := s.Worker.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	return nil
}

// Deps are the service's dependencies over the stack; sessionLifetime zero
// is the service's default.
func (s *Stack) Deps(sessionLifetime time.Duration) service.Deps {
	return service.Deps{Store: s.Store, Temporal: s.Temporal, Catalog: s.Catalog, Chains: s.Chains, Sealer: s.Sealer,
		SessionLifetime: sessionLifetime}
}

// Service is the service over the stack.
func (s *Stack) Service(sessionLifetime time.Duration) *service.Service {
	return service.New(s.Deps(sessionLifetime))
}

// Close stops every part, the last started first.
func (s *Stack) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}
