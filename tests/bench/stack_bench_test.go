package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	sdkactivity "go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	sdkworkflow "go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// benchSession opens a session for a fresh USDC plan of project p.
func benchSession(b *testing.B, svc *service.Service, p service.CreatedProject, planID string) payment.Session {
	v, err := svc.Checkout().CreateSession(context.Background(), nil, payment.SessionInput{PaymentPlanID: &planID})
	if err != nil {
		b.Fatal(err)
	}
	return v.Session
}

func benchPlan(b *testing.B, svc *service.Service, p service.CreatedProject, amount string) string {
	asset, title := "usdc-devnet", "Bench"
	plan, err := svc.Checkout().CreatePlan(context.Background(), payment.Principal{ProjectID: p.Project.ID}, p.Project.ID, payment.PlanInput{
		Title: &title, AmountUSD: &amount, AcceptedAssetPolicies: []payment.PolicyInput{{PolicyType: ptr("asset_definition"), AssetDefinitionID: &asset}}})
	if err != nil {
		b.Fatal(err)
	}
	return plan.ID
}

func newBenchProject(b *testing.B) (*service.Service, service.CreatedProject) {
	e := fullStack(b).Service(0)
	ctx := context.Background()
	p, err := e.Checkout().CreateProject(ctx, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	seed := sha256.Sum256([]byte(p.Project.ID))
	_, xpub, err := keys.NewDevKey(seed[:])
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Checkout().SetDepositKey(ctx, p.Project.ID, false, xpub); err != nil {
		b.Fatal(err)
	}
	return e, p
}

// BenchmarkDetectionLatency measures, over 100 payments, the time from the
// block that holds a payment being mined to its transaction row at
// confirmed. Target: below one block time plus chainwatch's poll interval
// (250 ms + 100 ms on the test network).
func BenchmarkDetectionLatency(b *testing.B) {
	chain, st := fullStack(b).Chain, fullStack(b).Store
	e, p := newBenchProject(b)
	planID := benchPlan(b, e, p, "1")
	ctx := context.Background()
	chain.Pause()
	defer chain.Resume()
	var latencies []time.Duration
	for range b.N * 100 {
		s := benchSession(b, e, p, planID)
		hash, err := chain.TransferToken(ctx, chain.Accounts[0], common.HexToAddress(s.DepositAddress), big.NewInt(1_000_000))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := chain.Mine(ctx, hash); err != nil {
			b.Fatal(err)
		}
		mined := time.Now()
		// Its own loop, not testwait: the poll interval bounds the latency
		// measured, so it stays short and fixed.
		tick := time.NewTicker(2 * time.Millisecond)
		for {
			t, err := st.Payments().TransactionByHash(ctx, 1337, hash.Hex())
			if err == nil && t.Status == payment.TxConfirmed {
				break
			}
			if time.Since(mined) > 30*time.Second {
				b.Fatalf("payment %s not confirmed", hash.Hex())
			}
			<-tick.C
		}
		tick.Stop()
		latencies = append(latencies, time.Since(mined))
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Milliseconds()), "p99-ms")
}

