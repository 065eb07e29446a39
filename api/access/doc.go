// Package access holds the REST handlers of access: members, invitations, the
// project's settings and deposit keys, OAuth (the authorization server's
// endpoints, the consent page's calls, applications and grants) and the
// audit log.
//
// Its Handlers are a view of the server's rest.Edge (the service, the
// deployment's settings, the rate limiters); package api registers each
// handler on its route, with the tier, access and scope of the operations
// table (api/operations.go).
package access

import "github.com/paymentsd/paymentsd/api/internal/rest"

// Handlers are the area's REST handlers, over the server's shared Edge.
type Handlers struct{ *rest.Edge }
