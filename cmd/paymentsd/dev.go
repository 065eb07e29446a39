//go:build devstack

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/webhook"
)

// runDev runs the whole system on embedded defaults: Postgres, Temporal with
// its UI, the worker and the API, with a seeded sandbox project.
func runDev(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "pay" {
		return runDevPay(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "listen" {
		return runDevListen(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "verify-recipient" {
		return runDevVerifyRecipient(ctx, args[1:])
	}
	f, err := parseDevFlags(args)
	if err != nil {
		return err
	}
	started := time.Now()
	c, err := loadConfig()
	if err != nil {
		return err
	}
	stopDB, err := devDefaults(ctx, &c, f)
	if err != nil {
		return err
	}
	defer stopDB()
	temporalCfg := devstack.TemporalConfig{Namespace: c.Temporal.Namespace, Port: f.temporalPort, UIPort: f.uiPort}
	temporalData, err := devTemporalStore(&temporalCfg, f.temporalStore, f.dataDir, c.DatabaseURL)
	if err != nil {
		return err
	}
	tel, err := startTelemetry(ctx, "paymentsd-dev")
	if err != nil {
		return err
	}
	defer closeTelemetry(tel)
	// The API and the webhook receiver bind their ports once the stack
	// runs; the ports the stack's Temporal server picks are other ones.
	reservePorts(c.HTTPAddr, f.receiverAddr)
	stack, err := devstack.StartStack(ctx, devStackConfig(c, f, temporalCfg, tel))
	if err != nil {
		return err
	}
	defer stack.Close()
	chain, tsrv := stack.Chain, stack.Server

	svc := stack.Service(c.SessionLifetime)
	receiverURL := "http://" + f.receiverAddr + "/webhooks"
	state, err := seed(ctx, svc, f.dataDir, receiverURL, chain.URL)
	if err != nil {
		return err
	}
	bitcoinBanner := ""
	if stack.Bitcoin != nil {
		if bitcoinBanner, err = startDevBitcoin(ctx, stack, svc, c, f.dataDir, &state, f.bitcoinInterval); err != nil {
			return err
		}
	}
	go func() {
		if err := serveReceiver(ctx, f.receiverAddr, logReceiver(state.WebhookSecret)); err != nil {
			slog.Error("webhook receiver", "err", err)
		}
	}()
	// The API as `paymentsd api` serves it, over the stack. Its port is
	// taken before the banner says it is ready: what the banner prints
	// must work when pasted at once.
	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("the API's address: %w", err)
	}
	errc := make(chan error, 1)
	go func() {
		d := stack.Deps(c.SessionLifetime)
		d.MaxOpenHolds = c.MaxOpenHolds
		errc <- api.Run(ctx, api.Deps{Service: d, Config: apiConfig(c), Listener: ln, Telemetry: tel})
	}()

	xprvFile, relayerFile, err := writeSweepKeys(f.dataDir, state.DepositXprv, chain.Accounts[0].Key)
	if err != nil {
		return err
	}
	planID := state.PlanID
	fresh, err := svc.Checkout().CreateSession(ctx, nil, payment.SessionInput{PaymentPlanID: &planID})
	if err != nil {
		return fmt.Errorf("open a sample session: %w", err)
	}
	printDevReady(devReady{took: time.Since(started), c: c, state: state, chain: chain, temporal: tsrv, temporalData: temporalData,
		receiverURL: receiverURL, freshToken: fresh.Token, xprvFile: xprvFile, relayerFile: relayerFile, bitcoinBanner: bitcoinBanner,
		dataDir: f.dataDir})
	err = <-errc
	slog.Info("dev stack stopping")
	return err
}

// devFlags are `paymentsd dev`'s flags.
type devFlags struct {
	dataDir, temporalStore, receiverAddr, chainAddr string
	pgPort, temporalPort, uiPort                    int
	blockInterval, bitcoinInterval                  time.Duration
}

// parseDevFlags reads `paymentsd dev`'s flags.
func parseDevFlags(args []string) (devFlags, error) {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	dataDir := fs.String("data", devDataDir, "folder that keeps Postgres, Temporal and dev state across restarts")
	pgPort := fs.Int("postgres-port", devPostgresPort, "port of the private Postgres cluster")
	temporalPort := fs.Int("temporal-port", 7233, "port of the embedded Temporal server")
	uiPort := fs.Int("ui-port", 8233, "port of the Temporal UI")
	temporalStore := fs.String("temporal-persistence", env("TEMPORAL_PERSISTENCE", "sqlite"),
		"where the embedded Temporal server keeps its state: sqlite (temporal.db in the data folder) or postgres "+
			"(the databases <engine database>_temporal and <engine database>_temporal_visibility, beside the engine's)")
	receiverAddr := fs.String("receiver-addr", "127.0.0.1:8099", "address of the built-in webhook receiver")
	chainAddr := fs.String("chain-addr", "127.0.0.1:8545", "JSON-RPC address of the dev chain")
	blockInterval := fs.Duration("block-interval", 2*time.Second, "the dev chain's block interval")
	bitcoinInterval := fs.Duration("bitcoin-block-interval", 10*time.Second,
		"how often the Bitcoin node (btcd in regtest) mines a block; 0: no Bitcoin node")
	if err := fs.Parse(args); err != nil {
		return devFlags{}, err
	}
	return devFlags{dataDir: *dataDir, temporalStore: *temporalStore, receiverAddr: *receiverAddr, chainAddr: *chainAddr,
		pgPort: *pgPort, temporalPort: *temporalPort, uiPort: *uiPort, blockInterval: *blockInterval, bitcoinInterval: *bitcoinInterval}, nil
}

// devDefaults fills what c leaves to the dev stack: the database, a
// private Postgres cluster in the data folder (stop stops it), and the
// webhook signing key, kept in the data folder.
func devDefaults(ctx context.Context, c *config, f devFlags) (stop func(), err error) {
	stop = func() {}
	if c.DatabaseURL == "" {
		if c.DatabaseURL, stop, err = devDatabaseURL(ctx, f.dataDir, f.pgPort); err != nil {
			return func() {}, err
		}
	}
	if c.WebhookKeys == nil {
		key, err := devWebhookKey(filepath.Join(f.dataDir, "webhook.key"))
		if err != nil {
			stop()
			return func() {}, err
		}
		c.WebhookKeys = []webhook.Key{{ID: webhook.LegacyKeyID, Secret: key}}
	}
	return stop, nil
}

// devStackConfig is the dev stack's configuration: c's, with the dev
// chain and the Bitcoin node that f asks for.
func devStackConfig(c config, f devFlags, temporal devstack.TemporalConfig, tel *observability.Telemetry) devstack.StackConfig {
	var bitcoinNode *btcnode.Config
	if f.bitcoinInterval > 0 {
		// btcd is built on the first run (a minute), then from Go's cache.
		bitcoinNode = &btcnode.Config{Dir: filepath.Join(f.dataDir, "bitcoin")}
	}
	return devstack.StackConfig{
		DatabaseURL: c.DatabaseURL,
		Temporal:    temporal,
		Chain:       devchain.Config{Addr: f.chainAddr, BlockInterval: f.blockInterval},
		Devnet: chainwatch.Network{BlockTime: chainwatch.Duration(f.blockInterval), Confirmations: 3,
			PollInterval: chainwatch.Duration(f.blockInterval / 2)},
		Networks: c.Networks, Assets: c.Catalog.Assets, Bitcoin: bitcoinNode,
		BitcoinTune: chainwatch.Network{PollInterval: chainwatch.Duration(time.Second)},
		WebhookKeys: c.WebhookKeys, WebhookDisableAfter: c.WebhookDisableAfter,
		Logger: slogAdapter{}, Shape: c.Shape, Telemetry: tel,
	}
}

// reservePorts keeps the ports of addrs from the ports the stack picks.
func reservePorts(addrs ...string) {
	for _, addr := range addrs {
		if _, port, err := net.SplitHostPort(addr); err == nil {
			p, _ := strconv.Atoi(port)
			freeport.Reserve(p)
		}
	}
}

// devTemporalStore sets where the embedded Temporal server keeps its
// state (store: sqlite or postgres) and says it for the banner.
func devTemporalStore(cfg *devstack.TemporalConfig, store, dataDir, databaseURL string) (string, error) {
	var err error
	switch store {
	case "sqlite":
		cfg.DBFile = filepath.Join(dataDir, "temporal.db")
		return "SQLite, " + cfg.DBFile, nil
	case "postgres":
		if cfg.PostgresURL, err = devstack.TemporalDatabaseURL(databaseURL); err != nil {
			return "", err
		}
		return "Postgres, " + printableURL(cfg.PostgresURL) + " (and its " + devstack.VisibilitySuffix + ")", nil
	default:
		return "", fmt.Errorf("TEMPORAL_PERSISTENCE: want sqlite or postgres, not %q", store)
	}
}

// startDevBitcoin mines the stack's Bitcoin node every interval, seeds
// its plan, opens a sample session and writes the account's xprv for
// the sweep, and returns the banner's Bitcoin part.
func startDevBitcoin(ctx context.Context, stack *devstack.Stack, svc *service.Service, c config, dataDir string, state *devState,
	interval time.Duration) (string, error) {
	stack.Bitcoin.StartMining(ctx, interval)
	if err := seedBitcoin(ctx, svc, dataDir, state, stack.Bitcoin.URL()); err != nil {
		return "", err
	}
	planID := state.BitcoinPlanID
	cs, err := svc.Checkout().CreateSession(ctx, nil, payment.SessionInput{PaymentPlanID: &planID})
	if err != nil {
		return "", fmt.Errorf("open a sample bitcoin session: %w", err)
	}
	keyFile := filepath.Join(dataDir, "sweep-bitcoin.xprv")
	if err := os.WriteFile(keyFile, []byte(state.BitcoinXprv+"\n"), 0o600); err != nil {
		return "", err
	}
	return fmt.Sprintf(`
Bitcoin (btcd in regtest at %s, a block every %s):
  Bitcoin account key: %s (its private half: %s)
  A bitcoin session's page: %s/checkout/%s
  Pay it from the node's dev wallet: ./bin/paymentsd-dev dev pay %s
  Sweep the paid sessions' bitcoin to the dev wallet (prints the plan; add --execute to send):
    PAYMENTSD_API_KEY=%s ./bin/paymentsd-dev sweep --api http://%s --project %s --network %s --rpc %s \
      --to %s --key-file %s --fee-rate 2
`, stack.Bitcoin.RPCAddr, interval, state.BitcoinKey, state.BitcoinXprv, strings.TrimRight(c.PublicURL, "/"),
		cs.Token, cs.Token, state.SandboxKey, c.HTTPAddr, state.ProjectID, devstack.BitcoinNetwork, stack.Bitcoin.URL(),
		stack.Bitcoin.Wallet(), keyFile), nil
}

// devReady is what the banner of a ready dev stack shows.
type devReady struct {
	took     time.Duration
	c        config
	state    devState
	chain    *devchain.Chain
	temporal *devstack.Temporal
	// temporalData says where Temporal keeps its state; bitcoinBanner is
	// the Bitcoin node's part, empty without one.
	temporalData, bitcoinBanner      string
	receiverURL, freshToken, dataDir string
	xprvFile, relayerFile            string
}

// printDevReady prints the banner of a ready dev stack: where each part
// is, and commands to paste.
func printDevReady(r devReady) {
	c, state, chain, tsrv := r.c, r.state, r.chain, r.temporal
	base := "http://" + c.HTTPAddr
	fmt.Printf(`
paymentsd dev is ready (%.1fs)

  Dashboard:     %s/dashboard/
                 sign in as %s, password %s
  API:           %s/api/v1
  Connect:       %s/paymentsd.v1.PaymentsService/
  Temporal UI:   %s
  Temporal gRPC: %s (namespace %s)
  Temporal data: %s
  Postgres:      %s

  Dev chain:     %s (chain %s, USDC %s)
  Pay from:      %s (key 0x%x)

  Sandbox project: %s
  Sandbox API key: %s
  Sample plan:     %s
  Webhooks:        every event goes to the built-in receiver at %s, which logs it here
  Deposit key:     %s
    (its private half, to recover dev funds: %s)

Create a checkout session:
  curl -s -X POST %s/api/v1/checkout/sessions -H 'Content-Type: application/json' -d '{"paymentPlanId":"%s"}'

A fresh session's hosted checkout page:
  %s/checkout/%s

Pay it from a funded dev account (add --amount to pay part or more, --asset eth-devnet for ETH):
  ./bin/paymentsd-dev dev pay %s

List the project's transactions:
  curl -s %s/api/v1/projects/%s/transactions -H 'Authorization: Bearer %s'

Sign in as the project's owner (the session cookie works on every /api/v1 route):
  curl -s -c cookies.txt %s/api/v1/auth/login -H 'Content-Type: application/json' -d '{"email":"%s","password":"%s"}'
  curl -s -b cookies.txt %s/api/v1/projects/%s/api-keys

Sweep the paid sessions' funds to dev account 1 (prints the plan; add --execute to send):
  PAYMENTSD_API_KEY=%s ./bin/paymentsd-dev sweep --api %s --project %s --network devnet --rpc %s \
    --to %s --key-file %s --relayer-key-file %s

Verify dev account 1's address as the project's recipient (plans of API_SHAPE=second pay it):
  ./bin/paymentsd-dev dev verify-recipient 1

%s
Press Ctrl-C to stop; data stays in %s.
`, r.took.Seconds(), base, state.UserEmail, state.UserPassword, base, base, tsrv.UIURL, tsrv.Address, tsrv.Namespace, r.temporalData, printableURL(c.DatabaseURL),
		chain.URL, chain.ChainID, chain.Token, chain.Accounts[0].Address, crypto.FromECDSA(chain.Accounts[0].Key),
		state.ProjectID, state.SandboxKey, state.PlanID, r.receiverURL, state.DepositXpub, state.DepositXprv, base, state.PlanID,
		strings.TrimRight(c.PublicURL, "/"), r.freshToken, r.freshToken, base, state.ProjectID, state.SandboxKey,
		base, state.UserEmail, state.UserPassword, base, state.ProjectID,
		state.SandboxKey, base, state.ProjectID, chain.URL, chain.Accounts[1].Address, r.xprvFile, r.relayerFile, r.bitcoinBanner, r.dataDir)
}

// serveReceiver serves the built-in webhook receiver on addr until ctx ends.
func serveReceiver(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return api.Serve(ctx, ln, h)
}

// writeSweepKeys writes the files `paymentsd sweep` reads in the dev
// stack: the sandbox deposit key's xprv and, as the relayer, dev account
// 0's key. Only their owner may read them.
func writeSweepKeys(dataDir, xprv string, relayer *ecdsa.PrivateKey) (xprvFile, relayerFile string, err error) {
	xprvFile, relayerFile = filepath.Join(dataDir, "sweep-deposit.xprv"), filepath.Join(dataDir, "sweep-relayer.key")
	if err := os.WriteFile(xprvFile, []byte(xprv+"\n"), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(relayerFile, []byte(hex.EncodeToString(crypto.FromECDSA(relayer))+"\n"), 0o600); err != nil {
		return "", "", err
	}
	return xprvFile, relayerFile, nil
}

// devWebhookKey reads the dev stack's webhook sealing key, making it on
// the first run.
func devWebhookKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return webhook.ParseKey(string(b))
	}
	key := make([]byte, webhook.KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// seed creates the sandbox project and a sample plan on the first run and
// reads them back on later runs; it records this run's chain URL.
func seed(ctx context.Context, svc *service.Service, dataDir, receiverURL, chainURL string) (devState, error) {
	if s, err := readDevState(dataDir); err == nil {
		if _, err := svc.Checkout().GetProject(ctx, payment.Principal{ProjectID: s.ProjectID}, s.ProjectID); err == nil && s.DepositXpub != "" && s.WebhookSecret != "" {
			s.ChainURL = chainURL
			if s.UserEmail == "" { // a data folder from before accounts
				if err := seedUser(ctx, svc, &s); err != nil {
					return s, err
				}
			}
			return s, writeDevState(dataDir, s)
		}
	}
	var s devState
	p, err := svc.Checkout().CreateProject(ctx, "Dev shop")
	if err != nil {
		return s, err
	}
	seed := make([]byte, 32)
	if _, err := rand.Read(seed); err != nil {
		return s, err
	}
	xprv, xpub, err := keys.NewDevKey(seed)
	if err != nil {
		return s, err
	}
	if err := svc.Checkout().SetDepositKey(ctx, p.Project.ID, false, xpub); err != nil {
		return s, err
	}
	pr := payment.Principal{ProjectID: p.Project.ID, IsLive: false}
	title, amount, anyAsset := "Sample plan", "25.00", payment.PolicyAny
	plan, err := svc.Checkout().CreatePlan(ctx, pr, p.Project.ID, payment.PlanInput{Title: &title, AmountUSD: &amount,
		MerchantInfo:          &payment.MerchantInfo{Name: "Dev shop"},
		AcceptedAssetPolicies: []payment.PolicyInput{{PolicyType: &anyAsset, ChainScope: []string{"devnet"}}}})
	if err != nil {
		return s, err
	}
	url := receiverURL
	hook, err := svc.Webhooks().CreateWebhook(ctx, pr, p.Project.ID, payment.WebhookInput{URL: &url, EnabledEvents: []string{"*"}})
	if err != nil {
		return s, err
	}
	s = devState{ProjectID: p.Project.ID, SandboxKey: p.SandboxKey, LiveKey: p.LiveKey, PlanID: plan.ID,
		DepositXpub: xpub, DepositXprv: xprv, WebhookID: hook.ID, WebhookSecret: hook.Secret, ChainURL: chainURL}
	if err := seedUser(ctx, svc, &s); err != nil {
		return s, err
	}
	return s, writeDevState(dataDir, s)
}

// seedBitcoin gives the dev project a Bitcoin account key for its sandbox
// and a sample plan in bitcoin on the first run with a Bitcoin node, and
// records this run's node.
func seedBitcoin(ctx context.Context, svc *service.Service, dataDir string, s *devState, nodeURL string) error {
	s.BitcoinURL = nodeURL
	if s.BitcoinPlanID == "" {
		seed := make([]byte, 32)
		if _, err := rand.Read(seed); err != nil {
			return err
		}
		master, err := hdkeychain.NewMaster(seed, btcnode.Params)
		if err != nil {
			return err
		}
		pub, err := master.Neuter()
		if err != nil {
			return err
		}
		key, err := btckeys.ParseKey(pub.String(), btckeys.SegWit)
		if err != nil {
			return err
		}
		if err := svc.Checkout().SetBitcoinKey(ctx, s.ProjectID, false, key.Canonical(), ""); err != nil {
			return err
		}
		pr := payment.Principal{ProjectID: s.ProjectID, IsLive: false}
		title, amount, policy, asset := "Sample plan in bitcoin", "25.00", payment.PolicyAssetDefinition, devstack.BitcoinAsset
		plan, err := svc.Checkout().CreatePlan(ctx, pr, s.ProjectID, payment.PlanInput{Title: &title, AmountUSD: &amount,
			MerchantInfo:          &payment.MerchantInfo{Name: "Dev shop"},
			AcceptedAssetPolicies: []payment.PolicyInput{{PolicyType: &policy, AssetDefinitionID: &asset}}})
		if err != nil {
			return err
		}
		s.BitcoinKey, s.BitcoinXprv, s.BitcoinPlanID = key.Canonical(), master.String(), plan.ID
	}
	return writeDevState(dataDir, *s)
}

// seedUser makes the dev user, owner of the dev project, with a random
// password kept in the dev state.
func seedUser(ctx context.Context, svc *service.Service, s *devState) error {
	pw := make([]byte, 12)
	if _, err := rand.Read(pw); err != nil {
		return err
	}
	s.UserEmail, s.UserPassword = "dev@paymentsd.localhost", hex.EncodeToString(pw)
	u, err := svc.Identity().CreateUser(ctx, s.UserEmail, s.UserPassword)
	if err != nil {
		return fmt.Errorf("dev user: %w", err)
	}
	return svc.Access().AddOwner(ctx, s.ProjectID, u.ID)
}

// logReceiver is the dev stack's webhook receiver: it verifies each
// delivery's signature and logs the event.
func logReceiver(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err := webhook.Verify(r.Header, body, secret, 0, time.Now()); err != nil {
			slog.Warn("webhook refused", "err", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				ID      string `json:"id"`
				Status  string `json:"status"`
				Version int    `json:"version"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		fmt.Printf("webhook %-28s %s %s (%s, version %d)\n", ev.Type, ev.ID, ev.Data.ID, ev.Data.Status, ev.Data.Version)
		w.WriteHeader(http.StatusNoContent)
	})
}

// writeDevState saves a data folder's devState; it holds keys, so only its
// owner may read it.
func writeDevState(dataDir string, s devState) error {
	b, _ := json.MarshalIndent(s, "", "  ")
	return os.WriteFile(devStateFile(dataDir), b, 0o600)
}
