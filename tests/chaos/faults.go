package chaos

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// window is a span of time a fault lasted.
type window struct{ From, To time.Time }

func (w window) contains(t time.Time) bool { return !t.Before(w.From) && !t.After(w.To) }

// total is how long the windows last together.
func total(ws []window) time.Duration {
	var d time.Duration
	for _, w := range ws {
		d += w.To.Sub(w.From)
	}
	return d
}

// reorgRecord is one reorg the run made.
type reorgRecord struct {
	At        time.Time
	Depth     int
	Drop      bool          // its transactions were dropped, not mined again
	Abandoned []common.Hash // the transactions of the blocks it replaced
}

// faultLog records the faults injected, for the report and to tell which
// sessions met which fault.
type faultLog struct {
	mu         sync.Mutex
	outages    []window
	workerDown []window
	// resumed is, for each worker kill, how long after the new worker
	// process started the engine was following the chain again (the
	// scanner's next recorded progress); -1 when not within two minutes.
	resumed  []time.Duration
	reorgs   []reorgRecord
	failures []string // faults that could not be injected

	// The Bitcoin nodes': reorgs, the merchant node's restarts (from its
	// stop to its return to the network's best block), and how long each
	// took to take the chain again.
	btcReorgs []btcReorg
	btcDown   []window
	btcSync   []time.Duration

	// The engine's infrastructure: the Temporal server's restarts, the
	// PostgreSQL cluster's, and the worker's cuts from Temporal, each from
	// the fault's start to the service's return.
	temporalDown []window
	postgresDown []window
	workerCut    []window

	// timeline is every fault that happened at a time, in the order
	// they began, for the report.
	timeline []faultEvent
}

// faultEvent is one fault on the report's timeline: when it began, how
// long it lasted (zero for an instant one, a reorg), what the engine had
// in flight as it began, and what it did.
type faultEvent struct {
	Fault    string
	At       time.Time
	For      time.Duration
	InFlight string
	Detail   string
}

// event records a fault on the timeline.
func (f *faultLog) event(e faultEvent) {
	f.add(func(f *faultLog) {
		i, _ := slices.BinarySearchFunc(f.timeline, e.At, func(x faultEvent, t time.Time) int { return x.At.Compare(t) })
		f.timeline = slices.Insert(f.timeline, i, e)
	})
}

func (f *faultLog) add(fn func(*faultLog)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// injectFaults injects the chosen faults during the payment phase, at
// times drawn from rng, and returns once the last one is over. The proxy
// passes everything through afterwards, so the engine can settle.
func (r *run) injectFaults(ctx context.Context, rng *rand.Rand) {
	o := r.o
	phase := o.PayPhase
	var wg sync.WaitGroup
	at := func(offset time.Duration, fn func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sleepUntil(ctx, r.start.Add(offset)) == nil {
				fn()
			}
		}()
	}
	// between draws a time in [lo, hi) of the phase.
	between := func(lo, hi float64) time.Duration {
		return time.Duration((lo + rng.Float64()*(hi-lo)) * float64(phase))
	}

	errRate, timeoutRate := 0.0, 0.0
	if o.has(FaultRPCErrors) {
		errRate = o.RPCErrorRate
	}
	if o.has(FaultRPCTimeouts) {
		timeoutRate = o.RPCTimeoutRate
	}
	r.s.proxy.SetFaults(errRate, timeoutRate, o.RPCHold)
	at(phase, func() { r.s.proxy.SetFaults(0, 0, 0) })

	if o.has(FaultOutage) && o.Outages > 0 {
		// One outage in each slice of the phase, so they never overlap.
		slice := phase / time.Duration(o.Outages)
		for i := range o.Outages {
			room := slice - o.OutageLength - 10*time.Second
			start := time.Duration(i)*slice + 5*time.Second
			if room > 0 {
				start += time.Duration(rng.Int64N(int64(room)))
			}
			at(start, func() { r.outage(ctx) })
		}
	}
	if o.has(FaultReorg) {
		for range o.Reorgs {
			depth, drop := 1+rng.IntN(o.MaxReorgDepth), rng.IntN(2) == 0
			at(between(0.05, 0.95), func() { r.reorg(ctx, depth, drop) })
		}
	}
	if o.has(FaultBTCReorg) && r.s.btc != nil {
		for range o.BitcoinReorgs {
			depth, drop := 1+rng.IntN(o.BitcoinMaxReorgDepth), rng.IntN(2) == 0
			at(between(0.05, 0.95), func() { r.reorgBitcoin(ctx, depth, drop) })
		}
	}
	if o.has(FaultBTCRestart) && r.s.btc != nil {
		for range o.BitcoinRestarts {
			at(between(0.1, 0.9), func() { r.restartBitcoin(ctx) })
		}
	}
	if o.has(FaultMadeUpHashes) && r.s.second != nil {
		// The second project's items, throughout the phase, each on a
		// generator of its own drawn here (the faults' draws stay in order).
		for range o.MadeUpHashes {
			g := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
			at(between(0.02, 0.9), func() { r.madeUp(ctx, g) })
		}
	}
	if o.has(FaultKill) {
		for range o.Kills {
			pause := time.Duration(1+rng.IntN(5)) * time.Second
			at(between(0.1, 0.9), func() { r.kill(ctx, pause) })
		}
	}
	// The infrastructure's faults come once payments are confirming and
	// refunds and payouts are being followed: after the phase's first
	// fifth.
	if o.has(FaultTemporalRestart) {
		for range o.TemporalRestarts {
			at(between(0.2, 0.9), func() { r.restartTemporal(ctx) })
		}
	}
	if o.has(FaultPostgresRestart) {
		for range o.PostgresRestarts {
			at(between(0.2, 0.9), func() { r.restartPostgres(ctx) })
		}
	}
	if o.has(FaultWorkerCut) {
		for range o.WorkerCuts {
			at(between(0.2, 0.9), func() { r.cutWorker(ctx) })
		}
	}
	wg.Wait()
}

