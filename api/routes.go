package api

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/api/moneyout"
	"github.com/paymentsd/paymentsd/internal/observability"
)

func (s *Server) routes() {
	get := func(h func(http.ResponseWriter, *http.Request) error) handlers { return handlers{http.MethodGet: h} }
	s.handle("/api/v1/assets", handlers{http.MethodGet: s.checkout.ListAssets})
	s.handle("/api/v1/projects/{projectId}", handlers{
		http.MethodGet:   s.checkout.GetProject,
		http.MethodPatch: s.access.UpdateProject,
	})
	s.handle("/api/v1/projects/{projectId}/payment-plans", handlers{
		http.MethodGet:  s.checkout.ListPlans,
		http.MethodPost: s.checkout.CreatePlan,
	})
	s.handle("/api/v1/projects/{projectId}/payment-plans/{planId}", handlers{
		http.MethodGet:   s.checkout.GetPlan,
		http.MethodPatch: s.checkout.UpdatePlan,
	})
	s.handle("/api/v1/projects/{projectId}/payment-plans/{planId}/archive", handlers{http.MethodPost: rest.Action(s.checkout.ArchivePlan)})
	s.handle("/api/v1/projects/{projectId}/transactions", get(s.payments.ListTransactions))
	s.handle("/api/v1/projects/{projectId}/transactions/{transactionId}", get(s.payments.GetTransaction))
	s.handle("/api/v1/projects/{projectId}/transactions/{transactionId}/assign", handlers{http.MethodPost: s.payments.AssignTransaction})
	s.handle("/api/v1/projects/{projectId}/checkout-sessions", get(s.checkout.ListSessions))
	s.handle("/api/v1/projects/{projectId}/deposit-addresses", get(s.checkout.ListDepositAddresses))
	s.handle("/api/v1/projects/{projectId}/audit-log", get(s.access.ListAudit))
	s.handle("/api/v1/projects/{projectId}/overview", get(s.payments.Overview))
	s.handle("/api/v1/projects/{projectId}/checkout-sessions/{sessionId}", get(s.checkout.GetSession))
	s.handle("/api/v1/projects/{projectId}/checkout-sessions/{sessionId}/cancel", handlers{http.MethodPost: rest.Action(s.checkout.CancelSession)})
	s.handle("/api/v1/projects/{projectId}/checkout-sessions/{sessionId}/resolve", handlers{http.MethodPost: s.payments.ResolveSession})
	s.handle("/api/v1/checkout/sessions", handlers{http.MethodPost: s.checkout.CreateSession})
	bySession := s.endpointOf(http.MethodGet, "/api/v1/checkout/sessions/{sessionToken}", s.checkout.GetSessionByToken)
	if s.Shape == ShapeSecond {
		bySession.access = optionalKey // the second shape also reads a session by its ID, with a key
	}
	s.mount("/api/v1/checkout/sessions/{sessionToken}", map[string]endpoint{http.MethodGet: bySession})
	s.handle("/api/v1/checkout/sessions/{sessionToken}/payments", handlers{http.MethodPost: s.payments.SubmitPayment})
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
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		rest.OK(w, r, 200, "OK", map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /readyz", s.ready)
	if !s.metricsElsewhere {
		// The dev stack's and a deployment's without METRICS_ADDR: on the
		// API's address, to be kept from the public at the ingress.
		s.mux.Handle("GET /metrics", observability.Handler())
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		rest.Fail(w, r, http.StatusNotFound, "NOT_FOUND", "No route for "+r.Method+" "+r.URL.Path, nil)
	})
}

