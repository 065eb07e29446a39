package api

import (
	"net/http"

	"github.com/paymentsd/paymentsd/internal/observability"
)

func (s *Server) routes() {
	get := func(h func(http.ResponseWriter, *http.Request) error) handlers { return handlers{http.MethodGet: h} }
	s.handle("/api/v1/assets", handlers{http.MethodGet: s.checkout().listAssets})
	s.handle("/api/v1/projects/{projectId}", handlers{
		http.MethodGet:   s.checkout().getProject,
		http.MethodPatch: s.access().updateProject,
	})
	s.handle("/api/v1/projects/{projectId}/payment-plans", handlers{
		http.MethodGet:  s.checkout().listPlans,
		http.MethodPost: s.checkout().createPlan,
	})
	s.handle("/api/v1/projects/{projectId}/payment-plans/{planId}", handlers{
		http.MethodGet:   s.checkout().getPlan,
		http.MethodPatch: s.checkout().updatePlan,
	})
	s.handle("/api/v1/projects/{projectId}/payment-plans/{planId}/archive", handlers{http.MethodPost: action(s.checkout().archivePlan)})
	s.handle("/api/v1/projects/{projectId}/transactions", get(s.payments().listTransactions))
	s.handle("/api/v1/projects/{projectId}/transactions/{transactionId}", get(s.payments().getTransaction))
	s.handle("/api/v1/projects/{projectId}/transactions/{transactionId}/assign", handlers{http.MethodPost: s.payments().assignTransaction})
	s.handle("/api/v1/projects/{projectId}/checkout-sessions", get(s.checkout().listSessions))
	s.handle("/api/v1/projects/{projectId}/deposit-addresses", get(s.checkout().listDepositAddresses))
	s.handle("/api/v1/projects/{projectId}/audit-log", get(s.access().listAudit))
	s.handle("/api/v1/projects/{projectId}/overview", get(s.payments().overview))
	s.handle("/api/v1/projects/{projectId}/checkout-sessions/{sessionId}", get(s.checkout().getSession))
	s.handle("/api/v1/projects/{projectId}/checkout-sessions/{sessionId}/cancel", handlers{http.MethodPost: action(s.checkout().cancelSession)})
	s.handle("/api/v1/projects/{projectId}/checkout-sessions/{sessionId}/resolve", handlers{http.MethodPost: s.payments().resolveSession})
	s.handle("/api/v1/checkout/sessions", handlers{http.MethodPost: s.checkout().createSession})
	bySession := s.endpointOf(http.MethodGet, "/api/v1/checkout/sessions/{sessionToken}", s.checkout().getSessionByToken)
	if s.shape == ShapeSecond {
		bySession.access = optionalKey // the second shape also reads a session by its ID, with a key
	}
	s.mount("/api/v1/checkout/sessions/{sessionToken}", map[string]endpoint{http.MethodGet: bySession})
	s.handle("/api/v1/checkout/sessions/{sessionToken}/payments", handlers{http.MethodPost: s.payments().submitPayment})
	s.webhookRoutes()
	s.checkoutRoutes()
	s.dashboardRoutes()
	s.accountRoutes()
	s.memberRoutes()
	s.recipientRoutes()
	s.refundRoutes()
	s.payoutRoutes()
	s.oauthClientRoutes()
	s.sudoRoutes()
	s.oauthRoutes()
	s.connectHandlers()
	s.docsRoutes()
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { ok(w, r, 200, "OK", map[string]string{"status": "ok"}) })
	s.mux.HandleFunc("GET /readyz", s.ready)
	if !s.metricsElsewhere {
		// The dev stack's and a deployment's without METRICS_ADDR: on the
		// API's address, to be kept from the public at the ingress.
		s.mux.Handle("GET /metrics", observability.Handler())
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, http.StatusNotFound, "NOT_FOUND", "No route for "+r.Method+" "+r.URL.Path, nil)
	})
}

