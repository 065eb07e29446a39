// Package payments holds the REST handlers of payments in: transactions, a payer's
// reported payment, assignments, a session's resolution, the overview and
// the transactions' CSV export.
//
// Its Handlers are a view of the server's rest.Edge (the service, the
// deployment's settings, the rate limiters); package api registers each
// handler on its route, with the tier, access and scope of the operations
// table (api/operations.go).
package payments

import "github.com/paymentsd/paymentsd/api/internal/rest"

// Handlers are the area's REST handlers, over the server's shared Edge.
type Handlers struct{ *rest.Edge }
