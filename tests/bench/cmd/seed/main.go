// Command seed fills an empty database with one project's checkout
// sessions and transactions at scale (package tests/bench/seed), then
// prints the project, a sandbox API key and the tables' sizes:
//
//	createdb -h 127.0.0.1 -U postgres paymentsd_scale
//	go run ./tests/bench/cmd/seed -database-url 'postgres://postgres@127.0.0.1:5432/paymentsd_scale?sslmode=disable' \
//		-sessions 1000000 -transactions 1000000
//
// The database is migrated first. One that already holds sessions or
// transactions is refused. The benchmarks of docs/performance.md ("Data at
// scale") seed their own databases with the same code.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tests/bench/seed"
)

func main() {
	url := flag.String("database-url", os.Getenv("DATABASE_URL"), "the database to seed (empty; migrated first); default $DATABASE_URL")
	sessions := flag.Int("sessions", 1_000_000, "checkout sessions to write")
	transactions := flag.Int("transactions", 1_000_000, "transactions to write, one per paid session")
	open := flag.Int("open", seed.DefaultOpen, "the newest sessions to leave open and unpaid (at most a tenth)")
	events := flag.Bool("events", false, "also write each session's and transaction's events (about 4.3 a payment, most of a real database's size)")
	flag.Parse()
	if *url == "" {
		log.Fatal("seed: -database-url (or DATABASE_URL) is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, seed.Options{Sessions: *sessions, Transactions: *transactions, Open: *open, Events: *events,
		Log: func(format string, args ...any) { log.Printf(format, args...) }}); err != nil {
		log.Fatalf("seed: %v", err)
	}
}

func run(ctx context.Context, url string, o seed.Options) error {
	if err := store.Migrate(ctx, url); err != nil {
		return err
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := seed.Seed(ctx, service.New(service.Deps{Store: st, Catalog: seed.Catalog}), st, o)
	if err != nil {
		return err
	}
	fmt.Printf("project %s (sandbox): %d sessions (%d open), %d transactions, %d events in %s\n",
		r.ProjectID, r.Sessions, r.Open, r.Transactions, r.Events, r.Took.Round(time.Second))
	fmt.Printf("sandbox API key: %s\nplan: %s\n", r.SandboxKey, r.PlanID)
	sizes, err := seed.Sizes(ctx, st.Pool())
	if err != nil {
		return err
	}
	payments := float64(r.Transactions)
	for _, s := range sizes {
		line := fmt.Sprintf("%-18s %8.1f MB", s.Table, float64(s.Bytes)/1e6)
		if payments > 0 {
			line += fmt.Sprintf("  %8.1f MB per million payments", float64(s.Bytes)/1e6/payments*1e6)
		}
		fmt.Println(line)
	}
	return nil
}
