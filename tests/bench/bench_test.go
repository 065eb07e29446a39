package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// seedRows is the number of transactions in the table.
const seedRows = 100_000

// parallelism multiplies GOMAXPROCS into the number of client goroutines of
// b.RunParallel. The database shares the machine's cores with the handler,
// so one goroutine per core leaves the CPUs idle while queries are in
// flight; a few per core keep both sides busy.
const parallelism = 4

// poolConns is the connection pool size, the same for both handlers: one
// connection per client goroutine, so no request waits for a connection.
const poolConns = 8

var catalog = payment.Catalog{Assets: []payment.Asset{
	{ID: "usdc-devnet", Symbol: "USDC", Name: "USD Coin", Decimals: 6, Network: "devnet", ChainID: 1337,
		TokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
}}

// fixture is the seeded database and the handlers under test, shared by
// every benchmark of the process.
type fixture struct {
	st        *store.Store
	projectID string
	key       string   // sandbox API key
	txIDs     []string // every seeded transaction, newest first
	ours      http.Handler
	bare      http.Handler
	bareAuth  http.Handler // bare, plus the API-key lookup of every request
	close     func()
}

var (
	fxOnce sync.Once
	fx     *fixture
	fxErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fx != nil {
		fx.close()
	}
	closeScale()
	closeStack()
	os.Exit(code)
}

// setup seeds the database once per process.
func setup(b *testing.B) *fixture {
	b.Helper()
	fxOnce.Do(func() { fx, fxErr = newFixture(context.Background()) })
	if fxErr != nil {
		b.Fatal(fxErr)
	}
	return fx
}

func newFixture(ctx context.Context) (f *fixture, err error) {
	url, drop, err := storetest.CreateDB()
	if err != nil {
		return nil, err
	}
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, drop)
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	st, err := store.Open(ctx, storetest.WithPoolConns(url, poolConns))
	if err != nil {
		return nil, err
	}
	closers = append(closers, st.Close)

	e := service.New(service.Deps{Store: st, Catalog: catalog})
	p, err := e.Checkout().CreateProject(ctx, "Bench")
	if err != nil {
		return nil, err
	}
	ids, err := seedTransactions(ctx, e, st, p)
	if err != nil {
		return nil, err
	}

	srv, err := newAPI(e)
	if err != nil {
		return nil, err
	}
	closers = append(closers, srv.Close)

	return &fixture{st: st, projectID: p.Project.ID, key: p.SandboxKey, txIDs: ids,
		ours: srv.Handler(), bare: bareHandler(st.Pool(), false), bareAuth: bareHandler(st.Pool(), true),
		close: closeAll}, nil
}

