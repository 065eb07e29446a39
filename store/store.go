// Package store keeps the engine's records in Postgres through pgx: the read
// model that the API serves and that activities write. SQL lives next to the
// code that runs it; constraint errors become the domain's sentinel errors so
// nothing from the database reaches a client.
//
// The records are by area (areas.go), each a view of the one Store:
// Identity (accounts, sign-in sessions, passkeys), Access (members, API
// keys, OAuth, the audit log), Checkout (projects, plans, sessions and
// their starts), Payments (transactions, transfers, exports), MoneyOut
// (refunds, payouts, their transactions), Webhooks (endpoints, events,
// deliveries) and Chains (scans, watched and deposit addresses,
// finality). A file holds one area's records; the Store keeps the pool,
// transactions and idempotency keys.
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
)

// Migrations holds the schema migrations, applied in order by Migrate.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Store is the engine's Postgres store.
type Store struct {
	pool *pgxpool.Pool
	// replica, when set, is a read replica the lists read (UseReplica).
	replica *pgxpool.Pool
	// watched is the scanning process's set of deposit addresses and
	// shared recipients (WatchedRecipients).
	watched watchedSet
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
	return &Store{pool: pool}, nil
}

// Close closes the connection pools.
func (s *Store) Close() {
	s.pool.Close()
	if s.replica != nil {
		s.replica.Close()
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
	s.replica = pool
	return nil
}

// Pool returns the underlying pool, for benchmarks and health checks.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

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
	return withMigrations(url, func(db *sql.DB, p *goose.Provider) error {
		var migrated bool
		if err := db.QueryRowContext(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Scan(&migrated); err != nil {
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
	db := stdlib.OpenDB(*cfg.ConnConfig)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, mustSub(Migrations, "migrations"))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return f(db, p)
}

// WithTx runs fn in a transaction, committed if fn returns nil.
func (s *Store) WithTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var tx pgx.Tx
	var err error
	if outer, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		tx, err = outer.Begin(ctx) // within InTx: a savepoint of its transaction
	} else {
		tx, err = s.pool.Begin(ctx)
	}
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		// Roll back even if ctx is canceled, so the connection returns clean.
		_ = tx.Rollback(context.WithoutCancel(ctx))
	}()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Refused tells whether the database refused a write for good: an
// integrity constraint (class 23) or a function or trigger that raised
// (class P0), which no retry changes. The unique and foreign key
// violations that mapErr turned into ErrConflict and ErrNotFound count
// too (a write reads no row, so those come from no missing row).
func Refused(err error) bool {
	var pe *pgconn.PgError
	if errors.Is(err, payment.ErrConflict) || errors.Is(err, payment.ErrNotFound) {
		return true
	}
	return errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "23") || strings.HasPrefix(pe.Code, "P0"))
}

// mapErr turns pgx errors into the domain's sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return payment.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return payment.ErrConflict
		case "23503": // foreign_key_violation
			return payment.ErrNotFound
		}
	}
	return err
}