func (s *Server) accountRoutes() {
	h := s.identity
	s.handle("/api/v1/auth/signup", handlers{http.MethodPost: h.Signup})
	s.handle("/api/v1/auth/login", handlers{http.MethodPost: h.Login})
	s.handle("/api/v1/auth/logout", handlers{http.MethodPost: rest.Action(h.Logout)})
	s.handle("/api/v1/auth/me", handlers{http.MethodGet: h.Me})
	s.handle("/api/v1/auth/password", handlers{http.MethodPost: h.ChangePassword})
	s.handle("/api/v1/auth/sessions", handlers{http.MethodGet: h.ListUserSessions})
	s.handle("/api/v1/auth/sessions/{userSessionId}", handlers{http.MethodDelete: h.RevokeUserSession})
	s.handle("/api/v1/auth/sessions/revoke-others", handlers{http.MethodPost: rest.Action(h.RevokeOtherSessions)})
	s.handle("/api/v1/auth/passkeys", handlers{
		http.MethodGet:  h.ListPasskeys,
		http.MethodPost: h.FinishPasskeyRegistration,
	})
	s.handle("/api/v1/auth/passkeys/registration-options", handlers{http.MethodPost: rest.Action(h.BeginPasskeyRegistration)})
	s.handle("/api/v1/auth/passkeys/{passkeyId}", handlers{
		http.MethodPatch:  h.RenamePasskey,
		http.MethodDelete: h.DeletePasskey,
	})
	s.handle("/api/v1/auth/passkeys/login-options", handlers{http.MethodPost: rest.Action(h.BeginPasskeyLogin)})
	s.handle("/api/v1/auth/passkeys/login", handlers{http.MethodPost: h.PasskeyLogin})
	s.handle("/api/v1/projects", handlers{
		http.MethodGet:  h.ListMyProjects,
		http.MethodPost: h.CreateMyProject,
	})
	s.handle("/api/v1/projects/{projectId}/api-keys", handlers{
		http.MethodGet:  h.ListAPIKeys,
		http.MethodPost: rest.Action(h.CreateAPIKey),
	})
	s.handle("/api/v1/projects/{projectId}/api-keys/{keyId}/revoke", handlers{http.MethodPost: rest.Action(h.RevokeAPIKey)})
	s.handle("/api/v1/projects/{projectId}/api-keys/{keyId}/roll", handlers{http.MethodPost: h.RollAPIKey})
}

func (s *Server) sudoRoutes() {
	h := s.identity
	s.handle("/api/v1/auth/reauthenticate", handlers{http.MethodPost: h.Reauthenticate})
	s.handle("/api/v1/auth/security-log", handlers{http.MethodGet: h.SecurityLog})
	s.handle("/api/v1/projects/{projectId}/invitations/{invitationId}", handlers{http.MethodDelete: h.RevokeInvitation})
}

func (s *Server) memberRoutes() {
	h := s.access
	s.handle("/api/v1/projects/{projectId}/members", handlers{http.MethodGet: h.ListMembers})
	s.handle("/api/v1/projects/{projectId}/members/{userId}", handlers{
		http.MethodPatch:  h.ChangeMemberRole,
		http.MethodDelete: h.RemoveMember,
	})
	s.handle("/api/v1/projects/{projectId}/invitations", handlers{
		http.MethodGet:  h.ListInvitations,
		http.MethodPost: h.Invite,
	})
	s.handle("/api/v1/invitations/accept", handlers{http.MethodPost: h.AcceptInvitation})
	s.handle("/api/v1/projects/{projectId}/deposit-key", handlers{
		http.MethodGet:  h.GetDepositKey,
		http.MethodPost: h.SetDepositKey,
	})
	s.handle("/api/v1/projects/{projectId}/bitcoin-deposit-key", handlers{
		http.MethodGet:  h.GetBitcoinKey,
		http.MethodPost: h.SetBitcoinKey,
	})
}

