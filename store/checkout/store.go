// Package checkout holds the store's records of what a merchant sets up and
// what a payer opens: projects, plans, deposit keys and addresses, shared
// recipients and their holds, checkout sessions and their workflows' starts.
//
// Its Store is reached from the root package as st.Checkout().
package checkout

import (
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// Store is the area's records, on the store's shared handle.
type Store struct{ h *db.Handle }

// New is the area's records on h.
func New(h *db.Handle) Store { return Store{h} }
