package api

// The REST handlers by area, each a view of the one Server (the same
// service, limiter and mux); the Server keeps the routing, the
// middleware (authentication, limits, idempotency) and the views every
// area renders. The routes (routes, dashboardRoutes) name the area of
// each handler: s.checkout().createSession.

// identityAPI: sign-up, sign-in, sessions, passkeys and sudo mode.
type identityAPI struct{ *Edge }

// accessAPI: members, invitations, API keys, OAuth and the audit log.
type accessAPI struct{ *Edge }

// checkoutAPI: projects, plans, sessions, deposit addresses, recipients
// and the hosted checkout page.
type checkoutAPI struct{ *Edge }

// paymentsAPI: transactions, a payer's hash, assignments, resolutions,
// the overview and exports.
type paymentsAPI struct{ *Edge }

// moneyOutAPI: refunds and payouts.
type moneyOutAPI struct{ *Edge }

// webhooksAPI: endpoints, events and deliveries.
type webhooksAPI struct{ *Edge }

func (s *Server) identity() identityAPI { return identityAPI{s.Edge} }
func (s *Server) access() accessAPI     { return accessAPI{s.Edge} }
func (s *Server) checkout() checkoutAPI { return checkoutAPI{s.Edge} }
func (s *Server) payments() paymentsAPI { return paymentsAPI{s.Edge} }
func (s *Server) moneyOut() moneyOutAPI { return moneyOutAPI{s.Edge} }
func (s *Server) webhooks() webhooksAPI { return webhooksAPI{s.Edge} }
