package chaos

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
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
	wg.Wait()
}

// outage stops the node (as the engine sees it) for OutageLength.
func (r *run) outage(ctx context.Context) {
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
	r.faults.add(func(f *faultLog) { f.outages = append(f.outages, window{from, time.Now()}) })
}

// kill kills the worker with SIGKILL and starts it again after pause.
func (r *run) kill(ctx context.Context, pause time.Duration) {
	from := time.Now()
	r.logf("fault: worker killed (SIGKILL), restarted after %s", pause)
	err := r.s.worker.Kill(ctx, pause)
	restarted := time.Now()
	r.faults.add(func(f *faultLog) {
		if err != nil {
			f.failures = append(f.failures, "kill: "+err.Error())
		}
		f.workerDown = append(f.workerDown, window{from, restarted})
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
