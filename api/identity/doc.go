// Package identity holds the REST handlers of identity: sign-up, sign-in, the
// user's sessions, passkeys, projects and API keys, and sudo mode (the
// re-authentication, the security log), with sign-in throttling.
//
// Its Handlers are a view of the server's rest.Edge (the service, the
// deployment's settings, the rate limiters); package api registers each
// handler on its route, with the tier, access and scope of the operations
// table (api/operations.go).
package identity

import "github.com/paymentsd/paymentsd/api/internal/rest"

// Handlers are the area's REST handlers, over the server's shared Edge.
type Handlers struct{ *rest.Edge }
