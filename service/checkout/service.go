// Package checkout is the service's area of what a merchant sells and a
// payer opens: projects and their settings, API keys' authentication,
// plans, deposit keys and addresses (EVM and Bitcoin), shared recipient
// addresses, and checkout sessions with their quotes and workflows. It
// builds on no other area.
package checkout

import (
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// Service is the operations on projects, plans and sessions: a view of the
// service's one floor (core.Core), which it embeds.
type Service struct{ *core.Core }
