package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/tests/rpcproxy"
)

const (
	network   = "devnet"
	assetUSDC = "usdc-devnet"
	assetETH  = "eth-devnet"
	// The Bitcoin node's network and bitcoin, priced by a BTC/USD feed on
	// the dev chain.
	btcNetwork = devstack.BitcoinNetwork
	assetBTC   = devstack.BitcoinAsset
	// longLifetime outlives any run: only the short sessions expire in it.
	longLifetime = 6 * time.Hour
)

// stack is everything a run needs: a database, the dev chain behind the
// flaky proxy, Temporal, the worker process and two API servers (one
// opening long sessions, one short ones), with a sandbox project and a plan.
type stack struct {
	dir       string
	dbURL     string
	db        *pgxpool.Pool
	chain     *devchain.Chain
	multisend common.Address
	proxy     *rpcproxy.Proxy
	temporal  *temporalProcess
	// temporalProxy is between the worker and Temporal (worker-cut); pg
	// the run's own PostgreSQL cluster (postgres-restart). Nil without
	// those faults.
	temporalProxy *tcpProxy
	pg            *privatePostgres
	tc            client.Client
	worker        *workerProcess
	longAPI       string
	shortAPI      string
	projectID     string
	key           string
	planID        string
	api           apiClient
	// owner signs in to approve payout batches: an owner of the project.
	owner, ownerPassword, ownerID string

	// btc is the Bitcoin network (when a Bitcoin class runs): a node
	// mined every BitcoinInterval, whose wallet the payers spend;
	// btcEngine the merchant's node, its peer, which the engine reads.
	// btcPlanID is the plan that accepts bitcoin alone.
	btc, btcEngine *btcnode.Node
	btcPlanID      string
	// second is another project (made-up-hashes), nil without it.
	second *secondProject
	// btcMu is held for writing by whoever changes the network's chain
	// (the miner, a reorg), and for reading by a payer while it sends, and
	// between a payment and its replacement, which no block must mine.
	btcMu sync.RWMutex

	closers []func()
}

func (s *stack) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func (s *stack) onClose(f func()) { s.closers = append(s.closers, f) }