// seedTransactions records a plan, a session and seedRows transactions of the sandbox,
// one a second back from now, cycling through the statuses.
func seedTransactions(ctx context.Context, svc *service.Service, st *store.Store, p service.CreatedProject) ([]string, error) {
	pr := payment.Principal{ProjectID: p.Project.ID, IsLive: false}
	assetID, policy := "usdc-devnet", "asset_definition"
	plan, err := svc.Checkout().CreatePlan(ctx, pr, p.Project.ID, payment.PlanInput{Title: ptr("Bench"), AmountUSD: ptr("10"),
		AcceptedAssetPolicies: []payment.PolicyInput{{PolicyType: &policy, AssetDefinitionID: &assetID}}})
	if err != nil {
		return nil, fmt.Errorf("create plan: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(payment.NewSessionToken()),
		ProjectID: p.Project.ID, PaymentPlanID: plan.ID, IsLive: false, Status: payment.SessionProcessing,
		AmountUSD: decimal.NewFromInt(10), ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now}
	if err := st.Checkout().InsertSession(ctx, cs, nil); err != nil {
		return nil, fmt.Errorf("insert session: %w", err)
	}

	ids := make([]string, seedRows)
	rows := make([][]any, seedRows)
	for i := range seedRows {
		at := now.Add(-time.Duration(i+1) * time.Second)
		status := payment.TransactionStatuses[i%4]
		history := []payment.StatusChange{{Status: payment.TxPending, At: at}}
		var confirmedAt, finalizedAt, failedAt *time.Time
		confirmations, blockHash, failure := 0, "", ""
		switch status {
		case payment.TxConfirmed, payment.TxFinalized:
			c := at.Add(12 * time.Second)
			confirmedAt, confirmations, blockHash = &c, 3, fmt.Sprintf("0x%064x", i+1)
			history = append(history, payment.StatusChange{Status: payment.TxConfirmed, At: c})
			if status == payment.TxFinalized {
				f := at.Add(time.Minute)
				finalizedAt, confirmations = &f, 12
				history = append(history, payment.StatusChange{Status: payment.TxFinalized, At: f})
			}
		case payment.TxFailed:
			f := at.Add(30 * time.Second)
			failedAt, failure = &f, "reverted"
			history = append(history, payment.StatusChange{Status: payment.TxFailed, At: f, Reason: failure})
		}
		historyJSON, _ := json.Marshal(history)
		ids[i] = payment.NewID(payment.PrefixTx, at)
		rows[i] = []any{ids[i], p.Project.ID, cs.ID, plan.ID, false, string(status), "devnet", int64(1337),
			fmt.Sprintf("0x%064x", i), int32(0), "0x1111111111111111111111111111111111111111",
			"0x2222222222222222222222222222222222222222", assetID, "USDC", "10", int64(10_000_000), int64(10),
			int64(1_000_000 + i), blockHash, int32(confirmations), int32(12), failure, historyJSON, at, at,
			confirmedAt, finalizedAt, failedAt}
	}
	pool := st.Pool()
	cols := []string{"id", "project_id", "checkout_session_id", "payment_plan_id", "is_live", "status", "network",
		"chain_id", "tx_hash", "log_index", "from_address", "to_address", "asset_definition_id", "symbol", "amount",
		"amount_base_units", "amount_usd", "block_number", "block_hash", "confirmations", "required_confirmations",
		"failure_reason", "status_history", "created_at", "updated_at", "confirmed_at", "finalized_at", "failed_at"}
	n, err := pool.CopyFrom(ctx, pgx.Identifier{"transactions"}, cols, pgx.CopyFromRows(rows))
	if err != nil {
		return nil, fmt.Errorf("copy transactions: %w", err)
	}
	if n != seedRows {
		return nil, fmt.Errorf("copied %d transactions, want %d", n, seedRows)
	}
	// A table that has settled: statistics for the planner and a visibility
	// map, as autovacuum leaves it in production.
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) transactions"); err != nil {
		return nil, fmt.Errorf("vacuum: %w", err)
	}
	return ids, nil
}

func ptr[T any](v T) *T { return &v }

// newAPI is the whole API over e, with rate limits no benchmark reaches:
// no 429 however long it runs, through the same in-memory limiter as in
// production. Its interval is a day: at each new interval memorystore
// sets a bucket to interval/tokens tokens (its nanoseconds per token,
// taken as a count) capped at tokens, so 2^40 tokens a minute become none
// after the first minute.
func newAPI(e *service.Service) (*api.Server, error) {
	high := uint64(1 << 40)
	return api.New(e, api.Config{Limits: map[api.Tier]uint64{api.Relaxed: high, api.SemiRelaxed: high,
		api.Standard: high, api.Moderate: high, api.Strict: high, api.StrictAPIKey: high},
		LimitStore: func(_ api.Tier, n uint64) (limiter.Store, error) {
			return memorystore.New(&memorystore.Config{Tokens: n, Interval: 24 * time.Hour})
		}})
}

// The bare handler: net/http routing, the SQL of store/transactions.go and
// store/list.go, pgx scanning into a flat struct and encoding/json.

// txColumns is store.txColumns, copied.
const txColumns = `id, project_id, coalesce(checkout_session_id, ''), coalesce(payment_plan_id, ''), is_live, status, network, chain_id,
	tx_hash, log_index, from_address, to_address, asset_definition_id, symbol, amount, amount_base_units::text,
	amount_usd::text, block_number, block_hash, confirmations, required_confirmations, failure_reason,
	status_history, created_at, updated_at, confirmed_at, finalized_at, failed_at, version, unexpected,
	coalesce(assigned_session_id, '')`

