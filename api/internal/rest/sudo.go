package rest

import (
	"maps"
	"net/http"
	"slices"
	"time"
)

// ReauthenticationRequired is the error code (403) of a sensitive action
// asked by a session whose last sign-in is older than the window: the
// client re-authenticates (POST /api/v1/auth/reauthenticate) and retries.
const ReauthenticationRequired = "REAUTHENTICATION_REQUIRED"

// sensitiveRoutes are the actions that take over an account or a
// project's money when a stolen session makes them: a session (the cookie,
// or the second shape's session token) needs a fresh sign-in for them.
// Most are the session's alone: API keys and access tokens are refused
// there. The webhook endpoints' changes are open to API keys and access
// tokens as they were: sudo mode is about a person's browser session, and
// a credential that is no session is never asked to re-authenticate.
var sensitiveRoutes = map[string]bool{
	"POST /api/v1/auth/password":                                        true,
	"POST /api/v1/auth/passkeys/registration-options":                   true,
	"POST /api/v1/auth/passkeys":                                        true,
	"DELETE /api/v1/auth/passkeys/{passkeyId}":                          true,
	"POST /api/v1/projects/{projectId}/api-keys":                        true,
	"POST /api/v1/projects/{projectId}/api-keys/{keyId}/roll":           true,
	"POST /api/v1/projects/{projectId}/deposit-key":                     true,
	"POST /api/v1/projects/{projectId}/bitcoin-deposit-key":             true,
	"POST /api/v1/projects/{projectId}/invitations":                     true,
	"PATCH /api/v1/projects/{projectId}/members/{userId}":               true,
	"DELETE /api/v1/projects/{projectId}/members/{userId}":              true, // removing another; leaving is not
	"POST /api/v1/projects/{projectId}/oauth-clients":                   true,
	"POST /api/v1/projects/{projectId}/oauth-clients/{clientId}/revoke": true,
	// Where a second-shape plan's payments go.
	"POST /api/v1/projects/{projectId}/recipients":                  true,
	"POST /api/v1/projects/{projectId}/recipients/{address}/verify": true,
	"DELETE /api/v1/projects/{projectId}/recipients/{address}":      true,
	// Money paid out of the merchant's treasury.
	"POST /api/v1/projects/{projectId}/payout-batches/{batchId}/approve": true,
	// A refund to an address the merchant gave is a payout: approved alike.
	"POST /api/v1/projects/{projectId}/refunds/{refundId}/approve": true,
	// The project's payment policy: when a payment completes, how short of
	// its amount it may fall, how late it may come, how long a session is
	// open (the name alone is no policy: see takesNothing).
	"PATCH /api/v1/projects/{projectId}": true,
	// An application's lasting access on the user's behalf: allowing it
	// (denying takes nothing: see takesNothing).
	"POST /api/v1/oauth/authorization": true,
	// Where the project's events go, and the secret that signs them.
	"POST /api/v1/projects/{projectId}/webhooks":                           true,
	"PATCH /api/v1/projects/{projectId}/webhooks/{webhookId}":              true,
	"DELETE /api/v1/projects/{projectId}/webhooks/{webhookId}":             true,
	"POST /api/v1/projects/{projectId}/webhooks/{webhookId}/rotate-secret": true,
}

// SensitiveRoute reports whether a route (method and pattern) needs a
// fresh sign-in, for the tests and the documents.
func SensitiveRoute(method, pattern string) bool { return sensitiveRoutes[method+" "+pattern] }

// SensitiveRoutes lists the sensitive routes ("METHOD pattern"), sorted.
func SensitiveRoutes() []string { return slices.Sorted(maps.Keys(sensitiveRoutes)) }

const (
	memberPattern  = "/api/v1/projects/{projectId}/members/{userId}"
	consentPattern = "/api/v1/oauth/authorization"
	projectPattern = "/api/v1/projects/{projectId}"
)

// Leaving is a member removing themselves: any role may.
func Leaving(r *http.Request, in SignedIn) bool {
	return r.Method == http.MethodDelete && r.Pattern == memberPattern && r.PathValue("userId") == in.User.ID
}

// denying is the consent page's "Deny": it gives the application nothing.
// The body is read with the handler's own parser, so that no body reads
// as a denial here and as an allowance there.
func denying(r *http.Request, body []byte) bool {
	if r.Method != http.MethodPost || r.Pattern != consentPattern {
		return false
	}
	obj, err := ParseObject(body)
	return err == nil && obj["decision"] == "deny"
}

// renaming is a project's PATCH that changes its name alone (or
// nothing): no payment setting. The body is read as denying reads it.
func renaming(r *http.Request, body []byte) bool {
	if r.Method != http.MethodPatch || r.Pattern != projectPattern {
		return false
	}
	obj, err := ParseObject(body)
	if err != nil {
		return false
	}
	for k := range obj {
		if k != "name" {
			return false
		}
	}
	return true
}

// takesNothing is a request of a sensitive route that gives no one a way
// in and moves no money: a member leaving, a user denying an application,
// a project renamed. body is the request's (nil for a method without
// one).
func takesNothing(r *http.Request, in SignedIn, body []byte) bool {
	return Leaving(r, in) || denying(r, body) || renaming(r, body)
}

// NeedsReauthentication is a sensitive action asked by a session whose
// last proof of identity is older than the window.
func (s *Edge) NeedsReauthentication(r *http.Request, in SignedIn, body []byte) bool {
	if !sensitiveRoutes[r.Method+" "+r.Pattern] || takesNothing(r, in, body) {
		return false
	}
	return time.Since(in.Session.AuthenticatedAt) > s.ReauthWindow
}

// ReauthenticationRefused answers 403 REAUTHENTICATION_REQUIRED to a
// sensitive action of a session not freshly signed in; after the body is
// read (body, nil for a method without one) and before the idempotency
// key is claimed, so that the retry after re-authenticating runs. A call
// with no session (an API key, an access token) is never refused here.
func (s *Edge) ReauthenticationRefused(w http.ResponseWriter, r *http.Request, signed *SignedIn, body []byte) bool {
	if signed == nil || !s.NeedsReauthentication(r, *signed, body) {
		return false
	}
	Fail(w, r, http.StatusForbidden, ReauthenticationRequired, "This action needs a fresh sign-in: confirm your password or a passkey "+
		"(POST /api/v1/auth/reauthenticate), then retry", nil)
	return true
}
