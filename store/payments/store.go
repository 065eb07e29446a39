// Package payments holds the store's records of money in: transactions, the
// transfers they record, their progress, and the exports and overview over
// them.
//
// Its Store is reached from the root package as st.Payments().
package payments

import (
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// Store is the area's records, on the store's shared handle.
type Store struct{ h *db.Handle }

// New is the area's records on h.
func New(h *db.Handle) Store { return Store{h} }
