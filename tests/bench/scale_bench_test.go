package bench

// The benchmarks at scale (docs/performance.md, "Data at scale"): one
// project of BENCH_SCALE checkout sessions and as many transactions,
// seeded by package seed (the code of tests/bench/cmd/seed), next to a
// small database of 1,000 of each. Without BENCH_SCALE they are skipped;
// `make bench-scale` runs them with a million.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/tests/bench/seed"
)

// smallScale is the size of the database the big one is compared with.
const smallScale = 1_000

// scaleFixture is a seeded database and the handlers over it.
type scaleFixture struct {
	seed.Result
	st    *store.Store
	svc   *service.Service
	ours  http.Handler
	bare  http.Handler
	sizes []seed.TableSize // right after seeding
	// emptyPlan and emptyKey are a plan and a sandbox key of a second
	// project, with no session (the small database only).
	emptyPlan, emptyKey string
	close               func()
}

var (
	scaleMu  sync.Mutex
	scaleFxs = map[int]*scaleFixture{}
)

// scale is BENCH_SCALE; without it the benchmark is skipped.
func scale(b *testing.B) int {
	b.Helper()
	n, err := strconv.Atoi(os.Getenv("BENCH_SCALE"))
	if err != nil || n < 10*smallScale {
		b.Skipf("set BENCH_SCALE to the sessions and transactions to seed, at least %d (make bench-scale)", 10*smallScale)
	}
	return n
}

// bigFx is the database of BENCH_SCALE sessions and transactions, seeded
// once per process.
func bigFx(b *testing.B) *scaleFixture { return scaleFx(b, scale(b), false) }

// smallFx is the database of 1,000, with their events, and an empty
// project.
func smallFx(b *testing.B) *scaleFixture { scale(b); return scaleFx(b, smallScale, true) }

// scaleFx is the database of n sessions and transactions, seeded once per
// process; small adds their events and an empty project.
func scaleFx(b *testing.B, n int, small bool) *scaleFixture {
	b.Helper()
	scaleMu.Lock()
	defer scaleMu.Unlock()
	if f := scaleFxs[n]; f != nil {
		return f
	}
	f, err := newScaleFixture(context.Background(), n, small)
	if err != nil {
		b.Fatal(err)
	}
	scaleFxs[n] = f
	return f
}

func closeScale() {
	scaleMu.Lock()
	defer scaleMu.Unlock()
	for n, f := range scaleFxs {
		f.close()
		delete(scaleFxs, n)
	}
}

// instantTemporal starts every workflow at once, without a server: the
// session's pending start is then deleted, as after a real start.
type instantTemporal struct{ client.Client }

func (instantTemporal) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	return nil, nil
}

func newScaleFixture(ctx context.Context, n int, small bool) (f *scaleFixture, err error) {
	url, drop, err := storetest.CreateDB()
	if err != nil {
		return nil, err
	}
	f = &scaleFixture{close: drop}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	if f.st, err = store.Open(ctx, storetest.WithPoolConns(url, poolConns)); err != nil {
		return nil, err
	}
	f.close = func() { f.st.Close(); drop() }
	f.svc = service.New(service.Deps{Store: f.st, Catalog: seed.Catalog, Temporal: instantTemporal{}})
	if f.Result, err = seed.Seed(ctx, f.svc, f.st, seed.Options{Sessions: n, Transactions: n, Open: -1, Events: small}); err != nil {
		return nil, err
	}
	if f.sizes, err = seed.Sizes(ctx, f.st.Pool()); err != nil {
		return nil, err
	}
	srv, err := newAPI(f.svc)
	if err != nil {
		return nil, err
	}
	f.ours, f.bare = srv.Handler(), bareScaleHandler(f.st.Pool())
	f.close = func() { srv.Close(); f.st.Close(); drop() }
	if small {
		p, err := f.svc.Checkout().CreateProject(ctx, "Empty")
		if err != nil {
			return nil, err
		}
		title, usd, policy := "Empty", "10", "asset_definition"
		plan, err := f.svc.Checkout().CreatePlan(ctx, payment.Principal{ProjectID: p.Project.ID}, p.Project.ID, payment.PlanInput{
			Title: &title, AmountUSD: &usd,
			AcceptedAssetPolicies: []payment.PolicyInput{{PolicyType: &policy, AssetDefinitionID: &seed.Asset.ID}}})
		if err != nil {
			return nil, err
		}
		_, xpub, err := keys.NewDevKey([]byte("paymentsd scale bench, empty project"))
		if err != nil {
			return nil, err
		}
		if err := f.svc.Checkout().SetDepositKey(ctx, p.Project.ID, false, xpub); err != nil {
			return nil, err
		}
		f.emptyPlan, f.emptyKey = plan.ID, p.SandboxKey
	}
	return f, nil
}

