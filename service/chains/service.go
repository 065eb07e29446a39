// Package chains is the service's area of the networks: their
// readiness, rescans, and the reconciliation of the records with the
// chains and the workflows, money in and out, with its repairs. It builds
// on checkout (a stand-in plan's terms) and payments (a transaction's
// workflow resumed).
package chains

import (
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/service/payments"
)

// Service is the operations on the networks and reconciliation: a view of the
// service's one floor (core.Core), which it embeds.
type Service struct{ *core.Core }

// payments is the payments area this one builds on.
func (svc Service) payments() payments.Service { return payments.Service{Core: svc.Core} }
