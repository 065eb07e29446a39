package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/store/internal/db"
)

// TxOf is the transaction InTx runs ctx in, for a store of its own (the
// OAuth server's) to write in it too.
func TxOf(ctx context.Context) (pgx.Tx, bool) { return db.TxOf(ctx) }

// InTx runs fn in one transaction, committed if fn returns nil: the
// store's methods called with fn's context run in it. A change and its
// audit entry are written this way, so that both are committed or neither
// is. Inside a transaction already, fn joins it.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.h.InTx(ctx, fn)
}
