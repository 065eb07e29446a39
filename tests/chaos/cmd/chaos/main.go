// Command chaos runs the randomized reconciliation run (docs/reconciliation.md): N
// randomized payments against the engine with faults injected, then a
// reconciliation of the engine's records against the chain. It exits 1 on
// any discrepancy. Run it from the repository root: make chaos N=50.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paymentsd/paymentsd/tests/chaos"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == chaos.TemporalServerCommand {
		// The run's Temporal server, started by the run itself.
		if err := chaos.ServeTemporal(os.Args[2:]); err != nil {
			fail(err)
		}
		return
	}
	o := chaos.DefaultOptions()
	classes := flag.String("classes", "all", "payment classes, comma-separated, or a preset (happy, evm, bitcoin, all): "+strings.Join(chaos.AllClasses, ", "))
	faults := flag.String("faults", "all", "fault classes, comma-separated, or a preset (none, happy, bitcoin, money-out, infra, all): "+strings.Join(chaos.AllFaults, ", "))
	flag.IntVar(&o.N, "n", o.N, "number of randomized payments (scenarios)")
	flag.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the scenarios and the faults (default: the time)")
	flag.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "payer accounts, so payments in flight at once")
	flag.DurationVar(&o.PayPhase, "phase", 0, "how long payments start and faults happen (default: a second per payment, at least 1m, and room for the outages)")
	flag.DurationVar(&o.BlockInterval, "block-interval", o.BlockInterval, "the dev chain's block interval")
	flag.IntVar(&o.Confirmations, "confirmations", o.Confirmations, "confirmations before a payment is final")
	flag.DurationVar(&o.ShortLifetime, "short-lifetime", o.ShortLifetime, "lifetime of the sessions that expire during the run")
	flag.DurationVar(&o.Margin, "margin", o.Margin, "uncertainty accepted between a block's time and a session's expiry")
	flag.DurationVar(&o.PendingTimeout, "pending-timeout", o.PendingTimeout, "the network's pending timeout")
	flag.Float64Var(&o.RPCErrorRate, "rpc-error-rate", o.RPCErrorRate, "share of JSON-RPC requests answered with an error (rpc-errors)")
	flag.Float64Var(&o.RPCTimeoutRate, "rpc-timeout-rate", o.RPCTimeoutRate, "share of JSON-RPC requests held unanswered (rpc-timeouts)")
	flag.DurationVar(&o.RPCHold, "rpc-hold", o.RPCHold, "how long a held request is held before its connection is dropped")
	flag.IntVar(&o.Outages, "outages", o.Outages, "node outages (outage)")
	flag.DurationVar(&o.OutageLength, "outage", o.OutageLength, "length of each node outage")
	flag.IntVar(&o.Reorgs, "reorgs", o.Reorgs, "reorgs (reorg)")
	flag.IntVar(&o.MaxReorgDepth, "max-reorg-depth", o.MaxReorgDepth, "deepest reorg, in blocks")
	flag.IntVar(&o.Kills, "kills", o.Kills, "worker kills (kill)")
	flag.DurationVar(&o.BitcoinInterval, "bitcoin-interval", o.BitcoinInterval, "the Bitcoin node's block interval")
	flag.IntVar(&o.BitcoinFinality, "bitcoin-finality", o.BitcoinFinality, "confirmations before a bitcoin payment under 100 USD is final (one more above)")
	flag.IntVar(&o.BitcoinReorgs, "bitcoin-reorgs", o.BitcoinReorgs, "Bitcoin reorgs (btc-reorg)")
	flag.IntVar(&o.BitcoinMaxReorgDepth, "bitcoin-max-reorg-depth", o.BitcoinMaxReorgDepth, "deepest Bitcoin reorg, in blocks")
	flag.IntVar(&o.BitcoinRestarts, "bitcoin-restarts", o.BitcoinRestarts, "Bitcoin node restarts (btc-restart)")
	flag.DurationVar(&o.BitcoinDown, "bitcoin-down", o.BitcoinDown, "how long the Bitcoin node is down in a restart")
	flag.IntVar(&o.TemporalRestarts, "temporal-restarts", o.TemporalRestarts, "kills and restarts of the Temporal server (temporal-restart)")
	flag.DurationVar(&o.TemporalDown, "temporal-down", o.TemporalDown, "how long the Temporal server stays down in a restart")
	flag.IntVar(&o.PostgresRestarts, "postgres-restarts", o.PostgresRestarts, "restarts of the run's own PostgreSQL cluster (postgres-restart)")
	flag.DurationVar(&o.PostgresDown, "postgres-down", o.PostgresDown, "how long the run's PostgreSQL cluster stays down in a restart")
	flag.IntVar(&o.WorkerCuts, "worker-cuts", o.WorkerCuts, "cuts of the worker from Temporal (worker-cut)")
	flag.DurationVar(&o.WorkerCutLength, "worker-cut", o.WorkerCutLength, "how long each cut of the worker from Temporal lasts")
	flag.DurationVar(&o.StaleAfter, "stale-after", o.StaleAfter, "the worker's MONEY_OUT_STALE_AFTER when stuck-tx is injected")
	flag.IntVar(&o.MadeUpHashes, "made-up", 0, "the second project's items reported with made-up hashes (made-up-hashes; default: N/10, at least 4)")
	flag.DurationVar(&o.Settle, "settle", o.Settle, "longest wait for the engine to settle after the payments")
	flag.DurationVar(&o.Stall, "stall", o.Stall, "stop waiting when nothing has been recorded for this long")
	flag.StringVar(&o.Paymentsd, "paymentsd", "", "the production paymentsd binary (default: built into the run's folder)")
	flag.StringVar(&o.Dir, "dir", "", "folder for the run's logs (default .data/chaos/<time>)")
	flag.Parse()

	var err error
	if o.Classes, err = chaos.ParseClasses(*classes); err != nil {
		fail(fmt.Errorf("-classes: %w", err))
	}
	if o.Faults, err = chaos.ParseFaults(*faults); err != nil {
		fail(fmt.Errorf("-faults: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "chaos %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	rep, err := chaos.Run(ctx, o, logf)
	if err != nil {
		fail(err)
	}
	// The report goes to the output and, whole, to the run's folder.
	path := filepath.Join(rep.Dir, "report.txt")
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	rep.Print(io.MultiWriter(os.Stdout, f))
	if err := f.Close(); err != nil {
		fail(err)
	}
	fmt.Printf("report written to %s\n", path)
	if rep.Failed() {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "chaos:", err)
	os.Exit(2)
}
