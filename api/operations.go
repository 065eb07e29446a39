package api

import (
	"fmt"

	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
)

// operation is one thing the API does, as each transport serves it: its
// REST route and its Connect procedure read their rate-limit tier, who
// may call them and the OAuth scope an access token needs from the same
// row, so that a twin cannot be limited or scoped apart from the other.
type operation struct {
	// rest is the REST route, "METHOD /path" as the mux names it; every
	// operation has one.
	rest string
	tier Tier
	// access is who may call it; on Connect, apiKey and optionalKey
	// procedures read a credential (the session cookie is REST's alone).
	access access
	// scope is what an OAuth access token needs where a credential is
	// read (apiKey, optionalKey); empty: tokens are not accepted.
	scope string
	// procedure is the Connect twin, "" for none.
	procedure string
}

// operations is every operation of the API. A route or a procedure that
// is not in it refuses to start (New panics), and the tests hold every
// row to a route or procedure that serves it.
var operations = []operation{
	// Projects, plans, transactions and checkout sessions.
	{"GET /api/v1/assets", Relaxed, public, "", paymentsdv1connect.CheckoutServiceListAssetsProcedure},
	{"GET /api/v1/projects/{projectId}", Relaxed, apiKey, "project:read", paymentsdv1connect.PaymentsServiceGetProjectProcedure},
	{"PATCH /api/v1/projects/{projectId}", Moderate, member, "", ""},
	{"GET /api/v1/projects/{projectId}/payment-plans", Relaxed, apiKey, "plans:read", paymentsdv1connect.PaymentsServiceListPaymentPlansProcedure},
	{"POST /api/v1/projects/{projectId}/payment-plans", SemiRelaxed, apiKey, "plans:write", paymentsdv1connect.PaymentsServiceCreatePaymentPlanProcedure},
	{"GET /api/v1/projects/{projectId}/payment-plans/{planId}", Relaxed, apiKey, "plans:read", paymentsdv1connect.PaymentsServiceGetPaymentPlanProcedure},
	{"PATCH /api/v1/projects/{projectId}/payment-plans/{planId}", SemiRelaxed, apiKey, "plans:write", ""},
	{"POST /api/v1/projects/{projectId}/payment-plans/{planId}/archive", SemiRelaxed, apiKey, "plans:write", ""},
	{"GET /api/v1/projects/{projectId}/transactions", Relaxed, apiKey, "transactions:read", paymentsdv1connect.PaymentsServiceListTransactionsProcedure},
	{"GET /api/v1/projects/{projectId}/transactions/{transactionId}", Relaxed, apiKey, "transactions:read", paymentsdv1connect.PaymentsServiceGetTransactionProcedure},
	{"POST /api/v1/projects/{projectId}/transactions/{transactionId}/assign", SemiRelaxed, apiKey, "transactions:write", ""},
	{"GET /api/v1/projects/{projectId}/checkout-sessions", Relaxed, apiKey, "checkout_sessions:read", paymentsdv1connect.PaymentsServiceListCheckoutSessionsProcedure},
	{"GET /api/v1/projects/{projectId}/deposit-addresses", Relaxed, apiKey, "project:read", ""},
	{"GET /api/v1/projects/{projectId}/audit-log", Relaxed, apiKey, "project:read", ""},
	{"GET /api/v1/projects/{projectId}/overview", Relaxed, apiKey, "project:read", ""},
	{"GET /api/v1/projects/{projectId}/checkout-sessions/{sessionId}", Relaxed, apiKey, "checkout_sessions:read", paymentsdv1connect.PaymentsServiceGetProjectCheckoutSessionProcedure},
	{"POST /api/v1/projects/{projectId}/checkout-sessions/{sessionId}/cancel", SemiRelaxed, apiKey, "checkout_sessions:write", ""},
	{"POST /api/v1/projects/{projectId}/checkout-sessions/{sessionId}/resolve", SemiRelaxed, apiKey, "checkout_sessions:write", ""},
	{"POST /api/v1/checkout/sessions", Strict, optionalKey, "checkout_sessions:write", paymentsdv1connect.CheckoutServiceCreateCheckoutSessionProcedure},
	// The second shape reads a session by its ID here too, with a key: the scope is that one's.
	{"GET /api/v1/checkout/sessions/{sessionToken}", Relaxed, public, "checkout_sessions:read", paymentsdv1connect.CheckoutServiceGetCheckoutSessionProcedure},
	{"POST /api/v1/checkout/sessions/{sessionToken}/payments", Standard, public, "", ""},
	// Webhooks and events.
	{"GET /api/v1/projects/{projectId}/webhooks", Relaxed, apiKey, "webhooks:read", ""},
	{"POST /api/v1/projects/{projectId}/webhooks", Moderate, apiKey, "webhooks:write", ""},
	{"DELETE /api/v1/projects/{projectId}/webhooks/{webhookId}", SemiRelaxed, apiKey, "webhooks:write", ""},
	{"GET /api/v1/projects/{projectId}/webhooks/{webhookId}", Relaxed, apiKey, "webhooks:read", ""},
	{"PATCH /api/v1/projects/{projectId}/webhooks/{webhookId}", SemiRelaxed, apiKey, "webhooks:write", ""},
	{"POST /api/v1/projects/{projectId}/webhooks/{webhookId}/rotate-secret", Moderate, apiKey, "webhooks:write", ""},
	{"POST /api/v1/projects/{projectId}/webhooks/{webhookId}/test", Standard, apiKey, "webhooks:write", ""},
	{"GET /api/v1/projects/{projectId}/webhooks/{webhookId}/deliveries", Relaxed, apiKey, "webhooks:read", ""},
	{"POST /api/v1/projects/{projectId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver", Standard, apiKey, "webhooks:write", ""},
	{"GET /api/v1/projects/{projectId}/events", Relaxed, apiKey, "webhooks:read", ""},
	{"GET /api/v1/projects/{projectId}/events/{eventId}", Relaxed, apiKey, "webhooks:read", ""},
	{"GET /api/v1/projects/{projectId}/events/{eventId}/deliveries", Relaxed, apiKey, "webhooks:read", ""},
	// The hosted pages.
	{"GET /checkout/{sessionToken}", Relaxed, public, "", ""},
	{"GET /checkout/{sessionToken}/qr/{file}", Relaxed, public, "", ""},
	{"GET /refund/{claimToken}", Relaxed, public, "", ""},
	{"GET /pay/{planId}", Relaxed, public, "", ""},
	// Accounts, sessions, passkeys, projects and API keys.
	{"POST /api/v1/auth/signup", Moderate, public, "", ""},
	{"POST /api/v1/auth/login", Moderate, public, "", ""},
	{"POST /api/v1/auth/logout", Standard, user, "", ""},
	{"GET /api/v1/auth/me", Relaxed, user, "", ""},
	{"POST /api/v1/auth/password", Strict, user, "", ""},
	{"GET /api/v1/auth/sessions", Relaxed, user, "", ""},
	{"DELETE /api/v1/auth/sessions/{userSessionId}", Standard, user, "", ""},
	{"POST /api/v1/auth/sessions/revoke-others", Standard, user, "", ""},
	{"GET /api/v1/auth/passkeys", Relaxed, user, "", ""},
	{"POST /api/v1/auth/passkeys", Moderate, user, "", ""},
	{"POST /api/v1/auth/passkeys/registration-options", Moderate, user, "", ""},
	{"DELETE /api/v1/auth/passkeys/{passkeyId}", Moderate, user, "", ""},
	{"PATCH /api/v1/auth/passkeys/{passkeyId}", Standard, user, "", ""},
	{"POST /api/v1/auth/passkeys/login-options", Moderate, public, "", ""},
	{"POST /api/v1/auth/passkeys/login", Moderate, public, "", ""},
	{"GET /api/v1/projects", Relaxed, user, "", ""},
	{"POST /api/v1/projects", Moderate, user, "", ""},
	{"GET /api/v1/projects/{projectId}/api-keys", Relaxed, member, "", ""},
	{"POST /api/v1/projects/{projectId}/api-keys", Moderate, member, "", ""},
	{"POST /api/v1/projects/{projectId}/api-keys/{keyId}/revoke", Moderate, member, "", ""},
	{"POST /api/v1/projects/{projectId}/api-keys/{keyId}/roll", Moderate, member, "", ""},
	// Members, invitations and deposit keys.
	{"GET /api/v1/projects/{projectId}/members", Relaxed, member, "", ""},
	{"DELETE /api/v1/projects/{projectId}/members/{userId}", Moderate, member, "", ""},
	{"PATCH /api/v1/projects/{projectId}/members/{userId}", Moderate, member, "", ""},
	{"GET /api/v1/projects/{projectId}/invitations", Relaxed, member, "", ""},
	{"POST /api/v1/projects/{projectId}/invitations", Moderate, member, "", ""},
	{"POST /api/v1/invitations/accept", Standard, user, "", ""},
	{"GET /api/v1/projects/{projectId}/deposit-key", Relaxed, apiKey, "project:read", ""},
	{"POST /api/v1/projects/{projectId}/deposit-key", Moderate, member, "", ""},
	{"GET /api/v1/projects/{projectId}/bitcoin-deposit-key", Relaxed, apiKey, "project:read", ""},
	{"POST /api/v1/projects/{projectId}/bitcoin-deposit-key", Moderate, member, "", ""},
	// Recipients.
	{"GET /api/v1/projects/{projectId}/recipients", Relaxed, apiKey, "project:read", ""},
	{"POST /api/v1/projects/{projectId}/recipients", Moderate, member, "", ""},
	{"DELETE /api/v1/projects/{projectId}/recipients/{address}", Moderate, member, "", ""},
	{"GET /api/v1/projects/{projectId}/recipients/{address}", Relaxed, apiKey, "project:read", ""},
	{"POST /api/v1/projects/{projectId}/recipients/{address}/verify", Moderate, member, "", ""},
	// Refunds.
	{"GET /api/v1/projects/{projectId}/refunds", Relaxed, apiKey, "refunds:read", paymentsdv1connect.PaymentsServiceListRefundsProcedure},
	{"POST /api/v1/projects/{projectId}/refunds", SemiRelaxed, apiKey, "refunds:write", paymentsdv1connect.PaymentsServiceCreateRefundProcedure},
	{"GET /api/v1/projects/{projectId}/refunds/{refundId}", Relaxed, apiKey, "refunds:read", paymentsdv1connect.PaymentsServiceGetRefundProcedure},
	{"POST /api/v1/projects/{projectId}/refunds/{refundId}/address", SemiRelaxed, apiKey, "refunds:write", paymentsdv1connect.PaymentsServiceSetRefundAddressProcedure},
	{"POST /api/v1/projects/{projectId}/refunds/{refundId}/approve", Moderate, member, "", ""},
	{"POST /api/v1/projects/{projectId}/refunds/{refundId}/cancel", SemiRelaxed, apiKey, "refunds:write", paymentsdv1connect.PaymentsServiceCancelRefundProcedure},
	{"POST /api/v1/projects/{projectId}/refunds/{refundId}/transaction", SemiRelaxed, apiKey, "refunds:write", paymentsdv1connect.PaymentsServiceReportRefundTransactionProcedure},
	{"GET /api/v1/refund-claims/{claimToken}", Relaxed, public, "", ""},
	{"POST /api/v1/refund-claims/{claimToken}/address", Strict, public, "", ""},
	// Payouts.
	{"GET /api/v1/projects/{projectId}/payout-batches", Relaxed, apiKey, "payouts:read", paymentsdv1connect.PaymentsServiceListPayoutBatchesProcedure},
	{"POST /api/v1/projects/{projectId}/payout-batches", SemiRelaxed, apiKey, "payouts:write", paymentsdv1connect.PaymentsServiceCreatePayoutBatchProcedure},
	{"GET /api/v1/projects/{projectId}/payout-batches/{batchId}", Relaxed, apiKey, "payouts:read", paymentsdv1connect.PaymentsServiceGetPayoutBatchProcedure},
	{"POST /api/v1/projects/{projectId}/payout-batches/{batchId}/approve", Strict, member, "", ""},
	{"POST /api/v1/projects/{projectId}/payout-batches/{batchId}/cancel", SemiRelaxed, apiKey, "payouts:write", paymentsdv1connect.PaymentsServiceCancelPayoutBatchProcedure},
	{"GET /api/v1/projects/{projectId}/payouts/{payoutId}", Relaxed, apiKey, "payouts:read", paymentsdv1connect.PaymentsServiceGetPayoutProcedure},
	{"POST /api/v1/projects/{projectId}/payouts/{payoutId}/cancel", SemiRelaxed, apiKey, "payouts:write", paymentsdv1connect.PaymentsServiceCancelPayoutProcedure},
	{"POST /api/v1/projects/{projectId}/payouts/{payoutId}/transaction", SemiRelaxed, apiKey, "payouts:write", paymentsdv1connect.PaymentsServiceReportPayoutTransactionProcedure},
	// OAuth applications, sudo mode and the authorization server.
	{"GET /api/v1/projects/{projectId}/oauth-clients", Relaxed, member, "", ""},
	{"POST /api/v1/projects/{projectId}/oauth-clients", Moderate, member, "", ""},
	{"POST /api/v1/projects/{projectId}/oauth-clients/{clientId}/revoke", Moderate, member, "", ""},
	{"POST /api/v1/auth/reauthenticate", Strict, user, "", ""},
	{"GET /api/v1/auth/security-log", Relaxed, user, "", ""},
	{"DELETE /api/v1/projects/{projectId}/invitations/{invitationId}", Moderate, member, "", ""},
	{"GET /oauth/authorize", Relaxed, authorizationServer, "", ""},
	{"POST /oauth/token", Standard, authorizationServer, "", ""},
	{"POST /oauth/revoke", Standard, authorizationServer, "", ""},
	{"POST /oauth/introspect", Relaxed, authorizationServer, "", ""},
	{"GET /.well-known/oauth-authorization-server", Relaxed, authorizationServer, "", ""},
	{"GET /api/v1/oauth/authorization", Relaxed, user, "", ""},
	{"POST /api/v1/oauth/authorization", Moderate, user, "", ""},
	{"GET /api/v1/auth/oauth-grants", Relaxed, user, "", ""},
	{"POST /api/v1/auth/oauth-grants/{grantId}/revoke", Standard, user, "", ""},
	{"GET /api/v1/projects/{projectId}/oauth-grants", Relaxed, member, "", ""},
	{"POST /api/v1/projects/{projectId}/oauth-grants/{grantId}/revoke", Moderate, member, "", ""},
	// The API's own documents.
	{"GET /api/v1/openapi.json", Relaxed, public, "", ""},
	{"GET /api/v1/docs", Relaxed, public, "", ""},
}

// operationsByRoute and operationsByProcedure index operations.
var operationsByRoute, operationsByProcedure = indexOperations(operations)

func indexOperations(ops []operation) (byRoute, byProcedure map[string]operation) {
	byRoute, byProcedure = map[string]operation{}, map[string]operation{}
	for _, op := range ops {
		if _, dup := byRoute[op.rest]; dup {
			panic("operations: " + op.rest + " twice")
		}
		byRoute[op.rest] = op
		if op.procedure == "" {
			continue
		}
		if _, dup := byProcedure[op.procedure]; dup {
			panic("operations: " + op.procedure + " twice")
		}
		byProcedure[op.procedure] = op
	}
	return byRoute, byProcedure
}

// operationOf is the operation of a REST route's method; a route that is
// not in the table is a programming error, caught when the server is
// built.
func operationOf(method, path string) operation {
	op, ok := operationsByRoute[method+" "+path]
	if !ok {
		panic(fmt.Sprintf("%s %s is not in the operations table (api/operations.go)", method, path))
	}
	return op
}

// procedureOperation is the operation of a Connect procedure.
func procedureOperation(procedure string) (operation, bool) {
	op, ok := operationsByProcedure[procedure]
	return op, ok
}
