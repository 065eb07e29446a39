// Command soak holds the production shape under a steady mix for a while
// and says whether memory, goroutines, database connections and
// Temporal's backlog stayed flat, and whether every session it opened is
// accounted for (docs/performance.md, "Soak"). It writes soak.csv and
// soak.svg into -dir and exits 1 when a series is not flat or a session
// is lost or unfinished. Run it from the repository root:
//
//	TEMPORAL_PERSISTENCE=postgres go run ./tests/soak/cmd/soak -duration 30m
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paymentsd/paymentsd/tests/soak"
)

func main() {
	o := soak.DefaultOptions()
	flag.DurationVar(&o.Duration, "duration", o.Duration, "how long the load runs")
	flag.DurationVar(&o.SteadyFrom, "steady-from", o.SteadyFrom, "when the steady state is judged from (to the end)")
	flag.DurationVar(&o.Interval, "interval", o.Interval, "how often the series are sampled")
	flag.Float64Var(&o.CreateRate, "create-rate", o.CreateRate, "checkout sessions opened a second")
	flag.Float64Var(&o.PayShare, "pay-share", o.PayShare, "share of the sessions paid on the dev chain")
	flag.Float64Var(&o.ReadRate, "read-rate", o.ReadRate, "reads a second")
	flag.IntVar(&o.APIs, "apis", o.APIs, "`paymentsd api` processes")
	flag.IntVar(&o.Workers, "workers", o.Workers, "`paymentsd worker` processes")
	flag.DurationVar(&o.BlockInterval, "block-interval", o.BlockInterval, "the dev chain's block interval")
	flag.DurationVar(&o.SessionLifetime, "session-lifetime", o.SessionLifetime, "SESSION_LIFETIME of the processes")
	flag.DurationVar(&o.LateWindow, "late-window", o.LateWindow, "the project's late-payment window")
	flag.DurationVar(&o.Settle, "settle", o.Settle, "longest wait, after the load, for every session to be accounted for")
	flag.StringVar(&o.Bin, "paymentsd", "", "the production paymentsd binary (default: built into -dir)")
	flag.Func("env", "NAME=VALUE added to every process's environment (repeat it for more)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want NAME=VALUE, not %q", v)
		}
		o.Env = append(o.Env, v)
		return nil
	})
	dir := flag.String("dir", "", "folder for the logs, soak.csv and soak.svg (default .data/soak/<time>)")
	flag.Parse()
	o.Dir = *dir
	if o.Dir == "" {
		o.Dir = filepath.Join(".data", "soak", time.Now().Format("20060102-150405"))
	}
	if os.Getenv("TEMPORAL_PERSISTENCE") == "" {
		// The production shape keeps Temporal's state in Postgres.
		_ = os.Setenv("TEMPORAL_PERSISTENCE", "postgres")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := soak.Run(ctx, o)
	if len(res.Samples) > 0 {
		csvPath, svgPath, werr := res.Write(o.Dir, "soak", o.SteadyFrom)
		if werr != nil {
			fail(werr)
		}
		fmt.Printf("\nsamples: %s\nplot:    %s\n", csvPath, svgPath)
	}
	if err == nil && len(res.Samples) < 2 {
		err = fmt.Errorf("%d samples: run longer than -interval", len(res.Samples))
	}
	if err != nil {
		fail(err)
	}
	fmt.Printf("\nload: %s\naccount: %s\n\n%s", res.Load, res.Account, soak.Summary(res.Verdicts, o.SteadyFrom, res.Samples[len(res.Samples)-1].Elapsed))
	if !res.Flat() {
		fmt.Println("\nNOT FLAT, or work not accounted for: see above")
		os.Exit(1)
	}
	fmt.Println("\nflat, and every session accounted for")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "soak:", err)
	os.Exit(2)
}
