// Package prodshape runs the production shape on one machine: `paymentsd
// api` and `paymentsd worker` processes of the production binary (no dev
// tag) over one Postgres database, one Temporal server (on Postgres with
// TEMPORAL_PERSISTENCE=postgres), the dev chain and, when asked, one
// Redis; with a project and its deposit key. The scale-out tests and the
// soak run it; a receiver of the merchant's webhooks checks what they get.
package prodshape

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// Options shape a run.
type Options struct {
	// Bin is the paymentsd binary every process runs (Build makes one).
	Bin string
	// Dir holds the processes' logs.
	Dir string
	// APIs and Workers are how many of each start.
	APIs, Workers int
	// Accounts is the dev chain's funded payer accounts (default 5).
	Accounts int
	// BlockInterval is the dev chain's (default 250 ms); the network polls
	// it twice as often and confirms with 3 blocks.
	BlockInterval time.Duration
	// RedisAddr, when set, is a Redis the APIs keep their rate limits in.
	RedisAddr string
	// Env is added to every process's environment (rate limits, the
	// session lifetime, MAX_INFLIGHT_REQUESTS).
	Env []string
	// DatabaseOptions are added to the processes' DATABASE_URL (such as
	// pool_max_conns=2); the harness's own pool reads the database apart.
	DatabaseOptions string
	// Project, when set, changes the project's settings before any
	// process starts (its late-payment window, say).
	Project func(*payment.Project)
}

// Shape is the production shape, running.
type Shape struct {
	APIs, Workers []*Process
	Chain         *devchain.Chain
	// DB is the harness's own pool on the engine's database; DatabaseURL
	// names that database, TemporalDatabaseURL Temporal's (empty when
	// Temporal keeps its state in memory).
	DB                  *pgxpool.Pool
	DatabaseURL         string
	TemporalDatabaseURL string
	Temporal            *devstack.Temporal
	Project             service.CreatedProject
	USDC                payment.Asset
	// Env is every process's environment.
	Env []string
	Dir string

	closers []func()
}

// Build builds this code's production binary into dir, or names the one
// PAYMENTSD_BIN gives (another build, to compare).
func Build(ctx context.Context, dir string) (string, error) {
	if bin := os.Getenv("PAYMENTSD_BIN"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "paymentsd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/paymentsd/paymentsd/cmd/paymentsd").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the production binary: %v\n%s", err, out)
	}
	return bin, nil
}

// Start starts the production shape; on error it stops what it started.
func Start(ctx context.Context, o Options) (_ *Shape, err error) {
	sh := &Shape{Dir: o.Dir}
	defer func() {
		if err != nil {
			sh.Close()
		}
	}()
	if o.BlockInterval == 0 {
		o.BlockInterval = 250 * time.Millisecond
	}
	dbURL, drop, err := storetest.CreateDB()
	if err != nil {
		return nil, err
	}
	sh.onClose(drop)
	sh.DatabaseURL = dbURL
	if sh.DB, err = pgxpool.New(ctx, dbURL); err != nil {
		return nil, err
	}
	sh.onClose(sh.DB.Close)
	if sh.Chain, err = devchain.Start(ctx, devchain.Config{BlockInterval: o.BlockInterval, Accounts: o.Accounts}); err != nil {
		return nil, err
	}
	sh.onClose(func() { _ = sh.Chain.Close() })
	// Temporal on Postgres when TEMPORAL_PERSISTENCE=postgres, as make
	// test runs it: the production shape.
	tcfg, dropTemporal, err := stacktest.Temporal(dbURL)
	if err != nil {
		return nil, err
	}
	sh.onClose(dropTemporal)
	sh.TemporalDatabaseURL = tcfg.PostgresURL
	if sh.Temporal, err = devstack.StartTemporal(tcfg); err != nil {
		return nil, err
	}
	sh.onClose(sh.Temporal.Stop)
	if err := sh.createProject(ctx, o.Project); err != nil {
		return nil, err
	}

	sh.USDC = payment.Asset{ID: "usdc-devnet", Symbol: "USDC", Name: "Dev USD Coin", Decimals: devchain.USDCDecimals, Network: "devnet",
		ChainID: sh.Chain.ChainID.Int64(), TokenAddress: sh.Chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}
	assets, _ := json.Marshal([]payment.Asset{sh.USDC})
	networks, _ := json.Marshal([]chainwatch.Network{{Key: "devnet", ChainID: sh.Chain.ChainID.Int64(), RPCURLs: []string{sh.Chain.URL},
		Confirmations: 3, BlockTime: chainwatch.Duration(o.BlockInterval), PollInterval: chainwatch.Duration(o.BlockInterval / 2),
		PendingTimeout: chainwatch.Duration(2 * time.Minute)}})
	processDB := dbURL
	if o.DatabaseOptions != "" {
		processDB += map[bool]string{true: "&", false: "?"}[strings.Contains(dbURL, "?")] + o.DatabaseOptions
	}
	sh.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "DATABASE_URL=" + processDB,
		"TEMPORAL_ADDRESS=" + sh.Temporal.Address, "TEMPORAL_NAMESPACE=" + sh.Temporal.Namespace,
		"NETWORKS=" + string(networks), "ASSETS=" + string(assets),
		"WEBHOOK_SECRET_KEY=" + strings.Repeat("ab", 32), "WEBHOOK_ALLOW_PRIVATE=true"}
	if o.RedisAddr != "" {
		sh.Env = append(sh.Env, "REDIS_URL=redis://"+o.RedisAddr)
	}
	sh.Env = append(sh.Env, o.Env...)

	for i := range o.APIs {
		a, err := sh.StartAPI(o.Bin, fmt.Sprintf("api%d", i+1))
		if err != nil {
			return nil, err
		}
		sh.APIs = append(sh.APIs, a)
	}
	for i := range o.Workers {
		w, err := sh.StartWorker(o.Bin, fmt.Sprintf("worker%d", i+1))
		if err != nil {
			return nil, err
		}
		sh.Workers = append(sh.Workers, w)
	}
	for _, a := range sh.APIs {
		if err := a.WaitReady(ctx); err != nil {
			return nil, err
		}
	}
	return sh, nil
}