func (s *Server) accountRoutes() {
	h := s.identity()
	s.handle("/api/v1/auth/signup", handlers{http.MethodPost: h.signup})
	s.handle("/api/v1/auth/login", handlers{http.MethodPost: h.login})
	s.handle("/api/v1/auth/logout", handlers{http.MethodPost: action(h.logout)})
	s.handle("/api/v1/auth/me", handlers{http.MethodGet: h.me})
	s.handle("/api/v1/auth/password", handlers{http.MethodPost: h.changePassword})
	s.handle("/api/v1/auth/sessions", handlers{http.MethodGet: h.listUserSessions})
	s.handle("/api/v1/auth/sessions/{userSessionId}", handlers{http.MethodDelete: h.revokeUserSession})
	s.handle("/api/v1/auth/sessions/revoke-others", handlers{http.MethodPost: action(h.revokeOtherSessions)})
	s.handle("/api/v1/auth/passkeys", handlers{
		http.MethodGet:  h.listPasskeys,
		http.MethodPost: h.finishPasskeyRegistration,
	})
	s.handle("/api/v1/auth/passkeys/registration-options", handlers{http.MethodPost: action(h.beginPasskeyRegistration)})
	s.handle("/api/v1/auth/passkeys/{passkeyId}", handlers{
		http.MethodPatch:  h.renamePasskey,
		http.MethodDelete: h.deletePasskey,
	})
	s.handle("/api/v1/auth/passkeys/login-options", handlers{http.MethodPost: action(h.beginPasskeyLogin)})
	s.handle("/api/v1/auth/passkeys/login", handlers{http.MethodPost: h.passkeyLogin})
	s.handle("/api/v1/projects", handlers{
		http.MethodGet:  h.listMyProjects,
		http.MethodPost: h.createMyProject,
	})
	s.handle("/api/v1/projects/{projectId}/api-keys", handlers{
		http.MethodGet:  h.listAPIKeys,
		http.MethodPost: action(h.createAPIKey),
	})
	s.handle("/api/v1/projects/{projectId}/api-keys/{keyId}/revoke", handlers{http.MethodPost: action(h.revokeAPIKey)})
	s.handle("/api/v1/projects/{projectId}/api-keys/{keyId}/roll", handlers{http.MethodPost: h.rollAPIKey})
}

func (s *Server) sudoRoutes() {
	h := s.identity()
	s.handle("/api/v1/auth/reauthenticate", handlers{http.MethodPost: h.reauthenticate})
	s.handle("/api/v1/auth/security-log", handlers{http.MethodGet: h.securityLog})
	s.handle("/api/v1/projects/{projectId}/invitations/{invitationId}", handlers{http.MethodDelete: h.revokeInvitation})
}

func (s *Server) memberRoutes() {
	h := s.access()
	s.handle("/api/v1/projects/{projectId}/members", handlers{http.MethodGet: h.listMembers})
	s.handle("/api/v1/projects/{projectId}/members/{userId}", handlers{
		http.MethodPatch:  h.changeMemberRole,
		http.MethodDelete: h.removeMember,
	})
	s.handle("/api/v1/projects/{projectId}/invitations", handlers{
		http.MethodGet:  h.listInvitations,
		http.MethodPost: h.invite,
	})
	s.handle("/api/v1/invitations/accept", handlers{http.MethodPost: h.acceptInvitation})
	s.handle("/api/v1/projects/{projectId}/deposit-key", handlers{
		http.MethodGet:  h.getDepositKey,
		http.MethodPost: h.setDepositKey,
	})
	s.handle("/api/v1/projects/{projectId}/bitcoin-deposit-key", handlers{
		http.MethodGet:  h.getBitcoinKey,
		http.MethodPost: h.setBitcoinKey,
	})
}