// startStack starts the stack; on error it closes what it started.
func startStack(ctx context.Context, o Options, logf func(string, ...any)) (_ *stack, err error) {
	s := &stack{dir: o.Dir, api: apiClient{http: &http.Client{Timeout: 60 * time.Second}, retries: new(atomic.Int64)}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	bin := o.Paymentsd
	if bin == "" {
		bin = filepath.Join(s.dir, "paymentsd")
		logf("building the production binary (go build ./cmd/paymentsd)")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/paymentsd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build paymentsd (run from the repository root, or pass -paymentsd): %w", err)
		}
	}

	url, err := s.database(ctx, o)
	if err != nil {
		return nil, err
	}
	s.dbURL = url
	if s.db, err = pgxpool.New(ctx, url); err != nil {
		return nil, err
	}
	s.onClose(s.db.Close)

	accounts := o.Concurrency
	if o.has(FaultMadeUpHashes) {
		accounts++ // the second project's treasury, which pays no scenario
	}
	if s.chain, err = devchain.Start(ctx, devchain.Config{BlockInterval: o.BlockInterval, Accounts: accounts}); err != nil {
		return nil, err
	}
	s.onClose(func() { _ = s.chain.Close() })
	if err := s.deployMultisend(ctx); err != nil {
		return nil, err
	}
	if s.proxy, err = rpcproxy.Start(s.chain.URL, "", o.Seed); err != nil {
		return nil, err
	}
	s.onClose(func() { _ = s.proxy.Close() })

	if s.temporal, err = startTemporal(ctx, filepath.Join(s.dir, "temporal.db"), filepath.Join(s.dir, "temporal.log")); err != nil {
		return nil, err
	}
	s.onClose(s.temporal.Stop)
	// The worker reaches Temporal through a proxy of its own, which
	// worker-cut cuts; the API and the run dial the frontend themselves.
	workerTemporal := s.temporal.Address
	if o.has(FaultWorkerCut) {
		if s.temporalProxy, err = startTCPProxy(s.temporal.Address); err != nil {
			return nil, err
		}
		s.onClose(s.temporalProxy.Close)
		workerTemporal = s.temporalProxy.Addr
	}
	if s.tc, err = client.Dial(client.Options{HostPort: s.temporal.Address, Namespace: s.temporal.Namespace, Logger: quietLogger{}}); err != nil {
		return nil, err
	}
	s.onClose(s.tc.Close)

	catalog := payment.Catalog{Assets: []payment.Asset{
		{ID: assetUSDC, Symbol: "USDC", Name: "Dev USD Coin", Decimals: devchain.USDCDecimals, Network: network,
			ChainID: s.chain.ChainID.Int64(), TokenAddress: s.chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		{ID: assetETH, Symbol: "ETH", Name: "Dev Ether", Decimals: 18, Network: network, ChainID: s.chain.ChainID.Int64(),
			Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: s.chain.PriceFeed.Hex()}},
	}}
	devnetAt := func(url string) chainwatch.Network {
		return chainwatch.Network{Key: network, ChainID: s.chain.ChainID.Int64(), RPCURLs: []string{url},
			BlockTime: chainwatch.Duration(o.BlockInterval), Confirmations: o.Confirmations,
			PollInterval: chainwatch.Duration(o.BlockInterval / 2), PendingTimeout: chainwatch.Duration(o.PendingTimeout)}
	}
	var bitcoin []chainwatch.Network
	if o.bitcoin() {
		n, asset, err := s.startBitcoin(ctx, o)
		if err != nil {
			return nil, err
		}
		bitcoin = []chainwatch.Network{n}
		catalog.Assets = append(catalog.Assets, asset)
	}

	// The API runs in this process and reads the chain directly: the faults
	// are aimed at the worker, which follows the payments.
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	s.onClose(st.Close)
	chains, err := chainwatch.Connect(ctx, append([]chainwatch.Network{devnetAt(s.chain.URL)}, bitcoin...), catalog, nil)
	if err != nil {
		return nil, err
	}
	limits := map[api.Tier]uint64{api.Relaxed: 1e6, api.SemiRelaxed: 1e6, api.Standard: 1e6, api.Moderate: 1e6, api.Strict: 1e6}
	// Each API is served as `paymentsd api` serves it (api.Run), on a
	// loopback port of its own.
	serve := func(lifetime time.Duration) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		served, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := api.Run(served, api.Deps{Listener: ln, Config: api.Config{Limits: limits, PublicURL: "http://127.0.0.1"},
				Service: service.Deps{Store: st, Temporal: s.tc, Catalog: catalog, Chains: chains, SessionLifetime: lifetime}}); err != nil {
				logf("api on %s: %v", ln.Addr(), err)
			}
		}()
		s.onClose(func() { stop(); <-done })
		return "http://" + ln.Addr().String(), nil
	}
	if s.longAPI, err = serve(longLifetime); err != nil {
		return nil, err
	}
	if s.shortAPI, err = serve(o.ShortLifetime); err != nil {
		return nil, err
	}
	e := service.New(service.Deps{Store: st, Temporal: s.tc, Catalog: catalog, Chains: chains, SessionLifetime: longLifetime})
	if err := s.setUpProject(ctx, e, o.Seed); err != nil {
		return nil, err
	}
	if o.has(FaultMadeUpHashes) {
		if err := s.setUpSecondProject(ctx, e, o.Seed); err != nil {
			return nil, err
		}
	}

	networks, _ := json.Marshal(append([]chainwatch.Network{devnetAt(s.proxy.URL)}, bitcoin...))
	assets, _ := json.Marshal(catalog.Assets)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"DATABASE_URL=" + url, "TEMPORAL_ADDRESS=" + workerTemporal, "TEMPORAL_NAMESPACE=" + s.temporal.Namespace,
		"NETWORKS=" + string(networks), "ASSETS=" + string(assets)}
	if o.has(FaultStuckTx) {
		env = append(env, "MONEY_OUT_STALE_AFTER="+o.StaleAfter.String())
	}
	if s.worker, err = startWorker(bin, env, filepath.Join(s.dir, "worker.log")); err != nil {
		return nil, err
	}
	s.onClose(s.worker.Stop)
	if err := s.waitScanning(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	if s.btc != nil {
		mining, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.mineBitcoin(mining, o.BitcoinInterval) }()
		s.onClose(func() { stop(); <-done })
	}
	return s, nil
}