// oauthRoutes are the authorization server's endpoints (RFC 6749 with
// OAuth 2.1's rules: their bodies are forms and their errors OAuth's),
// the consent page's two calls, and the grants owners and users see and
// revoke.
func (s *Server) oauthRoutes() {
	h := s.access
	s.oauthEndpoint(http.MethodGet, "/oauth/authorize", h.Authorize)
	s.oauthEndpoint(http.MethodPost, "/oauth/token", h.Token)
	s.oauthEndpoint(http.MethodPost, "/oauth/revoke", h.RevokeToken)
	s.oauthEndpoint(http.MethodPost, "/oauth/introspect", h.Introspect)
	s.oauthEndpoint(http.MethodGet, "/.well-known/oauth-authorization-server", h.OauthMetadata)
	s.handle("/api/v1/oauth/authorization", handlers{
		http.MethodGet:  h.AuthorizationRequest,
		http.MethodPost: h.DecideAuthorization,
	})
	s.handle("/api/v1/auth/oauth-grants", handlers{http.MethodGet: h.ListUserGrants})
	s.handle("/api/v1/auth/oauth-grants/{grantId}/revoke", handlers{http.MethodPost: rest.Action(h.RevokeUserGrant)})
	s.handle("/api/v1/projects/{projectId}/oauth-grants", handlers{http.MethodGet: h.ListProjectGrants})
	s.handle("/api/v1/projects/{projectId}/oauth-grants/{grantId}/revoke", handlers{
		http.MethodPost: rest.Action(h.RevokeProjectGrant),
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
			rest.Fail(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method "+r.Method+" is not allowed here; allowed: "+method, nil)
			return
		}
		if err := s.Take(r.Context(), w.Header(), tier, "ip:"+s.ClientIP(r)); err != nil {
			rest.FailErr(w, r, err)
			return
		}
		if s.Svc.OAuth() == nil {
			rest.Fail(w, r, http.StatusNotFound, "NOT_FOUND", "This deployment has no authorization server", nil)
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
	h := s.access
	s.handle("/api/v1/projects/{projectId}/oauth-clients", handlers{
		http.MethodGet:  h.ListOAuthClients,
		http.MethodPost: h.CreateOAuthClient,
	})
	s.handle("/api/v1/projects/{projectId}/oauth-clients/{clientId}/revoke", handlers{
		http.MethodPost: rest.Action(h.RevokeOAuthClient),
	})
}

// checkoutRoutes serve the hosted checkout page and its QR codes, outside
// /api/v1 as hosted pages are.
func (s *Server) checkoutRoutes() {
	h := s.checkout
	s.handle("/checkout/{sessionToken}", handlers{http.MethodGet: h.CheckoutPage})
	s.handle("/checkout/{sessionToken}/qr/{file}", handlers{http.MethodGet: h.CheckoutQR})
	s.handle("/refund/{claimToken}", handlers{http.MethodGet: h.RefundPage})
}

// recipientRoutes are a project's recipient addresses, proven by a signed
// challenge (docs/security.md "Tenant isolation of recipients"): read with
// the project's keys, claimed, verified and removed by its owners.
func (s *Server) recipientRoutes() {
	h := s.checkout
	s.handle("/api/v1/projects/{projectId}/recipients", handlers{
		http.MethodGet:  h.ListRecipients,
		http.MethodPost: h.ClaimRecipient,
	})
	s.handle("/api/v1/projects/{projectId}/recipients/{address}", handlers{
		http.MethodGet:    h.GetRecipient,
		http.MethodDelete: h.DeleteRecipient,
	})
	s.handle("/api/v1/projects/{projectId}/recipients/{address}/verify", handlers{
		http.MethodPost: h.VerifyRecipient,
	})
}

func (s *Server) webhookRoutes() {
	h := s.webhooks
	base := "/api/v1/projects/{projectId}/webhooks"
	s.handle(base, handlers{
		http.MethodGet:  h.ListWebhooks,
		http.MethodPost: h.CreateWebhook,
	})
	s.handle(base+"/{webhookId}", handlers{
		http.MethodGet:    h.GetWebhook,
		http.MethodPatch:  h.UpdateWebhook,
		http.MethodDelete: h.DeleteWebhook,
	})
	s.handle(base+"/{webhookId}/rotate-secret", handlers{http.MethodPost: rest.Action(h.RotateWebhookSecret)})
	s.handle(base+"/{webhookId}/test", handlers{http.MethodPost: rest.Action(h.SendTestEvent)})
	s.handle(base+"/{webhookId}/deliveries", handlers{http.MethodGet: h.ListDeliveries})
	s.handle(base+"/{webhookId}/deliveries/{deliveryId}/redeliver", handlers{http.MethodPost: rest.Action(h.Redeliver)})
	s.handle("/api/v1/projects/{projectId}/events", handlers{http.MethodGet: h.ListEvents})
	s.handle("/api/v1/projects/{projectId}/events/{eventId}", handlers{http.MethodGet: h.GetEvent})
	s.handle("/api/v1/projects/{projectId}/events/{eventId}/deliveries", handlers{http.MethodGet: h.ListEventDeliveries})
}

// refundRoutes are a project's refunds, and the customer's claim link by
// which the address is given.
func (s *Server) refundRoutes() {
	h := s.moneyOut
	s.route("/api/v1/projects/{projectId}/refunds", map[string]endpoint{
		http.MethodGet:  {Relaxed, apiKey, h.ListRefunds},
		http.MethodPost: {SemiRelaxed, apiKey, h.CreateRefund},
	})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}", map[string]endpoint{http.MethodGet: {Relaxed, apiKey, h.GetRefund}})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/address", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, h.SetRefundAddress}})
	// Approval is an owner's, freshly signed in (sensitiveRoutes), as a
	// payout batch's is.
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/approve", map[string]endpoint{http.MethodPost: {Moderate, member, h.ApproveRefund}})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/cancel", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, rest.Action(h.CancelRefund)}})
	s.route("/api/v1/projects/{projectId}/refunds/{refundId}/transaction", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, h.ReportRefundSent}})
	s.route("/api/v1/refund-claims/{claimToken}", map[string]endpoint{http.MethodGet: {Relaxed, public, h.GetRefundClaim}})
	s.route("/api/v1/refund-claims/{claimToken}/address", map[string]endpoint{http.MethodPost: {Strict, public, h.ClaimRefund}})
}

