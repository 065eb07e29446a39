package devstack

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/version"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/worker"
	"github.com/paymentsd/paymentsd/workflows"
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
	// Bitcoin, when set, starts a Bitcoin node in regtest beside the dev
	// chain (btcnode), served as the network BitcoinNetwork with the
	// asset BitcoinAsset, priced by a BTC/USD feed on the dev chain.
	Bitcoin *btcnode.Config
	// BitcoinTune tunes the Bitcoin network's settings (poll interval,
	// block time); its key, kind, chain and node come from the stack.
	BitcoinTune chainwatch.Network
	// BitcoinURL, when set, is the URL the engine reads the Bitcoin node
	// at, given the node's own (a proxy in front of it, for tests).
	BitcoinURL func(nodeURL string) string
	// Networks and Assets are watched and accepted besides the dev chain
	// and its assets.
	Networks []chainwatch.Network
	Assets   []payment.Asset
	// WebhookKey seals webhook secrets; zero makes one. WebhookKeys,
	// when set, are used instead: a key rotation's keys, newest first.
	WebhookKey          []byte
	WebhookKeys         []webhook.Key
	WebhookDisableAfter time.Duration
	// MoneyOutStaleAfter is how long a refund's or payout's transaction
	// may stay unmined before it is stale (worker.Deps.StaleAfter).
	MoneyOutStaleAfter time.Duration
	// Logger is the Temporal client's logger.
	Logger sdklog.Logger
	// WebhookClient, when set, delivers webhooks in place of the dev
	// stack's own, which reaches loopback (where its receivers live).
	WebhookClient *http.Client
	// Shape is the API's shape, which webhook payloads follow.
	Shape views.Shape
	// Telemetry is the Temporal client's metrics and traces; nil: the
	// SDK's metrics alone, on /metrics as in production.
	Telemetry *observability.Telemetry
}

// Stack is the whole engine on embedded parts: a database, a Temporal
// server, the dev chain, and a worker with the engine's chainwatch workflows and
// webhook dispatcher running. `paymentsd dev` and the end-to-end tests
// assemble the system through it, so both run the same thing.
type Stack struct {
	Store    *store.Store
	Server   *Temporal
	Temporal client.Client
	Chain    *devchain.Chain
	// Bitcoin is the Bitcoin node, when StackConfig.Bitcoin asked for one.
	Bitcoin *btcnode.Node
	Chains  chainwatch.Chains
	Catalog payment.Catalog
	Sealer  *webhook.Sealer
	// Worker is the running worker (with the chainwatch workflows' and the
	// dispatcher's starts and the sweeper of session starts); StartWorker
	// replaces it.
	Worker *worker.Running

	worker  worker.Deps
	closers []func()
}

// DevBuildID is the dev stack's worker's build ID: one for every build of
// the release, so the executions a `make dev` started go on on the code of
// its next start (as they did before the engine used Worker Versioning;
// a change that breaks their replay shows then), instead of waiting,
// pinned, for a build that is gone.
func DevBuildID() string { return workflows.BuildID(version.Version, "dev") }

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

// StartStack starts every part and the worker. Close stops them. On an
// error what was started is stopped, and the error says what failed.
func StartStack(ctx context.Context, cfg StackConfig) (_ *Stack, err error) {
	if cfg.DatabaseURL == "" {
		return nil, errors.New("devstack: no database URL")
	}
	s := &Stack{}
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
	networks := append(append([]chainwatch.Network{}, cfg.Networks...), devnet(cfg, s.Chain))
	if cfg.Bitcoin != nil {
		n, asset, err := s.startBitcoin(ctx, cfg)
		if err != nil {
			return nil, err
		}
		networks = append(networks, n)
		s.Catalog.Assets = append(s.Catalog.Assets, asset)
	}
	if s.Chains, err = chainwatch.Connect(ctx, networks, s.Catalog, nil); err != nil {
		return nil, err
	}
	if s.Server, err = StartTemporal(cfg.Temporal); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.Server.Stop)
	tel := cfg.Telemetry
	if tel == nil {
		if tel, err = observability.Metrics(); err != nil {
			return nil, err
		}
	}
	// The client reports the SDK's series on /metrics, as production's do.
	if s.Temporal, err = client.DialContext(ctx, tel.Temporal(client.Options{HostPort: s.Server.Address,
		Namespace: s.Server.Namespace, Logger: cfg.Logger})); err != nil {
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	s.closers = append(s.closers, s.Temporal.Close)
	if s.Sealer, err = webhook.NewKeyring(webhookKeys(cfg)); err != nil {
		return nil, err
	}
	// The embedded server has the search attributes already (Namespace
	// is left empty). The dev stack's receivers live on loopback
	// (AllowPrivate, unless the caller delivers with its own client).
	s.worker = worker.Deps{Store: s.Store, Temporal: s.Temporal, Chains: s.Chains, Webhooks: worker.Webhooks{
		Sealer: s.Sealer, Client: cfg.WebhookClient, AllowPrivate: true, DisableAfter: cfg.WebhookDisableAfter, Shape: cfg.Shape},
		StaleAfter: cfg.MoneyOutStaleAfter, BuildID: DevBuildID(), Promote: true}
	if err := s.StartWorker(); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { s.Worker.Stop() })
	return s, nil
}

