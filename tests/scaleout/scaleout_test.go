// Package scaleout runs the production shape: two `paymentsd api` and two
// `paymentsd worker` processes of the production binary (no dev tag) on
// one Postgres database, one Temporal server and one Redis, and kills one
// of each in the middle of the payments.
package scaleout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5/pgxpool"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/internal/ratelimit/redistest"
	"github.com/paymentsd/paymentsd/internal/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

const sessions = 10

// keyedSessions is the budget of sessions created with the project's key.
const keyedSessions = 2

// Every payment completes once and every event reaches the merchant, signed,
// although a worker is SIGKILLed while payments confirm and an API process
// dies; both APIs count one budget per client through Redis.
func TestTwoAPIsAndTwoWorkersSurviveKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Customers' session creations: exactly the sessions of the test,
	// counted once across both processes.
	sh := startShape(t, ctx, sessions, sessions, headBinary(t, ctx))
	apis, workers, chain, db, project, receiver := sh.apis, sh.workers, sh.chain, sh.db, sh.project, newReceiver(t)
	key := project.SandboxKey
	planID := sh.merchant(t, apis[0], receiver, "*")

	// Sessions opened alternately on both processes; one more is refused
	// whichever process gets it: the budget is shared.
	type opened struct{ token, id, address, due string }
	var open []opened
	for i := range sessions {
		r := apis[i%2].call(t, http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
		if r.status != http.StatusCreated {
			t.Fatalf("open session %d on api %d: %d %s", i, i%2+1, r.status, r.raw)
		}
		due := r.data["paymentOptions"].([]any)[0].(map[string]any)["amountBaseUnits"].(string)
		open = append(open, opened{r.data["token"].(string), r.data["id"].(string), r.data["depositAddress"].(string), due})
	}
	for i := range apis {
		if r := apis[i].call(t, http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID}); r.status != http.StatusTooManyRequests {
			t.Fatalf("session %d on api %d: %d, want 429: both processes count one budget through Redis", sessions+1, i+1, r.status)
		}
	}

	// The merchant's server creates sessions with its API key: one budget
	// per key, counted once across both processes too.
	for i := range keyedSessions {
		if r := apis[i%2].call(t, http.MethodPost, "/api/v1/checkout/sessions", key, map[string]any{"paymentPlanId": planID}); r.status != http.StatusCreated {
			t.Fatalf("keyed session %d on api %d: %d %s", i+1, i%2+1, r.status, r.raw)
		}
	}
	for i := range apis {
		if r := apis[i].call(t, http.MethodPost, "/api/v1/checkout/sessions", key, map[string]any{"paymentPlanId": planID}); r.status != http.StatusTooManyRequests {
			t.Fatalf("keyed session %d on api %d: %d, want 429: both processes count one budget per key", keyedSessions+1, i+1, r.status)
		}
	}

	pay := func(i int) {
		due, _ := new(big.Int).SetString(open[i].due, 10)
		if _, err := chain.TransferToken(ctx, chain.Accounts[i], common.HexToAddress(open[i].address), due); err != nil {
			t.Fatalf("pay session %d: %v", i, err)
		}
	}
	for i := range sessions / 2 {
		pay(i)
	}
	// Kill a worker while those payments confirm, and an API process.
	waitFor(t, ctx, "a payment seen and not yet final", func() bool {
		var n int
		_ = db.QueryRow(ctx, `SELECT count(*) FROM transactions WHERE status IN ('pending', 'confirmed')`).Scan(&n)
		return n > 0
	})
	workers[0].kill(t)
	apis[1].kill(t)
	for i := sessions / 2; i < sessions; i++ {
		pay(i)
	}

	waitFor(t, ctx, "every session completed (read through the API left)", func() bool {
		for _, s := range open {
			r := apis[0].call(t, http.MethodGet, "/api/v1/checkout/sessions/"+s.token, "", nil)
			if r.status != http.StatusOK || r.data["status"] != "completed" {
				return false
			}
		}
		return true
	})
	var pending int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM session_starts`).Scan(&pending); err != nil || pending != 0 {
		t.Errorf("%d session starts pending (%v); want every session's workflow started", pending, err)
	}
	for _, s := range open {
		var txs, finalized int
		var paid string
		if err := db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'finalized'),
			(SELECT amount_paid_usd::text FROM checkout_sessions WHERE id = $1)
			FROM transactions WHERE checkout_session_id = $1`, s.id).Scan(&txs, &finalized, &paid); err != nil {
			t.Fatal(err)
		}
		if txs != 1 || finalized != 1 || !strings.HasPrefix(paid, "2") {
			t.Errorf("session %s: %d transactions (%d finalized), paid %s; want one payment of 2 USD recorded once", s.id, txs, finalized, paid)
		}
	}

	// Every event recorded reaches the receiver, with a valid signature.
	want := sh.waitDelivered(t, ctx, receiver)
	for _, s := range open {
		if !receiver.got(s.id, "checkout.session.completed") {
			t.Errorf("no checkout.session.completed delivered for %s", s.id)
		}
	}
	if n := receiver.badSignatures(); n > 0 {
		t.Errorf("%d deliveries failed signature verification", n)
	}
	t.Logf("%d events delivered (%d deliveries, at least once each); %d sessions completed across 2 APIs and 2 workers",
		len(want), receiver.deliveries(), sessions)
}