const (
	// store.GetTransaction
	getSQL = `SELECT ` + txColumns + ` FROM transactions
		WHERE id = $1 AND project_id = $2 AND is_live = $3`
	// store.APIKeyByHash, for the bare_auth variant
	keySQL = `SELECT id, project_id, is_live, key_hash, key_hint, created_at
		FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`
	// store.list for transactions with the default query: the total from
	// list_counts (store.countsSQL, kind $1 = "transactions"), then the page
	countSQL = `SELECT coalesce(sum(n), 0)::bigint FROM list_counts WHERE kind = $1 AND project_id = $2 AND is_live = $3`
	pageSQL  = `SELECT ` + txColumns + ` FROM transactions WHERE project_id = $1 AND is_live = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`
	// store.list for transactions filtered by status
	countStatusSQL = countSQL + ` AND status = $4`
	pageStatusSQL  = `SELECT ` + txColumns + ` FROM transactions WHERE project_id = $1 AND is_live = $2 AND status = $3 ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`
)

type bareTx struct {
	ID                    string          `json:"id"`
	ProjectID             string          `json:"projectId"`
	CheckoutSessionID     string          `json:"checkoutSessionId"`
	PaymentPlanID         string          `json:"paymentPlanId"`
	IsLive                bool            `json:"isLive"`
	Status                string          `json:"status"`
	Network               string          `json:"network"`
	ChainID               int64           `json:"chainId"`
	TxHash                string          `json:"txHash"`
	LogIndex              *int            `json:"logIndex"`
	FromAddress           string          `json:"fromAddress"`
	ToAddress             string          `json:"toAddress"`
	AssetDefinitionID     string          `json:"assetDefinitionId"`
	Symbol                string          `json:"symbol"`
	Amount                string          `json:"amount"`
	AmountBaseUnits       string          `json:"amountBaseUnits"`
	AmountUSD             string          `json:"amountUsd"`
	BlockNumber           *int64          `json:"blockNumber"`
	BlockHash             string          `json:"blockHash"`
	Confirmations         int             `json:"confirmations"`
	RequiredConfirmations int             `json:"requiredConfirmations"`
	FailureReason         string          `json:"failureReason"`
	StatusHistory         json.RawMessage `json:"statusHistory"`
	CreatedAt             time.Time       `json:"createdAt"`
	UpdatedAt             time.Time       `json:"updatedAt"`
	ConfirmedAt           *time.Time      `json:"confirmedAt"`
	FinalizedAt           *time.Time      `json:"finalizedAt"`
	FailedAt              *time.Time      `json:"failedAt"`
	Version               int             `json:"-"`
	Unexpected            bool            `json:"unexpected"`
	AssignedSessionID     string          `json:"assignedSessionId"`
}

func scanBare(row pgx.Row) (bareTx, error) {
	var t bareTx
	err := row.Scan(&t.ID, &t.ProjectID, &t.CheckoutSessionID, &t.PaymentPlanID, &t.IsLive, &t.Status, &t.Network,
		&t.ChainID, &t.TxHash, &t.LogIndex, &t.FromAddress, &t.ToAddress, &t.AssetDefinitionID, &t.Symbol, &t.Amount,
		&t.AmountBaseUnits, &t.AmountUSD, &t.BlockNumber, &t.BlockHash, &t.Confirmations, &t.RequiredConfirmations,
		&t.FailureReason, &t.StatusHistory, &t.CreatedAt, &t.UpdatedAt, &t.ConfirmedAt, &t.FinalizedAt, &t.FailedAt, &t.Version,
		&t.Unexpected, &t.AssignedSessionID)
	return t, err
}