// oauthRoutes are the authorization server's endpoints (RFC 6749 with
// OAuth 2.1's rules: their bodies are forms and their errors OAuth's),
// the consent page's two calls, and the grants owners and users see and
// revoke.
func (s *Server) oauthRoutes() {
	h := s.access()
	s.oauthEndpoint(http.MethodGet, "/oauth/authorize", h.authorize)
	s.oauthEndpoint(http.MethodPost, "/oauth/token", h.token)
	s.oauthEndpoint(http.MethodPost, "/oauth/revoke", h.revokeToken)
	s.oauthEndpoint(http.MethodPost, "/oauth/introspect", h.introspect)
	s.oauthEndpoint(http.MethodGet, "/.well-known/oauth-authorization-server", h.oauthMetadata)
	s.handle("/api/v1/oauth/authorization", handlers{
		http.MethodGet:  h.authorizationRequest,
		http.MethodPost: h.decideAuthorization,
	})
	s.handle("/api/v1/auth/oauth-grants", handlers{http.MethodGet: h.listUserGrants})
	s.handle("/api/v1/auth/oauth-grants/{grantId}/revoke", handlers{http.MethodPost: action(h.revokeUserGrant)})
	s.handle("/api/v1/projects/{projectId}/oauth-grants", handlers{http.MethodGet: h.listProjectGrants})
	s.handle("/api/v1/projects/{projectId}/oauth-grants/{grantId}/revoke", handlers{
		http.MethodPost: action(h.revokeProjectGrant),
	})
}

// oauthEndpoint serves one method of an authorization server's endpoint,
// counted per client IP in the operations table's tier. Its body is a
// form of at most 64 KiB.
// Its answers are OAuth's (RFC 6749 §5.2), but for the limits the API
// enforces before reading it (429, 413, 415), in the API's envelope.
func (s *Server) oauthEndpoint(method, path string, handle http.HandlerFunc) {
	tier := operationOf(method, path).tier
	s.table = append(s.table, Route{Pattern: path, Method: method, Tier: tier, Access: accessNames[authorizationServer]})
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			fail(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method "+r.Method+" is not allowed here; allowed: "+method, nil)
			return
		}
		if err := s.take(r.Context(), w.Header(), tier, "ip:"+s.clientIP(r)); err != nil {
			failErr(w, r, err)
			return
		}
		if s.svc.OAuth() == nil {
			fail(w, r, http.StatusNotFound, "NOT_FOUND", "This deployment has no authorization server", nil)
			return
		}
		if r.Method == http.MethodPost && !s.readForm(w, r) {
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		handle(w, r)
	})
}

// oauthClientRoutes are a project's registered third-party applications:
// its owners' to manage, with the session cookie.
func (s *Server) oauthClientRoutes() {
	h := s.access()
	s.handle("/api/v1/projects/{projectId}/oauth-clients", handlers{
		http.MethodGet:  h.listOAuthClients,
		http.MethodPost: h.createOAuthClient,
	})
	s.handle("/api/v1/projects/{projectId}/oauth-clients/{clientId}/revoke", handlers{
		http.MethodPost: action(h.revokeOAuthClient),
	})
}

// checkoutRoutes serve the hosted checkout page and its QR codes, outside
// /api/v1 as hosted pages are.
func (s *Server) checkoutRoutes() {
	h := s.checkout()
	s.handle("/checkout/{sessionToken}", handlers{http.MethodGet: h.checkoutPage})
	s.handle("/checkout/{sessionToken}/qr/{file}", handlers{http.MethodGet: h.checkoutQR})
	s.handle("/refund/{claimToken}", handlers{http.MethodGet: h.refundPage})
}

// recipientRoutes are a project's recipient addresses, proven by a signed
// challenge (docs/security.md "Tenant isolation of recipients"): read with
// the project's keys, claimed, verified and removed by its owners.
func (s *Server) recipientRoutes() {
	h := s.checkout()
	s.handle("/api/v1/projects/{projectId}/recipients", handlers{
		http.MethodGet:  h.listRecipients,
		http.MethodPost: h.claimRecipient,
	})
	s.handle("/api/v1/projects/{projectId}/recipients/{address}", handlers{
		http.MethodGet:    h.getRecipient,
		http.MethodDelete: h.deleteRecipient,
	})
	s.handle("/api/v1/projects/{projectId}/recipients/{address}/verify", handlers{
		http.MethodPost: h.verifyRecipient,
	})
}