// shape is the production shape, running: two API processes and two
// workers of the production binary over one database, one Temporal server
// and one Redis, with a dev chain, a project and its deposit key.
type shape struct {
	apis, workers [2]*process
	chain         *devchain.Chain
	db            *pgxpool.Pool
	project       service.CreatedProject
	usdc          payment.Asset
	env           []string // the processes' environment
	dir           string   // their logs
}

// headBinary builds this code's production binary, or names the one
// PAYMENTSD_BIN gives (another build, to compare).
func headBinary(t testing.TB, ctx context.Context) string {
	t.Helper()
	if bin := os.Getenv("PAYMENTSD_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "paymentsd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/paymentsd/paymentsd/cmd/paymentsd").CombinedOutput(); err != nil {
		t.Fatalf("build the production binary: %v\n%s", err, out)
	}
	return bin
}

// startShape starts the production shape, every process from bin, on a
// database with this code's migrations; strict is the customers' session
// creations allowed across both APIs, accounts the dev chain's funded
// payer accounts.
func startShape(t testing.TB, ctx context.Context, strict, accounts int, bin string) *shape {
	t.Helper()
	dir := t.TempDir()

	dbURL, drop, err := storetest.CreateDB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	chain, err := devchain.Start(ctx, devchain.Config{BlockInterval: 250 * time.Millisecond, Accounts: accounts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chain.Close() })
	// Temporal on Postgres when TEMPORAL_PERSISTENCE=postgres, as make
	// test runs it: the production shape.
	tcfg, dropTemporal, err := stacktest.Temporal(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dropTemporal)
	temporal, err := devstack.StartTemporal(tcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(temporal.Stop)
	redis := redistest.Start(t)

	// The project, made as `paymentsd admin` would, and its deposit key.
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	project, err := service.New(service.Deps{Store: st}).CreateProject(ctx, "Scale-out shop")
	if err != nil {
		t.Fatal(err)
	}
	seed := sha256.Sum256([]byte("scale-out deposit wallet"))
	_, xpub, err := keys.NewDevKey(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	if err := service.New(service.Deps{Store: st}).SetDepositKey(ctx, project.Project.ID, false, xpub); err != nil {
		t.Fatal(err)
	}

	usdc := payment.Asset{ID: "usdc-devnet", Symbol: "USDC", Name: "Dev USD Coin", Decimals: devchain.USDCDecimals, Network: "devnet",
		ChainID: chain.ChainID.Int64(), TokenAddress: chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}
	assets, _ := json.Marshal([]payment.Asset{usdc})
	networks, _ := json.Marshal([]chainwatch.Network{{Key: "devnet", ChainID: chain.ChainID.Int64(), RPCURLs: []string{chain.URL},
		Confirmations: 3, BlockTime: chainwatch.Duration(250 * time.Millisecond), PollInterval: chainwatch.Duration(100 * time.Millisecond),
		PendingTimeout: chainwatch.Duration(2 * time.Minute)}})
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "DATABASE_URL=" + dbURL,
		"TEMPORAL_ADDRESS=" + temporal.Address, "TEMPORAL_NAMESPACE=" + temporal.Namespace,
		"NETWORKS=" + string(networks), "ASSETS=" + string(assets), "REDIS_URL=redis://" + redis.Addr,
		"WEBHOOK_SECRET_KEY=" + strings.Repeat("ab", 32), "WEBHOOK_ALLOW_PRIVATE=true",
		"RATE_LIMIT_STRICT=" + strconv.Itoa(strict), "RATE_LIMIT_RELAXED=100000", "RATE_LIMIT_SEMI_RELAXED=1000",
		"RATE_LIMIT_STANDARD=1000", "RATE_LIMIT_MODERATE=1000", "RATE_LIMIT_STRICT_API_KEY=" + strconv.Itoa(keyedSessions)}

	sh := &shape{chain: chain, db: db, project: project, usdc: usdc, env: env, dir: dir}
	for i := range sh.apis {
		sh.apis[i] = sh.startAPI(t, bin, fmt.Sprintf("api%d", i+1))
	}
	for i := range sh.workers {
		sh.workers[i] = sh.startWorker(t, bin, fmt.Sprintf("worker%d", i+1))
	}
	for _, a := range sh.apis {
		a.waitReady(t, ctx)
	}
	return sh
}

// merchant sets the project up on api as a merchant would: r as its
// webhook endpoint for events, and a plan of 2 USD in the dev USDC, whose
// ID it returns.
func (sh *shape) merchant(t testing.TB, api *process, r *receiver, events ...string) string {
	t.Helper()
	key, base := sh.project.SandboxKey, "/api/v1/projects/"+sh.project.Project.ID
	hook := api.call(t, http.MethodPost, base+"/webhooks", key, map[string]any{"url": r.URL, "enabledEvents": events})
	if hook.status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", hook.status, hook.raw)
	}
	r.setSecret(t, hook.data["secret"].(string))
	plan := api.call(t, http.MethodPost, base+"/payment-plans", key, map[string]any{"title": "Ticket", "amountUsd": "2",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": sh.usdc.ID}}})
	if plan.status != http.StatusCreated {
		t.Fatalf("create plan: %d %s", plan.status, plan.raw)
	}
	return plan.data["id"].(string)
}

// waitDelivered waits for every event of the project to reach r, and
// returns their IDs.
func (sh *shape) waitDelivered(t testing.TB, ctx context.Context, r *receiver) []string {
	t.Helper()
	var ids []string
	waitFor(t, ctx, "every event delivered", func() bool {
		rows, err := sh.db.Query(ctx, `SELECT id FROM events WHERE project_id = $1`, sh.project.Project.ID)
		if err != nil {
			return false
		}
		ids = ids[:0]
		for rows.Next() {
			var id string
			_ = rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
		return r.hasAll(ids)
	})
	return ids
}

// startAPI starts `paymentsd api` from bin, logging to name.log; the
// caller waits for it to be ready.
func (sh *shape) startAPI(t testing.TB, bin, name string, env ...string) *process {
	addr := freeAddr(t)
	return start(t, bin, "api", filepath.Join(sh.dir, name+".log"),
		append(append(slices.Clip(sh.env), "HTTP_ADDR="+addr, "PUBLIC_URL=http://"+addr), env...), "http://"+addr)
}

// startWorker starts `paymentsd worker` from bin, logging to name.log.
func (sh *shape) startWorker(t testing.TB, bin, name string, env ...string) *process {
	return start(t, bin, "worker", filepath.Join(sh.dir, name+".log"),
		append(append(slices.Clip(sh.env), "METRICS_ADDR="+freeAddr(t)), env...), "")
}

// process is a running paymentsd command.
type process struct {
	cmd  *exec.Cmd
	log  string
	url  string
	done chan struct{}
}

func start(t testing.TB, bin, command, logPath string, env []string, url string) *process {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, command)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, log: logPath, url: url, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			if len(out) > 4000 {
				out = out[len(out)-4000:]
			}
			t.Logf("%s %s log (end):\n%s", filepath.Base(bin), filepath.Base(logPath), out)
		}
	})
	return p
}

