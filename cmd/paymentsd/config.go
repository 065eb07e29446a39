package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/redact"
	"github.com/paymentsd/paymentsd/internal/temporalconn"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/worker"
)

// config is the deployment's configuration, read from the environment.
type config struct {
	DatabaseURL string
	// DatabaseReadURL, when set, is a read replica the API's lists read
	// (DATABASE_READ_URL).
	DatabaseReadURL string
	// Temporal is where Temporal is and how it is reached (TEMPORAL_*:
	// address, namespace, TLS, mutual TLS, API key).
	Temporal temporalconn.Config
	HTTPAddr string
	// MetricsAddr is where the worker, and the API, serve /metrics and
	// /healthz (METRICS_ADDR). Empty: the worker serves none, and the API
	// serves /metrics on HTTPAddr (the dev stack's way; production sets it).
	MetricsAddr     string
	PublicURL       string
	SessionLifetime time.Duration
	Limits          map[api.Tier]uint64
	Catalog         payment.Catalog
	Networks        []chainwatch.Network
	// WebhookKeys seal webhook secrets at rest (WEBHOOK_SECRET_KEY: one
	// key of 32 bytes as base64 or hex, or during a rotation a list of
	// ID:key entries, newest first; see webhook.ParseKeys); without them
	// webhooks are off.
	WebhookKeys         []webhook.Key
	WebhookAllowPrivate bool
	WebhookDisableAfter time.Duration
	// RedisURL, when set, keeps the API's rate limits in Redis, one budget
	// shared by every API process (REDIS_URL).
	RedisURL string
	// TrustedProxies are the networks of the proxies in front of the API,
	// whose X-Forwarded-For names the client (TRUSTED_PROXIES).
	TrustedProxies []netip.Prefix
	// SignupDisabled switches POST /api/v1/auth/signup off
	// (SIGNUP_ENABLED=false).
	SignupDisabled bool
	// Shape is the API's shape (API_SHAPE: first, the default, or second).
	Shape api.Shape
	// ReauthWindow is how long a sign-in opens sensitive actions (sudo
	// mode, REAUTH_WINDOW, default 10m).
	ReauthWindow time.Duration
	// MaxOpenHolds bounds a plan's open holds on its shared recipient, and
	// the base units a customer is asked above the plan's amount
	// (RECIPIENT_MAX_OPEN_HOLDS, default payment.DefaultMaxOpenHolds).
	MaxOpenHolds int
	// WorkerStopTimeout is how long a stopping worker lets its running
	// activities finish (WORKER_STOP_TIMEOUT, default 30s); keep it below
	// the platform's grace period (Kubernetes: terminationGracePeriodSeconds).
	WorkerStopTimeout time.Duration
	// WorkerPromote makes a starting worker's version the worker
	// deployment's current one unless a later release's is
	// (WORKER_PROMOTE=auto, the default); manual leaves it to `paymentsd
	// admin worker-deployment --set-current`.
	WorkerPromote bool
	// WorkflowCacheSize bounds the workflows a worker process keeps in
	// memory between their tasks (WORKER_WORKFLOW_CACHE_SIZE, default
	// worker.DefaultWorkflowCacheSize).
	WorkflowCacheSize int
	// MaxInflight bounds the requests one API process serves at once
	// (MAX_INFLIGHT_REQUESTS, default api.DefaultMaxInflight).
	MaxInflight int
	// MoneyOutStaleAfter is how long a refund's or payout's reported
	// transaction may stay unmined before it is stale
	// (MONEY_OUT_STALE_AFTER, default 1h).
	MoneyOutStaleAfter time.Duration
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// secret reads a secret from the environment: NAME, or the file NAME_FILE
// names (a mounted Kubernetes or Docker secret), trimmed of the newline
// an editor leaves. Both set is an error, and so is a file others can read.
func secret(name string) (string, error) {
	v, path := os.Getenv(name), os.Getenv(name+"_FILE")
	if path == "" {
		return v, nil
	}
	if v != "" {
		return "", fmt.Errorf("%s and %s_FILE: give one or the other", name, name)
	}
	return readSecretFile(name+"_FILE", path)
}

// loadConfig reads the configuration from the environment, part by part;
// the first part wrong stops it.
func loadConfig() (config, error) {
	c := config{
		HTTPAddr:    env("HTTP_ADDR", "127.0.0.1:8080"),
		MetricsAddr: os.Getenv("METRICS_ADDR"),
		Limits:      map[api.Tier]uint64{},
	}
	c.PublicURL = env("PUBLIC_URL", "http://"+c.HTTPAddr)
	for _, load := range []func() error{c.loadConnections, c.loadLimits, c.loadAssets, c.loadWebhookKeys, c.loadSurface, c.loadTimeouts, c.loadNetworks} {
		if err := load(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// loadConnections reads the databases', Redis's and Temporal's
// connections, and keeps their secrets out of what is written.
func (c *config) loadConnections() error {
	var err error
	if c.DatabaseURL, err = secret("DATABASE_URL"); err != nil {
		return err
	}
	if c.DatabaseReadURL, err = secret("DATABASE_READ_URL"); err != nil {
		return err
	}
	if c.RedisURL, err = secret("REDIS_URL"); err != nil {
		return err
	}
	if c.Temporal, err = temporalconn.FromEnv(os.Getenv); err != nil {
		return err
	}
	// What is written from here on (logs, the error the process exits
	// with) reads none of these.
	for _, u := range []string{c.DatabaseURL, c.DatabaseReadURL, c.RedisURL} {
		redact.RegisterURL(u)
	}
	redact.Register(c.Temporal.APIKey)
	return nil
}

// loadLimits reads the session lifetime, the bounds on holds, requests
// in flight, cached workflows and request rates, and the proxies trusted
// to name the client.
func (c *config) loadLimits() error {
	var err error
	if c.SessionLifetime, err = time.ParseDuration(env("SESSION_LIFETIME", "30m")); err != nil || c.SessionLifetime < time.Minute {
		return fmt.Errorf("SESSION_LIFETIME: want a duration of at least 1m, such as 30m")
	}
	if c.MaxOpenHolds, err = strconv.Atoi(env("RECIPIENT_MAX_OPEN_HOLDS", strconv.Itoa(payment.DefaultMaxOpenHolds))); err != nil || c.MaxOpenHolds < 1 {
		return fmt.Errorf("RECIPIENT_MAX_OPEN_HOLDS: want a positive number of holds, such as %d", payment.DefaultMaxOpenHolds)
	}
	if c.MaxInflight, err = strconv.Atoi(env("MAX_INFLIGHT_REQUESTS", strconv.Itoa(api.DefaultMaxInflight))); err != nil ||
		c.MaxInflight < 1 || c.MaxInflight > 1_000_000 {
		return fmt.Errorf("MAX_INFLIGHT_REQUESTS: want a number of requests from 1 to 1000000, such as %d", api.DefaultMaxInflight)
	}
	if c.WorkflowCacheSize, err = strconv.Atoi(env("WORKER_WORKFLOW_CACHE_SIZE", strconv.Itoa(worker.DefaultWorkflowCacheSize))); err != nil ||
		c.WorkflowCacheSize < 1 || c.WorkflowCacheSize > 1_000_000 {
		return fmt.Errorf("WORKER_WORKFLOW_CACHE_SIZE: want a number of workflows from 1 to 1000000, such as %d", worker.DefaultWorkflowCacheSize)
	}
	for tier := range api.DefaultLimits {
		name := "RATE_LIMIT_" + upper(string(tier))
		if v := os.Getenv(name); v != "" {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n == 0 {
				return fmt.Errorf("%s: want a positive number of requests per minute", name)
			}
			c.Limits[tier] = n
		}
	}
	if c.TrustedProxies, err = parseTrustedProxies(os.Getenv("TRUSTED_PROXIES")); err != nil {
		return fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	return nil
}

// loadAssets reads the catalog of assets: ASSETS or ASSETS_FILE, else the
// defaults.
func (c *config) loadAssets() error {
	var err error
	c.Catalog = payment.Catalog{Assets: defaultAssets}
	assets := []byte(os.Getenv("ASSETS"))
	if path := os.Getenv("ASSETS_FILE"); path != "" {
		if assets, err = os.ReadFile(path); err != nil {
			return fmt.Errorf("ASSETS_FILE: %w", err)
		}
	}
	if len(assets) > 0 {
		c.Catalog.Assets = nil
		if err := json.Unmarshal(assets, &c.Catalog.Assets); err != nil {
			return fmt.Errorf("assets: %w", err)
		}
	}
	if err := checkAssets(c.Catalog.Assets); err != nil {
		return err
	}
	return nil
}

// loadWebhookKeys reads the keys that sign webhooks, keeping them out of
// what is written, and whether webhooks may go to private addresses.
func (c *config) loadWebhookKeys() error {
	webhookKey, err := secret("WEBHOOK_SECRET_KEY")
	if err != nil {
		return err
	}
	redact.Register(webhookKey)
	for _, entry := range strings.Split(webhookKey, ",") {
		if _, k, ok := strings.Cut(entry, ":"); ok {
			redact.Register(k)
		}
	}
	if k := webhookKey; k != "" {
		if c.WebhookKeys, err = webhook.ParseKeys(k); err != nil {
			return fmt.Errorf("WEBHOOK_SECRET_KEY: %w", err)
		}
	}
	c.WebhookAllowPrivate = os.Getenv("WEBHOOK_ALLOW_PRIVATE") == "true"
	return nil
}

// loadSurface reads whether sign-up is open and the API's shape.
func (c *config) loadSurface() error {
	var err error
	switch v := env("SIGNUP_ENABLED", "true"); v {
	case "true":
	case "false":
		c.SignupDisabled = true
	default:
		return fmt.Errorf("SIGNUP_ENABLED: want true or false, not %q", v)
	}
	if c.Shape, err = api.ParseShape(os.Getenv("API_SHAPE")); err != nil {
		return err
	}
	return nil
}

// loadTimeouts reads how long webhooks may fail before their endpoint is
// disabled, a sign-in opens sensitive actions, a worker has to stop and a
// refund's or payout's transaction may stay unmined.
func (c *config) loadTimeouts() error {
	var err error
	if c.WebhookDisableAfter, err = time.ParseDuration(env("WEBHOOK_DISABLE_AFTER", "120h")); err != nil || c.WebhookDisableAfter <= 0 {
		return fmt.Errorf("WEBHOOK_DISABLE_AFTER: want a duration such as 120h")
	}
	if c.ReauthWindow, err = time.ParseDuration(env("REAUTH_WINDOW", "10m")); err != nil || c.ReauthWindow < time.Minute || c.ReauthWindow > 12*time.Hour {
		return fmt.Errorf("REAUTH_WINDOW: want a duration from 1m to 12h, such as 10m")
	}
	switch v := env("WORKER_PROMOTE", "auto"); v {
	case "auto":
		c.WorkerPromote = true
	case "manual":
	default:
		return fmt.Errorf("WORKER_PROMOTE: want auto or manual, not %q", v)
	}
	if c.WorkerStopTimeout, err = time.ParseDuration(env("WORKER_STOP_TIMEOUT", "30s")); err != nil || c.WorkerStopTimeout < 0 || c.WorkerStopTimeout > 10*time.Minute {
		return fmt.Errorf("WORKER_STOP_TIMEOUT: want a duration from 0s to 10m, such as 30s")
	}
	if c.MoneyOutStaleAfter, err = time.ParseDuration(env("MONEY_OUT_STALE_AFTER", "1h")); err != nil ||
		c.MoneyOutStaleAfter < time.Minute || c.MoneyOutStaleAfter > 7*24*time.Hour {
		return fmt.Errorf("MONEY_OUT_STALE_AFTER: want a duration from 1m to 168h, such as 1h")
	}
	return nil
}

// loadNetworks reads the networks (NETWORKS or NETWORKS_FILE) and checks
// each.
func (c *config) loadNetworks() error {
	var err error
	networks := []byte(os.Getenv("NETWORKS"))
	if path := os.Getenv("NETWORKS_FILE"); path != "" {
		if networks, err = os.ReadFile(path); err != nil {
			return fmt.Errorf("NETWORKS_FILE: %w", err)
		}
	}
	if len(networks) > 0 {
		if err := json.Unmarshal(networks, &c.Networks); err != nil {
			return fmt.Errorf("networks: %w", err)
		}
		for _, n := range c.Networks {
			for _, u := range n.RPCURLs {
				redact.RegisterURL(u)
			}
			if err := n.Check(); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseTrustedProxies reads a comma-separated list of networks (CIDRs
// such as 10.0.0.0/8 or fd00::/8) or single addresses.
func parseTrustedProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			addr, addrErr := netip.ParseAddr(s)
			if addrErr != nil {
				return nil, fmt.Errorf("%q is not a network such as 10.0.0.0/8 or an address", s)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		// Clients' IPv4-mapped IPv6 addresses are read as IPv4, so a
		// network written that way is too.
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

var (
	addressPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	assetIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
)

// checkAssets refuses a catalog with a mistake in it, naming the asset.
func checkAssets(assets []payment.Asset) error {
	seen := map[string]bool{}
	for i, a := range assets {
		where := fmt.Sprintf("asset %d (%q)", i, a.ID)
		switch {
		case !assetIDPattern.MatchString(a.ID):
			return fmt.Errorf("%s: id must be lowercase letters, digits and dashes", where)
		case seen[a.ID]:
			return fmt.Errorf("%s: id is listed twice", where)
		case a.Symbol == "" || a.Network == "" || a.ChainID < 0:
			return fmt.Errorf("%s: symbol, network and chainId are required (chainId 0 for bitcoin)", where)
		case a.Decimals < 0 || a.Decimals > 36:
			return fmt.Errorf("%s: decimals must be 0 to 36", where)
		case a.TokenAddress != "" && !addressPattern.MatchString(a.TokenAddress):
			return fmt.Errorf("%s: tokenAddress must be a 0x-prefixed 20-byte hex address or empty for the native coin", where)
		case a.Price.Kind != payment.PriceUSDPegged && a.Price.Kind != payment.PriceChainlink:
			return fmt.Errorf("%s: priceSource.kind must be usd_pegged or chainlink", where)
		case a.Price.Kind == payment.PriceChainlink && !addressPattern.MatchString(a.Price.Aggregator):
			return fmt.Errorf("%s: priceSource.aggregator must be the aggregator's address", where)
		case a.Price.Network != "" && a.Price.Kind != payment.PriceChainlink:
			return fmt.Errorf("%s: priceSource.network names where a chainlink aggregator is read; kind %s has none", where, a.Price.Kind)
		case a.Price.HeartbeatSeconds < 0:
			return fmt.Errorf("%s: priceSource.heartbeatSeconds must not be negative", where)
		}
		seen[a.ID] = true
	}
	return nil
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// defaultAssets is the catalog used when no ASSETS_FILE is given: USDC and
// ETH on well-known mainnets (live) and testnets (sandbox).
var defaultAssets = []payment.Asset{
	{ID: "usdc-base", Symbol: "USDC", Name: "USD Coin", Decimals: 6, Network: "base", ChainID: 8453,
		TokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", IsLive: true, Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
	{ID: "usdc-ethereum", Symbol: "USDC", Name: "USD Coin", Decimals: 6, Network: "ethereum", ChainID: 1,
		TokenAddress: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", IsLive: true, Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
	{ID: "eth-ethereum", Symbol: "ETH", Name: "Ether", Decimals: 18, Network: "ethereum", ChainID: 1, IsLive: true,
		Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419"}},
	{ID: "usdc-base-sepolia", Symbol: "USDC", Name: "USD Coin (testnet)", Decimals: 6, Network: "base-sepolia", ChainID: 84532,
		TokenAddress: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
	{ID: "usdc-sepolia", Symbol: "USDC", Name: "USD Coin (testnet)", Decimals: 6, Network: "sepolia", ChainID: 11155111,
		TokenAddress: "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
}