// database makes the run's database: on a PostgreSQL cluster of the
// run's own under postgres-restart, which restarts it, else a fresh
// database on the tests' server (store/storetest).
func (s *stack) database(ctx context.Context, o Options) (string, error) {
	if !o.has(FaultPostgresRestart) {
		url, drop, err := storetest.CreateDB()
		if err != nil {
			return "", err
		}
		s.onClose(drop)
		return url, nil
	}
	pg, url, err := startPrivatePostgres(ctx, filepath.Join(s.dir, "postgres"))
	if err != nil {
		return "", fmt.Errorf("the run's PostgreSQL cluster: %w", err)
	}
	s.pg = pg
	s.onClose(pg.Close)
	return url, nil
}

// startBitcoin starts the Bitcoin network's node, each payment of its
// wallet spending a coin of its own, the merchant's node that follows it,
// and a BTC/USD feed on the dev chain, and returns the merchant node's
// network, final by a speed policy (BitcoinFinality confirmations under
// 100 USD, one more above), and bitcoin's asset.
func (s *stack) startBitcoin(ctx context.Context, o Options) (chainwatch.Network, payment.Asset, error) {
	tmp, err := os.MkdirTemp("", "chaos-btcd-") // the binary, not kept with the run's logs
	if err != nil {
		return chainwatch.Network{}, payment.Asset{}, err
	}
	s.onClose(func() { os.RemoveAll(tmp) })
	bin, err := btcnode.Build(ctx, tmp)
	if err != nil {
		return chainwatch.Network{}, payment.Asset{}, err
	}
	if s.btc, err = btcnode.Start(ctx, btcnode.Config{Dir: filepath.Join(s.dir, "btcd-network"), Binary: bin, Independent: true}); err != nil {
		return chainwatch.Network{}, payment.Asset{}, fmt.Errorf("bitcoin node: %w", err)
	}
	s.onClose(s.btc.Stop)
	if s.btcEngine, err = btcnode.Start(ctx, btcnode.Config{Dir: filepath.Join(s.dir, "btcd-merchant"), Binary: bin,
		Peer: s.btc.P2PAddr()}); err != nil {
		return chainwatch.Network{}, payment.Asset{}, fmt.Errorf("the merchant's bitcoin node: %w", err)
	}
	s.onClose(s.btcEngine.Stop)
	if err := s.btcEngine.WaitSynced(ctx, s.btc, time.Minute); err != nil {
		return chainwatch.Network{}, payment.Asset{}, err
	}
	feed, err := s.chain.DeployPriceFeed(ctx, "BTC / USD", devstack.DevBTCPrice)
	if err != nil {
		return chainwatch.Network{}, payment.Asset{}, err
	}
	hundred := decimal.NewFromInt(100)
	n := chainwatch.Network{Key: btcNetwork, Kind: chainwatch.KindBitcoin, Chain: "regtest", RPCURLs: []string{s.btcEngine.URL()},
		Finality:  []chainwatch.Tier{{BelowUSD: &hundred, Confirmations: o.BitcoinFinality}, {Confirmations: o.BitcoinFinality + 1}},
		BlockTime: chainwatch.Duration(o.BitcoinInterval), PollInterval: chainwatch.Duration(time.Second),
		PendingTimeout: chainwatch.Duration(o.PendingTimeout)}
	asset := payment.Asset{ID: assetBTC, Symbol: "BTC", Name: "Bitcoin (regtest)", Decimals: 8, Network: btcNetwork,
		Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: feed.Hex(), Network: network,
			HeartbeatSeconds: 365 * 24 * 3600}}
	return n, asset, nil
}