// bareHandler serves the two routes with the same SQL as the store. The
// environment is the sandbox's. With authenticate, it first looks the
// bearer key up as store.APIKeyByHash does (and nothing else: no rate
// limit, no request ID, no envelope), which isolates the cost of that extra
// round trip.
func bareHandler(pool *pgxpool.Pool, authenticate bool) http.Handler {
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	// scope returns the project and environment a request may read.
	scope := func(w http.ResponseWriter, r *http.Request) (string, bool, bool) {
		project := r.PathValue("projectId")
		if !authenticate {
			return project, false, true
		}
		sum := sha256.Sum256([]byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
		var k struct {
			id, project, hash, hint string
			isLive                  bool
			created                 time.Time
		}
		err := pool.QueryRow(r.Context(), keySQL, hex.EncodeToString(sum[:])).
			Scan(&k.id, &k.project, &k.isLive, &k.hash, &k.hint, &k.created)
		if err != nil || k.project != project {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return "", false, false
		}
		return project, k.isLive, true
	}
	mux.HandleFunc("GET /api/v1/projects/{projectId}/transactions/{transactionId}", func(w http.ResponseWriter, r *http.Request) {
		project, isLive, ok := scope(w, r)
		if !ok {
			return
		}
		t, err := scanBare(pool.QueryRow(r.Context(), getSQL, r.PathValue("transactionId"), project, isLive))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, t)
	})
	mux.HandleFunc("GET /api/v1/projects/{projectId}/transactions", func(w http.ResponseWriter, r *http.Request) {
		project, isLive, ok := scope(w, r)
		if !ok {
			return
		}
		ctx := r.Context()
		count, page, args := countSQL, pageSQL, []any{project, isLive}
		if status := r.URL.Query().Get("status"); status != "" {
			count, page, args = countStatusSQL, pageStatusSQL, append(args, status)
		}
		var total int
		if err := pool.QueryRow(ctx, count, append([]any{"transactions"}, args...)...).Scan(&total); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		rows, err := pool.Query(ctx, page, append(args, 20, 0)...)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bareTx, error) { return scanBare(r) })
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, struct {
			Items []bareTx `json:"items"`
			Total int      `json:"total"`
		}{items, total})
	})
	return mux
}

// check serves one request and verifies the response names want.
func check(b *testing.B, h http.Handler, target, key, want string) {
	b.Helper()
	rec := serve(h, target, key)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
		b.Fatalf("GET %s: %d %.300s", target, rec.Code, rec.Body.String())
	}
}

func serve(h http.Handler, target, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// run calls h.ServeHTTP from parallel goroutines, the i-th request going to
// target(i), and reports the throughput.
func run(b *testing.B, h http.Handler, key string, target func(i int64) string) {
	var n atomic.Int64
	b.SetParallelism(parallelism)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t := target(n.Add(1))
			if rec := serve(h, t, key); rec.Code != http.StatusOK {
				b.Errorf("GET %s: %d %.300s", t, rec.Code, rec.Body.String())
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// variants are the handlers each benchmark compares: ours is the target,
// bare the baseline; bare_auth is the baseline plus our one extra query,
// to tell that query's cost from the rest of our middleware's.
var variants = []struct {
	name    string
	handler func(*fixture) http.Handler
}{
	{"ours", func(f *fixture) http.Handler { return f.ours }},
	{"bare", func(f *fixture) http.Handler { return f.bare }},
	{"bare_auth", func(f *fixture) http.Handler { return f.bareAuth }},
}

// eachVariant runs bench as a sub-benchmark for each variant, over the
// fixture and the variant's handler.
func eachVariant(b *testing.B, bench func(b *testing.B, f *fixture, h http.Handler)) {
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			f := setup(b)
			bench(b, f, v.handler(f))
		})
	}
}

// BenchmarkGetTransaction: GET one transaction by ID, a different one each
// request, through our API and through the bare handler.
func BenchmarkGetTransaction(b *testing.B) {
	eachVariant(b, func(b *testing.B, f *fixture, h http.Handler) {
		base := "/api/v1/projects/" + f.projectID + "/transactions/"
		check(b, h, base+f.txIDs[12345], f.key, f.txIDs[12345])
		run(b, h, f.key, func(i int64) string { return base + f.txIDs[(i*7919)%int64(len(f.txIDs))] })
	})
}

// BenchmarkListTransactions: GET the first page (20, newest first, with the
// total) of a project with 100,000 transactions.
func BenchmarkListTransactions(b *testing.B) {
	eachVariant(b, func(b *testing.B, f *fixture, h http.Handler) {
		target := "/api/v1/projects/" + f.projectID + "/transactions"
		check(b, h, target, f.key, f.txIDs[19])
		check(b, h, target, f.key, fmt.Sprint(seedRows))
		run(b, h, f.key, func(int64) string { return target })
	})
}

// BenchmarkListTransactionsByStatus: GET the first page of the project's
// confirmed transactions (a quarter of the 100,000), with their total.
func BenchmarkListTransactionsByStatus(b *testing.B) {
	eachVariant(b, func(b *testing.B, f *fixture, h http.Handler) {
		target := "/api/v1/projects/" + f.projectID + "/transactions?status=confirmed"
		check(b, h, target, f.key, f.txIDs[77]) // the 20th confirmed, newest first
		check(b, h, target, f.key, fmt.Sprint(seedRows/4))
		run(b, h, f.key, func(int64) string { return target })
	})
}