// createProject makes the project as `paymentsd admin` would, with its
// deposit key, and applies the run's settings to it.
func (sh *Shape) createProject(ctx context.Context, settings func(*payment.Project)) error {
	st, err := store.Open(ctx, sh.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := service.New(service.Deps{Store: st})
	if sh.Project, err = svc.Checkout().CreateProject(ctx, "Production-shape shop"); err != nil {
		return err
	}
	seed := sha256.Sum256([]byte("production-shape deposit wallet"))
	_, xpub, err := keys.NewDevKey(seed[:])
	if err != nil {
		return err
	}
	if err := svc.Checkout().SetDepositKey(ctx, sh.Project.Project.ID, false, xpub); err != nil {
		return err
	}
	if settings == nil {
		return nil
	}
	p, err := st.Checkout().GetProject(ctx, sh.Project.Project.ID)
	if err != nil {
		return err
	}
	settings(&p)
	return st.Access().UpdateProject(ctx, p)
}

// Close stops every process and part, the last started first, and drops
// the databases.
func (sh *Shape) Close() {
	for i := len(sh.closers) - 1; i >= 0; i-- {
		sh.closers[i]()
	}
	sh.closers = nil
}

func (sh *Shape) onClose(f func()) { sh.closers = append(sh.closers, f) }

// StartAPI starts `paymentsd api` from bin, logging to name.log, with its
// metrics on an address of their own as in production; the caller waits
// for it to be ready.
func (sh *Shape) StartAPI(bin, name string, env ...string) (*Process, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	metrics, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := start(bin, "api", filepath.Join(sh.Dir, name+".log"),
		append(append(slices.Clip(sh.Env), "HTTP_ADDR="+addr, "PUBLIC_URL=http://"+addr, "METRICS_ADDR="+metrics), env...), "http://"+addr, "http://"+metrics)
	if err == nil {
		sh.onClose(p.halt)
	}
	return p, err
}

// StartWorker starts `paymentsd worker` from bin, logging to name.log.
func (sh *Shape) StartWorker(bin, name string, env ...string) (*Process, error) {
	metrics, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := start(bin, "worker", filepath.Join(sh.Dir, name+".log"),
		append(append(slices.Clip(sh.Env), "METRICS_ADDR="+metrics), env...), "", "http://"+metrics)
	if err == nil {
		sh.onClose(p.halt)
	}
	return p, err
}

// Merchant sets the project up on api as a merchant would: r as its
// webhook endpoint for events, and a plan of amountUSD in the dev USDC,
// whose ID it returns.
func (sh *Shape) Merchant(ctx context.Context, api *Process, r *Receiver, amountUSD string, events ...string) (string, error) {
	key, base := sh.Project.SandboxKey, "/api/v1/projects/"+sh.Project.Project.ID
	hook, err := api.Call(ctx, http.MethodPost, base+"/webhooks", key, map[string]any{"url": r.URL, "enabledEvents": events})
	if err == nil && hook.Status != http.StatusCreated {
		err = fmt.Errorf("create webhook: %d %s", hook.Status, hook.Raw)
	}
	if err != nil {
		return "", err
	}
	if err := r.SetSecret(hook.Data["secret"].(string)); err != nil {
		return "", err
	}
	plan, err := api.Call(ctx, http.MethodPost, base+"/payment-plans", key, map[string]any{"title": "Ticket", "amountUsd": amountUSD,
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": sh.USDC.ID}}})
	if err == nil && plan.Status != http.StatusCreated {
		err = fmt.Errorf("create plan: %d %s", plan.Status, plan.Raw)
	}
	if err != nil {
		return "", err
	}
	return plan.Data["id"].(string), nil
}

// EventIDs are the IDs of every event recorded for the project.
func (sh *Shape) EventIDs(ctx context.Context) ([]string, error) {
	rows, err := sh.DB.Query(ctx, `SELECT id FROM events WHERE project_id = $1`, sh.Project.Project.ID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// FreeAddr is a loopback address no one listens on now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Limits are environment entries that raise every rate-limit tier to n a
// minute: a run that measures the engine, not its limits.
func Limits(n int) []string {
	v := strconv.Itoa(n)
	return []string{"RATE_LIMIT_STRICT=" + v, "RATE_LIMIT_STRICT_API_KEY=" + v, "RATE_LIMIT_RELAXED=" + v,
		"RATE_LIMIT_SEMI_RELAXED=" + v, "RATE_LIMIT_STANDARD=" + v, "RATE_LIMIT_MODERATE=" + v}
}