// side is one of the two things a benchmark compares: do makes its i-th
// operation.
type side struct {
	name string
	do   func(i int64) error
}

// compare makes b.N operations of each side, in turns of round operations
// from clients goroutines, the side that goes first changing each turn so
// that neither always finds the other's pages cached nor the machine in
// the same state. It reports each side's rate and the ratio of the first
// side's to the second's, the figure the benchmark is judged by.
func compare(b *testing.B, clients, round int, ratio string, a, base side) {
	b.Helper()
	sides := []side{a, base}
	var took [2]time.Duration
	var counters [2]atomic.Int64
	b.ResetTimer()
	for done, turn := 0, 0; done < b.N; turn++ {
		n := min(round, b.N-done)
		for j := range 2 {
			s := (j + turn) % 2
			start := time.Now()
			if err := burst(clients, n, &counters[s], sides[s].do); err != nil {
				b.Fatalf("%s: %v", sides[s].name, err)
			}
			took[s] += time.Since(start)
		}
		done += n
	}
	b.StopTimer()
	rate := func(s int) float64 { return float64(b.N) / took[s].Seconds() }
	b.ReportMetric(rate(0), a.name+"/s")
	b.ReportMetric(rate(1), base.name+"/s")
	b.ReportMetric(rate(0)/rate(1), ratio)
}