func (s *Server) webhookRoutes() {
	h := s.webhooks()
	base := "/api/v1/projects/{projectId}/webhooks"
	s.handle(base, handlers{
		http.MethodGet:  h.listWebhooks,
		http.MethodPost: h.createWebhook,
	})
	s.handle(base+"/{webhookId}", handlers{
		http.MethodGet:    h.getWebhook,
		http.MethodPatch:  h.updateWebhook,
		http.MethodDelete: h.deleteWebhook,
	})
	s.handle(base+"/{webhookId}/rotate-secret", handlers{http.MethodPost: action(h.rotateWebhookSecret)})
	s.handle(base+"/{webhookId}/test", handlers{http.MethodPost: action(h.sendTestEvent)})
	s.handle(base+"/{webhookId}/deliveries", handlers{http.MethodGet: h.listDeliveries})
	s.handle(base+"/{webhookId}/deliveries/{deliveryId}/redeliver", handlers{http.MethodPost: action(h.redeliver)})
	s.handle("/api/v1/projects/{projectId}/events", handlers{http.MethodGet: h.listEvents})
	s.handle("/api/v1/projects/{projectId}/events/{eventId}", handlers{http.MethodGet: h.getEvent})
	s.handle("/api/v1/projects/{projectId}/events/{eventId}/deliveries", handlers{http.MethodGet: h.listEventDeliveries})
}

// refundRoutes are a project's refunds, and the customer's claim link by
// which the address is given.
func (s *Server) refundRoutes() {
	h := s.moneyOut()
	s.route("/api/v1/projects/{projectId}/refunds", map[string]endpoint{
		http.MethodGet:  {Relaxed, apiKey, h.listRefunds},
		http.MethodPost: {SemiRelaxed, apiKey, h.createRefund},
	})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}", map[string]endpoint{http.MethodGet: {Relaxed, apiKey, h.getRefund}})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/address", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, h.setRefundAddress}})
	// Approval is an owner's, freshly signed in (sensitiveRoutes), as a
	// payout batch's is.
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/approve", map[string]endpoint{http.MethodPost: {Moderate, member, h.approveRefund}})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/cancel", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, action(h.cancelRefund)}})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/transaction", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, h.reportRefundSent}})
	s.route("/api/v1/refund-claims/{claimToken}", map[string]endpoint{http.MethodGet: {Relaxed, public, h.getRefundClaim}})
	s.route("/api/v1/refund-claims/{claimToken}/address", map[string]endpoint{http.MethodPost: {Strict, public, h.claimRefund}})
}

// payoutRoutes are a project's payout batches and payouts. Approval is a
// member's, an owner's with a fresh sign-in (sensitiveRoutes); the rest
// takes API keys as refunds do.
func (s *Server) payoutRoutes() {
	h := s.moneyOut()
	s.route(payoutBatchesPattern, map[string]endpoint{
		http.MethodGet:  {Relaxed, apiKey, h.listPayoutBatches},
		http.MethodPost: {SemiRelaxed, apiKey, h.createPayoutBatch},
	})
	s.route(payoutBatchesPattern+"/{batchId}", map[string]endpoint{http.MethodGet: {Relaxed, apiKey, h.getPayoutBatch}})
	s.route(payoutBatchesPattern+"/{batchId}/approve", map[string]endpoint{http.MethodPost: {Strict, member, action(h.approvePayoutBatch)}})
	s.route(payoutBatchesPattern+"/{batchId}/cancel", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, action(h.cancelPayoutBatch)}})
	s.route("/api/v1/projects/{projectId}/payouts/{payoutId}", map[string]endpoint{http.MethodGet: {Relaxed, apiKey, h.getPayout}})
	s.route("/api/v1/projects/{projectId}/payouts/{payoutId}/cancel", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, action(h.cancelPayout)}})
	s.route("/api/v1/projects/{projectId}/payouts/{payoutId}/transaction", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, h.reportPayoutSent}})
}