// inFlight says, from the engine's records, what it was following as a
// fault began: payments pending or confirming, refunds and payouts sent
// or confirming, sessions open with a payment on its way. Read in at most
// two seconds; empty when the records could not be read.
func (r *run) inFlight(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var payments, out, sessions int64
	err := r.s.db.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM transactions WHERE status IN ('pending', 'confirmed')),
		(SELECT count(*) FROM refunds WHERE status IN ('sent', 'confirmed'))
			+ (SELECT count(*) FROM payouts WHERE status IN ('sent', 'confirmed')),
		(SELECT count(*) FROM checkout_sessions WHERE status = 'processing')`).Scan(&payments, &out, &sessions)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d payments pending or confirming, %d refunds and payouts sent or confirming, %d sessions processing",
		payments, out, sessions)
}

// downtime records a fault that began at from and ended now: err, if
// any, among the failures as what's, the window in the fault's list, and
// the fault's event, detailed by how long it took. It returns the end.
func (r *run) downtime(from time.Time, flight, fault, what string, err error, list func(*faultLog) *[]window,
	detail func(took time.Duration) string) time.Time {
	w := window{from, time.Now()}
	r.faults.add(func(f *faultLog) {
		if err != nil {
			f.failures = append(f.failures, what+": "+err.Error())
		}
		l := list(f)
		*l = append(*l, w)
	})
	r.faults.event(faultEvent{Fault: fault, At: from, For: w.To.Sub(w.From), InFlight: flight, Detail: detail(w.To.Sub(w.From))})
	return w.To
}

// restartTemporal kills the Temporal server (SIGKILL: its frontend and
// history die at once) and starts it again TemporalDown later, on the
// same address and state.
func (r *run) restartTemporal(ctx context.Context) {
	flight := r.inFlight(ctx)
	from := time.Now()
	r.logf("fault: Temporal server killed (SIGKILL), started again after %s", r.o.TemporalDown)
	err := r.s.temporal.Restart(ctx, r.o.TemporalDown)
	r.downtime(from, flight, FaultTemporalRestart, "temporal restart", err, func(f *faultLog) *[]window { return &f.temporalDown },
		func(took time.Duration) string {
			return fmt.Sprintf("killed, started again after %s, serving again after %s", r.o.TemporalDown, took.Round(100*time.Millisecond))
		})
}

// restartPostgres stops the run's PostgreSQL cluster (a fast shutdown:
// every connection of the API, the worker and the run is closed) and
// starts it again PostgresDown later.
func (r *run) restartPostgres(ctx context.Context) {
	flight := r.inFlight(ctx)
	from := time.Now()
	r.logf("fault: PostgreSQL restarted, down %s", r.o.PostgresDown)
	err := r.s.pg.Restart(ctx, r.o.PostgresDown)
	r.downtime(from, flight, FaultPostgresRestart, "postgres restart", err, func(f *faultLog) *[]window { return &f.postgresDown },
		func(took time.Duration) string {
			return fmt.Sprintf("stopped (fast shutdown), started again after %s, accepting connections after %s", r.o.PostgresDown,
				took.Round(100*time.Millisecond))
		})
}

// cutWorker drops the worker's connections to Temporal and refuses new
// ones for WorkerCutLength; the API, which dials Temporal itself, is not
// cut.
func (r *run) cutWorker(ctx context.Context) {
	flight := r.inFlight(ctx)
	from := time.Now()
	r.logf("fault: worker cut off from Temporal for %s", r.o.WorkerCutLength)
	err := r.s.temporalProxy.Cut()
	if err == nil {
		_ = sleep(ctx, r.o.WorkerCutLength)
		err = r.s.temporalProxy.Restore()
	}
	r.downtime(from, flight, FaultWorkerCut, "worker cut", err, func(f *faultLog) *[]window { return &f.workerCut },
		func(time.Duration) string { return "the worker's connections to Temporal dropped, new ones refused" })
}

// outage stops the node (as the engine sees it) for OutageLength.
func (r *run) outage(ctx context.Context) {
	flight := r.inFlight(ctx)
	from := time.Now()
	r.logf("fault: node outage for %s", r.o.OutageLength)
	if err := r.s.proxy.Down(); err != nil {
		r.faults.add(func(f *faultLog) { f.failures = append(f.failures, "outage: "+err.Error()) })
		return
	}
	_ = sleep(ctx, r.o.OutageLength)
	if err := r.s.proxy.Up(); err != nil {
		r.faults.add(func(f *faultLog) { f.failures = append(f.failures, "outage end: "+err.Error()) })
	}
	to := time.Now()
	r.faults.add(func(f *faultLog) { f.outages = append(f.outages, window{from, to}) })
	r.faults.event(faultEvent{Fault: FaultOutage, At: from, For: to.Sub(from), InFlight: flight,
		Detail: "the chain's node refusing the worker's connections"})
}

// kill kills the worker with SIGKILL and starts it again after pause.
func (r *run) kill(ctx context.Context, pause time.Duration) {
	flight := r.inFlight(ctx)
	from := time.Now()
	r.logf("fault: worker killed (SIGKILL), restarted after %s", pause)
	err := r.s.worker.Kill(ctx, pause)
	restarted := r.downtime(from, flight, FaultKill, "kill", err, func(f *faultLog) *[]window { return &f.workerDown },
		func(time.Duration) string {
			return fmt.Sprintf("the worker killed (SIGKILL), a new one started after %s", pause)
		})
	if err != nil {
		return
	}
	resumed := time.Duration(-1)
	for deadline := restarted.Add(2 * time.Minute); time.Now().Before(deadline); {
		var at time.Time
		if r.s.db.QueryRow(ctx, `SELECT max(updated_at) FROM scan_progress`).Scan(&at) == nil && at.After(restarted) {
			resumed = at.Sub(restarted)
			break
		}
		if sleep(ctx, 100*time.Millisecond) != nil {
			return
		}
	}
	r.faults.add(func(f *faultLog) { f.resumed = append(f.resumed, resumed) })
}

// reorg replaces the last depth blocks: the simulated backend's Fork makes
// their parent the head, and the next blocks build a new branch. With drop
// the replaced blocks' transactions are dropped from the pool (never mined
// again); otherwise they are mined again in new blocks.
func (r *run) reorg(ctx context.Context, depth int, drop bool) {
	rec, err := r.doReorg(ctx, depth, drop)
	r.faults.add(func(f *faultLog) {
		if err != nil {
			f.failures = append(f.failures, "reorg: "+err.Error())
			return
		}
		f.reorgs = append(f.reorgs, rec)
	})
	if err == nil {
		verb := "mined again"
		if drop {
			verb = "dropped"
		}
		r.logf("fault: reorg of depth %d, %d transactions %s", depth, len(rec.Abandoned), verb)
		r.faults.event(faultEvent{Fault: FaultReorg, At: rec.At,
			Detail: fmt.Sprintf("depth %d, %d transactions %s", depth, len(rec.Abandoned), verb)})
	}
}

func (r *run) doReorg(ctx context.Context, depth int, drop bool) (reorgRecord, error) {
	// No payer sends while the chain is rewound: Fork needs an empty pool,
	// and a payer's nonces change under it.
	r.chainMu.Lock()
	defer r.chainMu.Unlock()
	r.minerMu.Lock()
	defer r.minerMu.Unlock()
	c := r.s.chain
	c.Pause()
	defer c.Resume()
	client := c.Client()
	for attempt := 0; ; attempt++ {
		c.Commit() // mine what the pool holds
		head, err := client.HeaderByNumber(ctx, nil)
		if err != nil {
			return reorgRecord{}, err
		}
		if head.Number.Uint64() <= uint64(depth) {
			return reorgRecord{}, fmt.Errorf("chain too short")
		}
		rec := reorgRecord{At: time.Now(), Depth: depth, Drop: drop}
		parentNumber := head.Number.Uint64() - uint64(depth)
		for n := parentNumber + 1; n <= head.Number.Uint64(); n++ {
			b, err := client.BlockByNumber(ctx, new(big.Int).SetUint64(n))
			if err != nil {
				return rec, err
			}
			for _, tx := range b.Transactions() {
				rec.Abandoned = append(rec.Abandoned, tx.Hash())
			}
		}
		parent, err := client.HeaderByNumber(ctx, new(big.Int).SetUint64(parentNumber))
		if err != nil {
			return rec, err
		}
		err = c.Fork(parent.Hash())
		if err == nil {
			if drop {
				c.Rollback()
			}
			return rec, nil
		}
		// A transaction sent just before reached the pool after the commit.
		if !strings.Contains(err.Error(), "dirty") || attempt == 50 {
			return rec, err
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return rec, err
		}
	}
}
