// Package access is the service's area of who may do what in a project:
// members and invitations, API keys, the principal of a signed-in member,
// OAuth applications, consent and grants (with the OAuth server,
// service/oauth), and the audit log. It builds on checkout (a member's view
// of a session, a revoked key forgotten by the keys' cache).
package access

import (
	"github.com/paymentsd/paymentsd/service/checkout"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// Service is the operations on members, keys and applications: a view of the
// service's one floor (core.Core), which it embeds.
type Service struct{ *core.Core }

// checkout is the checkout area this one builds on.
func (svc Service) checkout() checkout.Service { return checkout.Service{Core: svc.Core} }