// BenchmarkThroughput opens BENCH_SESSIONS sessions (default 1000), pays
// them all at once from the dev accounts and waits until every one is
// completed; it reports completed sessions per second, from the first
// payment sent to the last session completed.
func BenchmarkThroughput(b *testing.B) {
	chain, st := fullStack(b).Chain, fullStack(b).Store
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	e, p := newBenchProject(b)
	planID := benchPlan(b, e, p, "2")
	ctx := context.Background()
	sessions := make([]payment.Session, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				sessions[i] = benchSession(b, e, p, planID)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()

	// The payers' wallets sign before the clock starts: what is measured
	// is the engine's work from broadcast to completed, not the dev
	// node's gas estimates for the payers.
	usdc := bindings.NewDevUSDC()
	payments := make([]*types.Transaction, n)
	for i, s := range sessions {
		from := chain.Accounts[i%len(chain.Accounts)]
		tx, err := chain.SignTransact(ctx, from, chain.Token, nil, usdc.PackTransfer(common.HexToAddress(s.DepositAddress), big.NewInt(2_000_000)))
		if err != nil {
			b.Fatal(err)
		}
		payments[i] = tx
	}

	b.ResetTimer()
	start := time.Now()
	for _, tx := range payments {
		if err := chain.SendSigned(ctx, tx); err != nil {
			b.Fatal(err)
		}
	}
	testwait.Until(b, 20*time.Minute, func() (bool, string) {
		var done int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM checkout_sessions WHERE project_id = $1 AND status = 'completed'`,
			p.Project.ID).Scan(&done); err != nil {
			b.Fatal(err)
		}
		return done == n, fmt.Sprintf("%d of %d sessions completed", done, n)
	})
	elapsed := time.Since(start)
	paidPerSecond = float64(n) / elapsed.Seconds()
	b.ReportMetric(paidPerSecond, "sessions/s")
	b.ReportMetric(elapsed.Seconds(), "total-s")
	fmt.Fprintf(os.Stderr, "%d sessions completed in %s\n", n, elapsed.Round(time.Millisecond))
}

// The full stack (devstack.Stack, as `paymentsd dev` runs it), started by
// the first benchmark that needs it.
var (
	stackOnce sync.Once
	stack     *devstack.Stack
	stackErr  error
	dropDB    func()
)

func fullStack(b *testing.B) *devstack.Stack {
	b.Helper()
	stackOnce.Do(func() {
		var url string
		if url, dropDB, stackErr = storetest.CreateDB(); stackErr != nil {
			return
		}
		// TEMPORAL_PERSISTENCE=postgres puts the Temporal server on
		// Postgres, beside the engine's database.
		var temporal devstack.TemporalConfig
		var dropTemporal func()
		if temporal, dropTemporal, stackErr = stacktest.Temporal(url); stackErr != nil {
			return
		}
		dropEngine := dropDB
		dropDB = func() { dropTemporal(); dropEngine() }
		stack, stackErr = devstack.StartStack(context.Background(), devstack.StackConfig{
			DatabaseURL: url,
			Temporal:    temporal,
			Chain:       devchain.Config{BlockInterval: 250 * time.Millisecond},
			Devnet: chainwatch.Network{Confirmations: 3, BlockTime: chainwatch.Duration(250 * time.Millisecond),
				PollInterval: chainwatch.Duration(100 * time.Millisecond)},
			Logger: quietLogger{},
		})
	})
	if stackErr != nil {
		b.Fatal(stackErr)
	}
	return stack
}

func closeStack() {
	if stack != nil {
		stack.Close()
	}
	if dropDB != nil {
		dropDB()
	}
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// BenchmarkCheckoutCreation opens sessions from 16 concurrent clients
// (BENCH_CLIENTS), as a merchant's sale would (BENCH_SESSIONS of them,
// default 400), through the
// service's CreateSession: quoting, the deposit address, the workflow and
// the row. It reports creations per second and the p50 and p99 latency.
func BenchmarkCheckoutCreation(b *testing.B) {
	n := 400
	if v, err := strconv.Atoi(os.Getenv("BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	e, p := newBenchProject(b)
	planID := benchPlan(b, e, p, "2")
	clients := 16
	if v, err := strconv.Atoi(os.Getenv("BENCH_CLIENTS")); err == nil && v > 0 {
		clients = v
	}
	benchSession(b, e, p, planID) // warm
	latencies := make([]time.Duration, n)
	work := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				t := time.Now()
				benchSession(b, e, p, planID)
				latencies[i] = time.Since(t)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(latencies)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "creations/s")
	b.ReportMetric(float64(latencies[n/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[n*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkWorkflowCeiling is the rate at which the stack's Temporal server
// completes a trivial workflow (one local activity) on a worker of its
// own, from 16 concurrent starters: the ceiling that BenchmarkThroughput's
// paid sessions per second are a fraction of (BENCH_SESSIONS workflows,
// default 1,000).
func BenchmarkWorkflowCeiling(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	s := fullStack(b)
	const queue = "bench-ceiling"
	w := sdkworker.New(s.Temporal, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(trivialWorkflow, sdkworkflow.RegisterOptions{Name: "BenchTrivial"})
	w.RegisterActivityWithOptions(trivialActivity, sdkactivity.RegisterOptions{Name: "BenchTrivialActivity"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	run := time.Now().UnixNano()
	work := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bench-ceiling-%d-%d", run, i),
					TaskQueue: queue}, "BenchTrivial")
				if err == nil {
					err = r.Get(ctx, nil)
				}
				if err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	ceiling := float64(n) / elapsed.Seconds()
	b.ReportMetric(ceiling, "workflows/s")
	if paidPerSecond > 0 {
		// Run after BenchmarkThroughput in the same process: the figure
		// the issue judges, paid sessions as a fraction of the ceiling
		// (goal ≥ 0.4: a paid session at no more than 2.5 trivial
		// workflows).
		b.ReportMetric(paidPerSecond/ceiling, "paid/ceiling")
		b.ReportMetric(ceiling/paidPerSecond, "trivial-per-paid")
	}
}

// paidPerSecond is BenchmarkThroughput's result, for BenchmarkWorkflowCeiling
// to report the ratio of the two when both run in one process.
var paidPerSecond float64

func trivialWorkflow(ctx sdkworkflow.Context) error {
	ctx = sdkworkflow.WithLocalActivityOptions(ctx, sdkworkflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
	return sdkworkflow.ExecuteLocalActivity(ctx, trivialActivity).Get(ctx, nil)
}

func trivialActivity(context.Context) error { return nil }
