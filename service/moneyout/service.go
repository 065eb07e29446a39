// Package moneyout is the service's area of money out: refunds, payout
// batches and their payouts, and the outgoing transactions that pay them
// (reported sent, followed, canceled). It builds on checkout (a refund
// goes to a session's payer, at the session's rates).
package moneyout

import (
	"github.com/paymentsd/paymentsd/service/checkout"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// Service is the operations on refunds and payouts: a view of the
// service's one floor (core.Core), which it embeds.
type Service struct{ *core.Core }

// checkout is the checkout area this one builds on.
func (svc Service) checkout() checkout.Service { return checkout.Service{Core: svc.Core} }
