// Package db is the floor the store's areas stand on: the handle on the
// pool and the read replica, the transaction a context carries (InTx),
// the error mapping, the list filters and pages, the decimal helpers,
// the transaction rows and events several areas write, the audit entry,
// and the scanning process's watched set. It holds no area's records;
// every area imports it, and it imports none.
package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsd/paymentsd/payment"
)

// Handle is what every area of the store shares: the pool, the read
// replica and the watched set.
type Handle struct {
	Pool *pgxpool.Pool
	// Replica, when set, is a read replica the lists read (UseReplica).
	Replica *pgxpool.Pool
	// Watched is the scanning process's set of deposit addresses and
	// shared recipients (WatchedRecipients).
	Watched WatchedSet
}

// txKey holds, in a context, the transaction InTx runs in.
type txKey struct{}

// Querier is the pool, or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// DB is where a statement of ctx runs: the transaction of InTx, when ctx
// is in one, else the pool.
func (h *Handle) DB(ctx context.Context) Querier {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return h.Pool
}

// TxOf is the transaction InTx runs ctx in, for a store of its own (the
// OAuth server's) to write in it too.
func TxOf(ctx context.Context) (pgx.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	return tx, ok
}

// InTx runs fn in one transaction, committed if fn returns nil: the
// store's methods called with fn's context (those that use DB) run in it.
// A change and its audit entry are written this way, so that both are
// committed or neither is. Inside a transaction already, fn joins it.
func (h *Handle) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return fn(ctx)
	}
	return h.WithTx(ctx, func(tx pgx.Tx) error { return fn(context.WithValue(ctx, txKey{}, tx)) })
}

// WithTx runs fn in a transaction, committed if fn returns nil.
func (h *Handle) WithTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var tx pgx.Tx
	var err error
	if outer, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		tx, err = outer.Begin(ctx) // within InTx: a savepoint of its transaction
	} else {
		tx, err = h.Pool.Begin(ctx)
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

// MapErr turns pgx errors into the domain's sentinels.
func MapErr(err error) error {
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
