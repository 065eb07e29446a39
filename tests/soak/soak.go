// Package soak holds the production shape (tests/prodshape) under a steady
// mix for a long while: merchants' servers opening checkout sessions,
// customers paying part of them on the dev chain, the engine delivering
// every event to a real webhook receiver, and readers reading. Every
// interval it samples each process's memory and goroutines, the database's
// connections, Temporal's task-queue backlog and the run's refusals and
// errors; at the end it accounts for every session it opened, and judges
// each series flat or not from the steady-state start to the end
// (docs/performance.md, "Soak").
package soak

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/prodshape"
)

// Options shape a run.
type Options struct {
	// Duration is how long the load runs; SteadyFrom when the steady
	// state is judged from (the series are judged from it to the end).
	Duration, SteadyFrom time.Duration
	// Interval is how often the series are sampled.
	Interval time.Duration
	// CreateRate is checkout sessions opened a second, PayShare the share
	// of them paid, ReadRate reads a second.
	CreateRate float64
	PayShare   float64
	ReadRate   float64
	// APIs and Workers are the processes of each kind.
	APIs, Workers int
	// BlockInterval is the dev chain's.
	BlockInterval time.Duration
	// SessionLifetime and LateWindow bound how long a session's workflow
	// lives (open, then waiting for late payments): short enough that the
	// running workflows level off well before SteadyFrom.
	SessionLifetime, LateWindow time.Duration
	// Settle bounds the wait, after the load, for every session to be
	// accounted for.
	Settle time.Duration
	// Env is added to every process's environment (a worker's
	// WORKER_WORKFLOW_CACHE_SIZE, say).
	Env []string
	// Bin is the paymentsd binary (default: built into Dir).
	Bin string
	// Dir holds the processes' logs, the CSV and the SVG.
	Dir string
	// Log receives the run's progress.
	Log io.Writer
}

// DefaultOptions are the documented run: 30 minutes judged from the 5th.
func DefaultOptions() Options {
	return Options{Duration: 30 * time.Minute, SteadyFrom: 5 * time.Minute, Interval: 20 * time.Second,
		CreateRate: 4, PayShare: 0.5, ReadRate: 20, APIs: 2, Workers: 2, BlockInterval: time.Second,
		SessionLifetime: 2 * time.Minute, LateWindow: time.Minute, Settle: 5 * time.Minute, Log: os.Stderr}
}

// Result is what a run measured and found.
type Result struct {
	Samples  []Sample
	Verdicts []Verdict
	Account  Account
	Load     LoadCounts
}

// Flat tells whether every series held flat and every session is
// accounted for.
func (r Result) Flat() bool {
	for _, v := range r.Verdicts {
		if !v.Flat {
			return false
		}
	}
	return r.Account.Lost == 0 && r.Account.Duplicated == 0 && r.Account.Unfinished == 0 && r.Load.Errors == 0
}

// Run starts the production shape, holds it under the load for
// o.Duration, accounts for every session and judges the series.
func Run(ctx context.Context, o Options) (Result, error) {
	logf := func(format string, args ...any) {
		fmt.Fprintf(o.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Result{}, err
	}
	if o.Bin == "" {
		logf("building the production binary (go build ./cmd/paymentsd)")
		bin, err := prodshape.Build(ctx, o.Dir)
		if err != nil {
			return Result{}, err
		}
		o.Bin = bin
	}
	payers := max(4, int(o.CreateRate*o.PayShare*4)+1)
	env := append(append(prodshape.Limits(10_000_000), "SESSION_LIFETIME="+o.SessionLifetime.String()), o.Env...)
	sh, err := prodshape.Start(ctx, prodshape.Options{Bin: o.Bin, Dir: o.Dir, APIs: o.APIs, Workers: o.Workers, Accounts: payers,
		BlockInterval: o.BlockInterval, Env: env,
		Project: func(p *payment.Project) { p.LatePaymentWindow = o.LateWindow }})
	if err != nil {
		return Result{}, err
	}
	defer sh.Close()
	logf("production shape up: %d API and %d worker processes (logs in %s)", len(sh.APIs), len(sh.Workers), o.Dir)
	tc, err := client.Dial(client.Options{HostPort: sh.Temporal.Address, Namespace: sh.Temporal.Namespace, Logger: quiet{}})
	if err != nil {
		return Result{}, err
	}
	defer tc.Close()
	receiver := prodshape.NewReceiver()
	defer receiver.Close()
	planID, err := sh.Merchant(ctx, sh.APIs[0], receiver, "2", "*")
	if err != nil {
		return Result{}, err
	}

	for _, p := range append(append([]*prodshape.Process(nil), sh.APIs...), sh.Workers...) {
		if err := p.WaitMetrics(ctx); err != nil {
			return Result{}, err
		}
	}
	l := newLoad(sh, planID, o)
	s := &sampler{sh: sh, temporal: tc, receiver: receiver, load: l}
	loadCtx, stopLoad := context.WithTimeout(ctx, o.Duration)
	defer stopLoad()
	done := make(chan struct{})
	go func() { l.run(loadCtx); close(done) }()
	samples, err := s.every(loadCtx, o.Interval, func(x Sample) {
		logf("%s: %s", x.Elapsed.Round(time.Second), x.Brief())
	})
	if err != nil {
		// A series that cannot be read ends the run: it would judge nothing.
		stopLoad()
		<-done
		return Result{Samples: samples}, fmt.Errorf("sample: %w", err)
	}
	<-done
	res := Result{Samples: samples, Load: l.counts()}
	logf("load stopped after %v: %s; accounting for every session (up to %v)", o.Duration, res.Load, o.Settle)
	res.Account, err = account(ctx, sh, l, receiver, o.Settle)
	if err != nil {
		return res, err
	}
	res.Verdicts = judge(samples, o.SteadyFrom)
	return res, nil
}

// Write writes the run's CSV and SVG into dir and returns their paths.
func (r Result) Write(dir, name string, steadyFrom time.Duration) (csvPath, svgPath string, err error) {
	csvPath, svgPath = filepath.Join(dir, name+".csv"), filepath.Join(dir, name+".svg")
	if err := os.WriteFile(csvPath, []byte(CSV(r.Samples)), 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(svgPath, []byte(SVG(r.Samples, steadyFrom)), 0o644); err != nil {
		return "", "", err
	}
	return csvPath, svgPath, nil
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
