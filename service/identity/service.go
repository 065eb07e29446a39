// Package identity is the service's area of accounts and sign-in:
// sign-up and sign-in with a password or a passkey, the sign-in sessions
// behind the dashboard's cookie, password changes, sudo mode's proof and
// the account's security log. It builds on access (a password change, or
// signing out everywhere, ends the applications' grants).
package identity

import (
	"github.com/paymentsd/paymentsd/service/access"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// Service is the operations on accounts and sign-in: a view of the
// service's one floor (core.Core), which it embeds.
type Service struct{ *core.Core }

// access is the access area this one builds on.
func (svc Service) access() access.Service { return access.Service{Core: svc.Core} }