// burst makes n operations from clients goroutines, each taking the next
// number from counter.
func burst(clients, n int, counter *atomic.Int64, do func(int64) error) error {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(clients, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := do(counter.Add(1) - 1); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// get makes a GET through h and wants a 200.
func get(h http.Handler, target, key string) error {
	if rec := serve(h, target, key); rec.Code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %.300s", target, rec.Code, rec.Body.String())
	}
	return nil
}

// checkBoth fails unless our API and the bare handler both answer
// target with want in the body.
func checkBoth(b *testing.B, f *scaleFixture, target, want string) {
	b.Helper()
	check(b, f.ours, target, f.SandboxKey, want)
	check(b, f.bare, target, f.SandboxKey, want)
}

// compareReads compares GETs of target(i) through our API and through the
// bare handler.
func compareReads(b *testing.B, f *scaleFixture, target func(i int64) string) {
	b.Helper()
	ours := side{"ours", func(i int64) error { return get(f.ours, target(i), f.SandboxKey) }}
	bare := side{"bare", func(i int64) error { return get(f.bare, target(i), f.SandboxKey) }}
	compare(b, parallelism*runtime.GOMAXPROCS(0), readRound, "ours/bare", ours, bare)
}

// spread maps the i-th request onto one of n rows, far from the last.
func spread(i int64, n int) int { return int((i*7919 + 104729) % int64(n)) }

const readRound = 256

// BenchmarkScaleGetTransaction: GET one transaction of the million by ID,
// a different one each request, through our API and the bare handler
// (bench_test.go); ours/bare is the ratio judged.
func BenchmarkScaleGetTransaction(b *testing.B) {
	f := bigFx(b)
	base := "/api/v1/projects/" + f.ProjectID + "/transactions/"
	id := f.TransactionID(f.Transactions / 3)
	checkBoth(b, f, base+id, id)
	compareReads(b, f, func(i int64) string { return base + f.TransactionID(spread(i, f.Transactions)) })
}

// BenchmarkScaleListTransactions: GET the first page (20, newest first,
// with the total) of the million transactions, and of its confirmed ones.
func BenchmarkScaleListTransactions(b *testing.B) {
	for _, query := range []string{"", "status=confirmed"} {
		b.Run(cmp.Or(query, "all"), func(b *testing.B) {
			f := bigFx(b)
			target := "/api/v1/projects/" + f.ProjectID + "/transactions?" + query
			want := fmt.Sprint(f.Transactions)
			if query != "" {
				want = fmt.Sprint(f.Transactions / 4)
			}
			checkBoth(b, f, target, `"total":`+want)
			compareReads(b, f, func(int64) string { return target })
		})
	}
}

// BenchmarkScaleGetSession: GET one checkout session of the million by ID
// (with its transactions), a different one each request.
func BenchmarkScaleGetSession(b *testing.B) {
	f := bigFx(b)
	base := "/api/v1/projects/" + f.ProjectID + "/checkout-sessions/"
	k := f.Transactions / 3 // paid by transaction k
	id := f.SessionID(f.TxSession(k))
	checkBoth(b, f, base+id, f.TransactionID(k))
	compareReads(b, f, func(i int64) string { return base + f.SessionID(spread(i, f.Sessions)) })
}

// BenchmarkScaleListSessions: GET the first page of the million checkout
// sessions, and of the completed ones.
func BenchmarkScaleListSessions(b *testing.B) {
	for _, query := range []string{"", "status=completed"} {
		b.Run(cmp.Or(query, "all"), func(b *testing.B) {
			f := bigFx(b)
			target := "/api/v1/projects/" + f.ProjectID + "/checkout-sessions?" + query
			var want int64
			status := strings.TrimPrefix(query, "status=")
			if err := f.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM checkout_sessions WHERE project_id = $1
				AND ($2 = '' OR status = $2)`, f.ProjectID, status).Scan(&want); err != nil {
				b.Fatal(err)
			}
			checkBoth(b, f, target, fmt.Sprintf(`"total":%d`, want))
			compareReads(b, f, func(int64) string { return target })
		})
	}
}

// BenchmarkScaleExportCSV: the CSV export of every transaction (checkout
// session) of the project, and of the newest tenth (from=), each in one
// streamed request into a writer that keeps nothing. What the export
// holds is read ten times in each, at every tenth of its rows: the writer
// stops the export there (it is the handler's own call), collects the
// garbage and reads the heap's live bytes, so what is counted is what the
// export keeps, not what it has yet to free. held is the most of those
// above the live heap before the request; exporting ten times the rows
// must not hold more: all/tenth is the ratio judged, about 1 (what is
// below heldFloor counts as heldFloor: that is the noise of a collection).
func BenchmarkScaleExportCSV(b *testing.B) {
	for _, list := range []string{"transactions", "checkout-sessions"} {
		b.Run("list="+list, func(b *testing.B) {
			f := bigFx(b)
			target := "/api/v1/projects/" + f.ProjectID + "/" + list
			// The newest tenth: from the tenth of the rows, newest first.
			rows, from := f.Transactions, f.TxCreated(f.Transactions/10-1)
			if list == "checkout-sessions" {
				rows, from = f.Sessions, f.SessionCreated(f.Sessions/10-1)
			}
			tenth := target + "?from=" + from.Format(time.RFC3339Nano)
			var all, part exported
			b.ResetTimer()
			for b.Loop() {
				all = export(b, f, target, rows)
				part = export(b, f, tenth, rows/10)
			}
			b.StopTimer()
			if part.rows < int64(rows/10) || all.rows < int64(rows) {
				b.Fatalf("exported %d and %d rows", all.rows, part.rows)
			}
			b.ReportMetric(float64(all.rows)/all.took.Seconds(), "rows/s")
			b.ReportMetric(float64(all.rows), "rows-all")
			b.ReportMetric(float64(part.rows), "rows-tenth")
			b.ReportMetric(float64(all.held), "held-all-B")
			b.ReportMetric(float64(part.held), "held-tenth-B")
			b.ReportMetric(float64(all.bytes)/float64(all.rows), "csv-B/row")
			b.ReportMetric(float64(max(all.held, heldFloor))/float64(max(part.held, heldFloor)), "all/tenth")
		})
	}
}

// heldFloor is the least held figure the ratio takes: a collection's
// noise, one or two pages of the heap.
const heldFloor = 64 << 10

type exported struct {
	rows, bytes int64
	held        uint64 // the most the live heap grew
	took        time.Duration
}

// export streams one CSV export of about rows rows through our API,
// reading what it holds at every tenth of them.
func export(b *testing.B, f *scaleFixture, target string, rows int) exported {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+f.SandboxKey)
	req.Header.Set("Accept", "text/csv")
	w := &countingWriter{header: http.Header{}, every: int64(max(1, rows/10))}
	w.next = w.every
	runtime.GC()
	w.before = liveHeap()
	start := time.Now()
	f.ours.ServeHTTP(w, req)
	took := time.Since(start)
	if w.code != http.StatusOK {
		b.Fatalf("export %s: %d", target, w.code)
	}
	return exported{rows: w.lines - 1, bytes: w.bytes, held: w.held, took: took}
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// countingWriter is a response writer that counts what it is sent and
// keeps none of it. Every every lines it collects the garbage and
// records how far the live heap is above before.
type countingWriter struct {
	header       http.Header
	code         int
	bytes, lines int64
	every, next  int64
	before, held uint64
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *countingWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.bytes += int64(len(p))
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	if w.lines >= w.next {
		w.next += w.every
		runtime.GC()
		if live := liveHeap(); live > w.before {
			w.held = max(w.held, live-w.before)
		}
	}
	return len(p), nil
}
func (w *countingWriter) Flush() {}

// BenchmarkScaleSessionCreation: POST /api/v1/checkout/sessions from 16
// customers at once, for the project of a million sessions and for an
// empty project of another database, turn by turn. The workflow's start
// is made at once (instantTemporal), so what is compared is the API and
// the database: million/empty is the ratio judged.
func BenchmarkScaleSessionCreation(b *testing.B) {
	big, small := bigFx(b), smallFx(b)
	create := func(f *scaleFixture, plan, key string) func(int64) error {
		body := `{"paymentPlanId":"` + plan + `","metadata":{"orderId":"bench"}}`
		return func(int64) error {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/checkout/sessions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			f.ours.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				return fmt.Errorf("create: %d %.300s", rec.Code, rec.Body.String())
			}
			return nil
		}
	}
	compare(b, 16, 64, "million/empty", side{"million", create(big, big.PlanID, big.SandboxKey)},
		side{"empty", create(small, small.emptyPlan, small.emptyKey)})
}

// lookupRecipients is the i-th scanned range's recipients: 500
// addresses, found of them sessions' deposit addresses (half of those open
// sessions', half older ones') and the rest nobody's (lowercase, as
// chainwatch looks them up); with how many are sessions'.
func lookupRecipients(l seed.Layout, i int64, found int) ([]string, int) {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	out := make([]string, 0, 500)
	ours := map[string]bool{}
	for j := range found {
		n := rng.IntN(l.Open)
		if j >= found/2 {
			n = l.Open + rng.IntN(l.Sessions-l.Open)
		}
		a := strings.ToLower(seed.DepositAddress(n))
		ours[a] = true
		out = append(out, a)
	}
	for len(out) < 500 {
		out = append(out, fmt.Sprintf("0x%016x%016x%08x", rng.Uint64(), rng.Uint64(), rng.Uint32()))
	}
	return out, len(ours)
}

// setBytes is what the sets of watched addresses hold a session, in
// bytes, measured when they are first read.
var setBytes float64

// BenchmarkScaleWatchedLookup: the store's part of a scan's lookup of
// watched addresses (activities' depositSessions.lookup:
// WatchedRecipients, through the process's set of deposit addresses and
// shared recipients) for the 500 recipients of a scanned range, one
// lookup at a time as one network's scan makes them, among a million
// sessions and among fewer: million/fewer is the ratio, 1 if flat. The
// judged one is against 1,000 sessions, with 20 of the 500 recipients
// sessions' (each read from the database); 10,000 and 100,000 show the
// curve, and found=0 a range paying no session, as most are.
func BenchmarkScaleWatchedLookup(b *testing.B) {
	for _, fewer := range []int{smallScale, 10 * smallScale, 100 * smallScale} {
		for _, found := range []int{20, 0} {
			b.Run(fmt.Sprintf("fewer=%d/found=%d", fewer, found), func(b *testing.B) {
				big := bigFx(b)
				if fewer >= big.Sessions {
					b.Skipf("BENCH_SCALE is not above %d", fewer)
				}
				small := smallFx(b)
				if fewer != smallScale {
					small = scaleFx(b, fewer, false)
				}
				lookup := func(f *scaleFixture) func(int64) error {
					return func(i int64) error {
						ctx := context.Background()
						addresses, want := lookupRecipients(f.Layout, i, found)
						got, err := f.st.Chains().WatchedRecipients(ctx, seed.Asset.Network, addresses)
						if err != nil {
							return err
						}
						if len(got.Deposits) != want {
							return fmt.Errorf("%d of the %d sessions' addresses found", len(got.Deposits), want)
						}
						return nil
					}
				}
				// Each process reads its set of addresses whole once, at
				// its first scan: not timed, but what it holds is reported.
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for _, f := range []*scaleFixture{big, small} {
					if err := lookup(f)(0); err != nil {
						b.Fatal(err)
					}
				}
				var after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&after)
				if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 0 && setBytes == 0 {
					setBytes = float64(grown) / float64(big.Sessions+small.Sessions)
				}
				compare(b, 1, 20, "million/fewer", side{"million", lookup(big)}, side{"fewer", lookup(small)})
				b.ReportMetric(setBytes, "set-B/session")
			})
		}
	}
}

// BenchmarkScaleDatabaseSize reports the space a payment takes, in bytes
// (so MB per million payments): its checkout session and its transaction
// with their indexes, as seeded and vacuumed, and its events (about 4.3 of
// them, with the data the engine renders) from the small database,
// which has them. seed-s is the seeding's time.
func BenchmarkScaleDatabaseSize(b *testing.B) {
	big, small := bigFx(b), smallFx(b)
	for b.Loop() {
	}
	size := func(f *scaleFixture, table string) float64 {
		for _, s := range f.sizes {
			if s.Table == table {
				return float64(s.Bytes)
			}
		}
		b.Fatalf("no size of %s", table)
		return 0
	}
	perPayment := func(f *scaleFixture, table string) float64 { return size(f, table) / float64(f.Transactions) }
	sessions, txs := perPayment(big, "checkout_sessions"), perPayment(big, "transactions")
	events := perPayment(small, "events")
	b.ReportMetric(sessions, "sessions-B/payment")
	b.ReportMetric(txs, "transactions-B/payment")
	b.ReportMetric(events, "events-B/payment")
	b.ReportMetric(sessions+txs+events, "B/payment")
	b.ReportMetric(perPayment(big, "database"), "db-B/payment")
	b.ReportMetric(big.Took.Seconds(), "seed-s")
}
