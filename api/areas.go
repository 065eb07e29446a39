package api

// The REST handlers by area, each a view of the one Server (the same
// service, limiter and mux); the Server keeps the routing, the
// middleware (authentication, limits, idempotency) and the views every
// area renders. The routes (routes, dashboardRoutes) name the area of
// each handler: s.checkout().createSession.

// identityAPI: sign-up, sign-in, sessions, passkeys and sudo mode.
type identityAPI struct{ *Server }

// accessAPI: members, invitations, API keys, OAuth and the audit log.
type accessAPI struct{ *Server }

// checkoutAPI: projects, plans, sessions, deposit addresses, recipients
// and the hosted checkout page.
type checkoutAPI struct{ *Server }

// paymentsAPI: transactions, a payer's hash, assignments, resolutions,
// the overview and exports.
type paymentsAPI struct{ *Server }

// moneyOutAPI: refunds and payouts.
type moneyOutAPI struct{ *Server }

// webhooksAPI: endpoints, events and deliveries.
type webhooksAPI struct{ *Server }

func (s *Server) identity() identityAPI { return identityAPI{s} }
func (s *Server) access() accessAPI     { return accessAPI{s} }
func (s *Server) checkout() checkoutAPI { return checkoutAPI{s} }
func (s *Server) payments() paymentsAPI { return paymentsAPI{s} }
func (s *Server) moneyOut() moneyOutAPI { return moneyOutAPI{s} }
func (s *Server) webhooks() webhooksAPI { return webhooksAPI{s} }