// mineBitcoin mines a block every interval until ctx ends.
func (s *stack) mineBitcoin(ctx context.Context, every time.Duration) {
	for sleep(ctx, every) == nil {
		s.btcMu.Lock()
		_, _ = s.btc.Mine(ctx, 1)
		s.btcMu.Unlock()
	}
}

// deployMultisend deploys the dev multisend and lets every payer account
// spend its tokens through it.
func (s *stack) deployMultisend(ctx context.Context) error {
	addr, h, err := s.chain.Deploy(ctx, s.chain.Deployer, common.FromHex(bindings.DevMultisendMetaData.Bin))
	if err != nil {
		return err
	}
	s.multisend = addr
	hashes := []common.Hash{h}
	usdc := bindings.NewDevUSDC()
	unlimited := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for _, a := range s.chain.Accounts {
		h, err := s.chain.Transact(ctx, a, s.chain.Token, nil, usdc.PackApprove(addr, unlimited))
		if err != nil {
			return err
		}
		hashes = append(hashes, h)
	}
	for _, h := range hashes {
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		r, err := s.chain.WaitMined(wait, h)
		cancel()
		if err != nil {
			return err
		}
		if r.Status != 1 {
			return fmt.Errorf("set-up transaction %s reverted", h)
		}
	}
	return nil
}