// The dev stack's Bitcoin network and asset.
const (
	BitcoinNetwork = "bitcoin-regtest"
	BitcoinAsset   = "btc-regtest"
)

// DevBTCPrice is the dev BTC/USD feed's answer: 100,000 USD (8 decimals).
var DevBTCPrice = big.NewInt(100_000_00000000)

// startBitcoin starts the Bitcoin node and a BTC/USD feed on the dev
// chain, and returns the node's network and bitcoin's asset.
func (s *Stack) startBitcoin(ctx context.Context, cfg StackConfig) (chainwatch.Network, payment.Asset, error) {
	node, err := btcnode.Start(ctx, *cfg.Bitcoin)
	if err != nil {
		return chainwatch.Network{}, payment.Asset{}, fmt.Errorf("bitcoin node: %w", err)
	}
	s.Bitcoin = node
	s.closers = append(s.closers, node.Stop)
	feed, err := s.Chain.DeployPriceFeed(ctx, "BTC / USD", DevBTCPrice)
	if err != nil {
		return chainwatch.Network{}, payment.Asset{}, err
	}
	n := cfg.BitcoinTune
	n.Key, n.Kind, n.Chain, n.RPCURLs = BitcoinNetwork, chainwatch.KindBitcoin, "regtest", []string{node.URL()}
	if cfg.BitcoinURL != nil {
		n.RPCURLs = []string{cfg.BitcoinURL(node.URL())}
	}
	asset := payment.Asset{ID: BitcoinAsset, Symbol: "BTC", Name: "Bitcoin (regtest)", Decimals: 8, Network: BitcoinNetwork,
		Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: feed.Hex(), Network: "devnet",
			HeartbeatSeconds: 365 * 24 * 3600}}
	return n, asset, nil
}

// devnet is the dev chain's network: cfg.Devnet's settings, the chain's
// key and ID, at the chain's URL or cfg.DevnetURL's.
func devnet(cfg StackConfig, chain *devchain.Chain) chainwatch.Network {
	n := cfg.Devnet
	n.Key, n.ChainID = "devnet", chain.ChainID.Int64()
	n.TraceInternalTransfers = true // the dev chain serves debug_trace*
	if cfg.DevnetURL == nil {
		n.RPCURLs = []string{chain.URL}
	} else {
		n.RPCURLs = []string{cfg.DevnetURL(chain.URL)}
	}
	return n
}

// webhookKeys are the keys that seal webhook secrets: cfg's, or a zero key.
func webhookKeys(cfg StackConfig) []webhook.Key {
	if cfg.WebhookKeys != nil {
		return cfg.WebhookKeys
	}
	key := cfg.WebhookKey
	if key == nil {
		key = make([]byte, webhook.KeySize)
	}
	return []webhook.Key{{ID: webhook.LegacyKeyID, Secret: key}}
}

// StartWorker starts the worker again (after Worker.Stop, to test a
// restart): worker.Start, as `paymentsd worker` runs it.
func (s *Stack) StartWorker() error {
	w, err := worker.Start(context.Background(), s.worker)
	if err != nil {
		return err
	}
	s.Worker = w
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

// Close stops every part that was started, the last started first.
func (s *Stack) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}
