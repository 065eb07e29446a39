package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// txKey holds, in a context, the transaction InTx runs in.
type txKey struct{}

// dbQuerier is the pool, or a transaction.
type dbQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// db is where a statement of ctx runs: the transaction of InTx, when ctx
// is in one, else the pool.
func (s *Store) db(ctx context.Context) dbQuerier {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return s.pool
}

// TxOf is the transaction InTx runs ctx in, for a store of its own (the
// OAuth server's) to write in it too.
func TxOf(ctx context.Context) (pgx.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	return tx, ok
}

// InTx runs fn in one transaction, committed if fn returns nil: the
// store's methods called with fn's context (those that use db) run in it.
// A change and its audit entry are written this way, so that both are
// committed or neither is. Inside a transaction already, fn joins it.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return fn(ctx)
	}
	return s.WithTx(ctx, func(tx pgx.Tx) error { return fn(context.WithValue(ctx, txKey{}, tx)) })
}