// payoutRoutes are a project's payout batches and payouts. Approval is a
// member's, an owner's with a fresh sign-in (sensitiveRoutes); the rest
// takes API keys as refunds do.
func (s *Server) payoutRoutes() {
	h := s.moneyOut
	s.route(moneyout.PayoutBatchesPattern, map[string]endpoint{
		http.MethodGet:  {Relaxed, apiKey, h.ListPayoutBatches},
		http.MethodPost: {SemiRelaxed, apiKey, h.CreatePayoutBatch},
	})
	s.route(moneyout.PayoutBatchesPattern+"/{batchId}", map[string]endpoint{http.MethodGet: {Relaxed, apiKey, h.GetPayoutBatch}})
	s.route(moneyout.PayoutBatchesPattern+"/{batchId}/approve", map[string]endpoint{http.MethodPost: {Strict, member, rest.Action(h.ApprovePayoutBatch)}})
	s.route(moneyout.PayoutBatchesPattern+"/{batchId}/cancel", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, rest.Action(h.CancelPayoutBatch)}})
	s.route("/api/v1/projects/{projectId}/payouts/{payoutId}", map[string]endpoint{http.MethodGet: {Relaxed, apiKey, h.GetPayout}})
	s.route("/api/v1/projects/{projectId}/payouts/{payoutId}/cancel", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, rest.Action(h.CancelPayout)}})
	s.route("/api/v1/projects/{projectId}/payouts/{payoutId}/transaction", map[string]endpoint{http.MethodPost: {SemiRelaxed, apiKey, h.ReportPayoutSent}})
}

// readForm checks a POST's body is an uncompressed form of at most 64 KiB
// and reads it, or answers 413 or 415.
func (s *Server) readForm(w http.ResponseWriter, r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		rest.Fail(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/x-www-form-urlencoded", nil)
		return false
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		rest.Fail(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding "+ce+" is not accepted: send the form uncompressed", nil)
		return false
	}
	const limit = 64 << 10
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		rest.Fail(w, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf("Request body exceeds %d bytes", limit), nil)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}
