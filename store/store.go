// Package store keeps the engine's records in Postgres through pgx: the read
// model that the API serves and that activities write. SQL lives next to the
// code that runs it; constraint errors become the domain's sentinel errors so
// nothing from the database reaches a client.
//
// The records are by area, each a package of its own: store/identity
// (accounts, sign-in sessions, passkeys), store/access (members, API
// keys, OAuth, the audit log), store/checkout (projects, plans, sessions
// and their starts), store/payments (transactions, transfers, exports),
// store/moneyout (refunds, payouts, their transactions), store/webhooks
// (endpoints, events, deliveries) and store/chains (scans, watched and
// deposit addresses, finality). They stand on store/internal/db, the
// floor they share: the pool and replica, the transaction of InTx, the
// error mapping, the lists' filters and pages. This package is the
// facade callers use: Open, the transactions, the migrations and the
// idempotency keys, and each area's records as st.Checkout() and so on
// (areas.go, with the names of the areas' types).
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// Migrations holds the schema migrations, applied in order by Migrate.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Store is the engine's Postgres store.
type Store struct {
	// h is what the areas share: the pool, the read replica and the
	// watched set.
	h *db.Handle
}

// Open connects to the database at url.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	return OpenConfig(ctx, cfg)
}

// OpenConfig connects with a pool configuration, for what a URL cannot
// carry (a query tracer, pool hooks).
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return &Store{h: &db.Handle{Pool: pool}}, nil
}

// Close closes the connection pools.
func (s *Store) Close() {
	s.h.Pool.Close()
	if s.h.Replica != nil {
		s.h.Replica.Close()
	}
}

// UseReplica has the paged lists (sessions, transactions, events,
// deliveries, plans, endpoints, refunds, payout batches, the audit log)
// read the read replica at url, the dashboards' and the merchants'
// heaviest reads; everything else, and every write, stays on the primary.
// A list may lag the primary by the replica's replication delay; one the
// replica fails to answer is read from the primary.
func (s *Store) UseReplica(ctx context.Context, url string) error {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse the read replica's url: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to the read replica: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return fmt.Errorf("connect to the read replica: %w", err)
	}
	s.h.Replica = pool
	return nil
}

// Pool returns the underlying pool, for benchmarks and health checks.
func (s *Store) Pool() *pgxpool.Pool { return s.h.Pool }

// Migrate applies every pending migration.
func Migrate(ctx context.Context, url string) error {
	return withMigrations(url, func(_ *sql.DB, p *goose.Provider) error {
		if _, err := p.Up(ctx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		return nil
	})
}

// CheckSchema tells whether the database has every migration this build
// has. A release's processes refuse the schema of an earlier release, so
// that none runs queries its tables cannot answer: `paymentsd migrate`
// comes first. A newer schema is fine (a later release's migrations only
// expand it, so its processes can be rolled back).
func CheckSchema(ctx context.Context, url string) error {
	return withMigrations(url, func(sqlDB *sql.DB, p *goose.Provider) error {
		var migrated bool
		if err := sqlDB.QueryRowContext(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Scan(&migrated); err != nil {
			return fmt.Errorf("read the schema's migration: %w", err)
		}
		sources := p.ListSources()
		current, target := int64(0), sources[len(sources)-1].Version
		if migrated {
			var err error
			if current, err = p.GetDBVersion(ctx); err != nil {
				return fmt.Errorf("read the schema's migration: %w", err)
			}
		}
		if current < target {
			return fmt.Errorf("the database's schema is at migration %d and this release needs %d: run `paymentsd migrate` first", current, target)
		}
		return nil
	})
}

func withMigrations(url string, f func(*sql.DB, *goose.Provider) error) error {
	// Parsed as the pool's URL, so that its pool_* settings are taken
	// and not sent to the server as connection parameters.
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	sqlDB := stdlib.OpenDB(*cfg.ConnConfig)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, mustSub(Migrations, "migrations"))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return f(sqlDB, p)
}

// WithTx runs fn in a transaction, committed if fn returns nil.
func (s *Store) WithTx(ctx context.Context, fn func(pgx.Tx) error) error { return s.h.WithTx(ctx, fn) }

// Refused tells whether the database refused a write for good: an
// integrity constraint (class 23) or a function or trigger that raised
// (class P0), which no retry changes. The unique and foreign key
// violations that the areas turned into ErrConflict and ErrNotFound count
// too (a write reads no row, so those come from no missing row).
func Refused(err error) bool {
	var pe *pgconn.PgError
	if errors.Is(err, payment.ErrConflict) || errors.Is(err, payment.ErrNotFound) {
		return true
	}
	return errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "23") || strings.HasPrefix(pe.Code, "P0"))
}