func (p *process) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

func (p *process) waitReady(t testing.TB, ctx context.Context) {
	t.Helper()
	waitFor(t, ctx, p.url+"/readyz", func() bool {
		select {
		case <-p.done:
			out, _ := os.ReadFile(p.log)
			t.Fatalf("%s exited:\n%s", p.log, out)
		default:
		}
		res, err := http.Get(p.url + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

type response struct {
	status int
	data   map[string]any
	raw    string
}

func (p *process) call(t testing.TB, method, path, key string, body any) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var env struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(raw, &env)
	return response{status: res.StatusCode, data: env.Data, raw: string(raw)}
}

// receiver is the merchant's webhook endpoint: it verifies each delivery
// with the Standard Webhooks library and keeps what it got.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	wh     *standardwebhooks.Webhook
	events map[string]bool            // event ID
	types  map[string]map[string]bool // object ID -> event types
	n, bad int
	// hold is how long it takes to answer; held counts the requests it
	// holds now, cutOff those whose sender gave up before the answer.
	hold         time.Duration
	held, cutOff int
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{events: map[string]bool{}, types: map[string]map[string]bool{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		hold := r.hold
		r.held++
		r.mu.Unlock()
		select {
		case <-time.After(hold):
		case <-req.Context().Done():
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.held--
		if req.Context().Err() != nil {
			r.cutOff++
			return
		}
		if r.wh == nil || r.wh.Verify(body, req.Header) != nil {
			r.bad++
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &ev) != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		r.n++
		r.events[ev.ID] = true
		if r.types[ev.Data.ID] == nil {
			r.types[ev.Data.ID] = map[string]bool{}
		}
		r.types[ev.Data.ID][ev.Type] = true
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) setSecret(t testing.TB, secret string) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.wh = wh
	r.mu.Unlock()
}

func (r *receiver) hasAll(ids []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if !r.events[id] {
			return false
		}
	}
	return len(ids) > 0
}

func (r *receiver) got(objectID, typ string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.types[objectID][typ]
}

// holding is the number of requests held now.
func (r *receiver) holding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// cut is the number of requests whose sender gave up before the answer.
func (r *receiver) cut() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cutOff
}

func (r *receiver) badSignatures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

func (r *receiver) deliveries() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func waitFor(t testing.TB, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	testwait.Until(t, 4*time.Minute, func() (bool, string) {
		if ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s: %v", what, ctx.Err())
		}
		return ok(), "waiting for " + what
	})
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