// setUpProject creates the sandbox project, its deposit key and a plan
// priced by the customer (any amount) in the dev token or the native coin.
func (s *stack) setUpProject(ctx context.Context, svc *service.Service, seed uint64) error {
	p, err := svc.Checkout().CreateProject(ctx, "Reconciliation run")
	if err != nil {
		return err
	}
	s.projectID, s.key = p.Project.ID, p.SandboxKey
	s.owner, s.ownerPassword = "owner@reconciliation.test", "approves the reconciliation run's payouts"
	u, err := svc.Identity().CreateUser(ctx, s.owner, s.ownerPassword)
	if err != nil {
		return err
	}
	if err := svc.Access().AddOwner(ctx, p.Project.ID, u.ID); err != nil {
		return err
	}
	s.ownerID = u.ID
	walletSeed := sha256.Sum256([]byte("chaos deposit wallet " + strconv.FormatUint(seed, 10)))
	_, xpub, err := keys.NewDevKey(walletSeed[:])
	if err != nil {
		return err
	}
	if err := svc.Checkout().SetDepositKey(ctx, p.Project.ID, false, xpub); err != nil {
		return err
	}
	r, err := s.api.post(ctx, s.longAPI+"/api/v1/projects/"+s.projectID+"/payment-plans", s.key, map[string]any{
		"title": "Any amount", "pricingModel": "variable_usd", "minAmountUsd": "1", "maxAmountUsd": "1000",
		"acceptedAssetPolicies": []any{
			map[string]any{"policyType": "asset_definition", "assetDefinitionId": assetUSDC},
			map[string]any{"policyType": "asset_definition", "assetDefinitionId": assetETH},
		}})
	if err != nil {
		return err
	}
	var plan struct {
		ID string `json:"id"`
	}
	if r.Status != http.StatusCreated || json.Unmarshal(r.Data, &plan) != nil || plan.ID == "" {
		return fmt.Errorf("create plan: %d %s", r.Status, r.Raw)
	}
	s.planID = plan.ID
	if s.btc == nil {
		return nil
	}
	_, key, err := btcnode.Account(byte(seed))
	if err != nil {
		return err
	}
	if err := svc.Checkout().SetBitcoinKey(ctx, p.Project.ID, false, key.Canonical(), ""); err != nil {
		return err
	}
	r, err = s.api.post(ctx, s.longAPI+"/api/v1/projects/"+s.projectID+"/payment-plans", s.key, map[string]any{
		"title": "Any amount in bitcoin", "pricingModel": "variable_usd", "minAmountUsd": "10", "maxAmountUsd": "1000",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": assetBTC}}})
	if err != nil {
		return err
	}
	plan.ID = ""
	if r.Status != http.StatusCreated || json.Unmarshal(r.Data, &plan) != nil || plan.ID == "" {
		return fmt.Errorf("create the bitcoin plan: %d %s", r.Status, r.Raw)
	}
	s.btcPlanID = plan.ID
	return nil
}

// setUpSecondProject makes another tenant (made-up-hashes): a project of
// its own, with its own API key, deposit key and plan, owned by the same
// owner, whose treasury is the chain's last account (no scenario pays
// from it). Its treasury is proven by the run.
func (s *stack) setUpSecondProject(ctx context.Context, svc *service.Service, seed uint64) error {
	p, err := svc.Checkout().CreateProject(ctx, "Another tenant")
	if err != nil {
		return err
	}
	if err := svc.Access().AddOwner(ctx, p.Project.ID, s.ownerID); err != nil {
		return err
	}
	walletSeed := sha256.Sum256([]byte("chaos second project's deposit wallet " + strconv.FormatUint(seed, 10)))
	_, xpub, err := keys.NewDevKey(walletSeed[:])
	if err != nil {
		return err
	}
	if err := svc.Checkout().SetDepositKey(ctx, p.Project.ID, false, xpub); err != nil {
		return err
	}
	r, err := s.api.post(ctx, s.longAPI+"/api/v1/projects/"+p.Project.ID+"/payment-plans", p.SandboxKey, map[string]any{
		"title": "Any amount", "pricingModel": "variable_usd", "minAmountUsd": "1", "maxAmountUsd": "1000",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": assetUSDC}}})
	if err != nil {
		return err
	}
	var plan struct {
		ID string `json:"id"`
	}
	if r.Status != http.StatusCreated || json.Unmarshal(r.Data, &plan) != nil || plan.ID == "" {
		return fmt.Errorf("create the second project's plan: %d %s", r.Status, r.Raw)
	}
	s.second = &secondProject{projectID: p.Project.ID, key: p.SandboxKey, planID: plan.ID,
		treasury: s.chain.Accounts[len(s.chain.Accounts)-1]}
	return nil
}

// waitScanning waits until the worker's chainwatch has reached the chain's
// head (or, if the engine keeps no scanned blocks, until its workflow runs),
// and the Bitcoin node's.
func (s *stack) waitScanning(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		head, scanned, known, err := s.scanProgress(ctx)
		if err == nil && (!known && s.scannerRunning(ctx) || known && scanned+2 >= head) && s.bitcoinCaughtUp(ctx) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the worker's scanner did not reach the head in %s (scanned %d of %d, %v); see %s",
				limit, scanned, head, err, filepath.Join(s.dir, "worker.log"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// scanProgress returns the chain's head and the last block the engine's
// scanner recorded; known is false when the engine keeps no such record.
func (s *stack) scanProgress(ctx context.Context) (head, scanned uint64, known bool, err error) {
	if head, err = s.chain.Client().BlockNumber(ctx); err != nil {
		return 0, 0, false, err
	}
	var n *int64
	if err := s.db.QueryRow(ctx, `SELECT max(number) FROM scanned_blocks WHERE network = $1`, network).Scan(&n); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined table
			return head, 0, false, nil
		}
		return head, 0, false, err
	}
	if n == nil {
		return head, 0, true, errors.New("nothing scanned yet")
	}
	return head, uint64(*n), true, nil
}

// bitcoinCaughtUp reports whether the engine has scanned the Bitcoin
// node's blocks to its tip, or nearly (true when the run pays no bitcoin).
func (s *stack) bitcoinCaughtUp(ctx context.Context) bool {
	if s.btc == nil {
		return true
	}
	tip, err := s.btc.Client.GetBlockCount()
	if err != nil {
		return false
	}
	var n *int64
	if err := s.db.QueryRow(ctx, `SELECT max(number) FROM scanned_blocks WHERE network = $1`, btcNetwork).Scan(&n); err != nil || n == nil {
		return false
	}
	return *n+2 >= tip
}

// scannerRunning reports whether the network's chainwatch workflow runs.
func (s *stack) scannerRunning(ctx context.Context) bool {
	d, err := s.tc.DescribeWorkflowExecution(ctx, "chainwatch/"+network, "")
	return err == nil && d.WorkflowExecutionInfo.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
