// Package payments is the service's area of money in: transactions, a
// payer's submitted transaction hash, the assignment of a transfer to a
// session, a transaction's workflow resumed, the overview and the
// exports. It builds on checkout (a payment belongs to a session).
package payments

import (
	"github.com/paymentsd/paymentsd/service/checkout"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// Service is the operations on money in: a view of the
// service's one floor (core.Core), which it embeds.
type Service struct{ *core.Core }

// checkout is the checkout area this one builds on.
func (svc Service) checkout() checkout.Service { return checkout.Service{Core: svc.Core} }
