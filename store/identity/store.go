// Package identity holds the store's records of people: accounts, their
// sign-in sessions, passkeys and the account's security log.
//
// Its Store is reached from the root package as st.Identity().
package identity

import (
	"context"

	"github.com/paymentsd/paymentsd/store/internal/db"
)

// Store is the area's records, on the store's shared handle.
type Store struct{ h *db.Handle }

// New is the area's records on h.
func New(h *db.Handle) Store { return Store{h} }

// db is where a statement of ctx runs (db.Handle.DB).
func (s Store) db(ctx context.Context) db.Querier { return s.h.DB(ctx) }
