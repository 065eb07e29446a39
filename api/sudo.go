package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

// DefaultReauthWindow is how long after the last sign-in or
// re-authentication a session may take a sensitive action (sudo mode).
const DefaultReauthWindow = 10 * time.Minute

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

const (
	memberPattern  = "/api/v1/projects/{projectId}/members/{userId}"
	consentPattern = "/api/v1/oauth/authorization"
	projectPattern = "/api/v1/projects/{projectId}"
)

// leaving is a member removing themselves: any role may.
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

// needsReauthentication is a sensitive action asked by a session whose
// last proof of identity is older than the window.
func (s *Edge) NeedsReauthentication(r *http.Request, in SignedIn, body []byte) bool {
	if !sensitiveRoutes[r.Method+" "+r.Pattern] || takesNothing(r, in, body) {
		return false
	}
	return time.Since(in.Session.AuthenticatedAt) > s.ReauthWindow
}

// reauthenticationRefused answers 403 REAUTHENTICATION_REQUIRED to a
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

// reauthenticate takes {password} or a passkey's answer to a sign-in
// challenge {challengeId, credential}; the session counts as freshly
// signed in. Wrong passwords spend the account's budget from this address
// as failed sign-ins do.
func (s identityAPI) Reauthenticate(w http.ResponseWriter, r *http.Request) error {
	u := CurrentUser(r)
	obj, err := BodyOf(r, ParseObject)
	if err != nil {
		return err
	}
	var probs payment.Problems
	f := NewFields(obj, "", &probs)
	proof := service.Proof{CurrentPassword: f.Str("password")}
	cid, cred := f.Str("challengeId"), f.Raw("credential")
	f.Done()
	if err := probs.Err(); err != nil {
		return err
	}
	if cid != nil {
		proof.ChallengeID = *cid
	}
	if _, isObj := cred.(map[string]any); isObj {
		proof.Credential, _ = json.Marshal(cred)
	}
	ip := s.ClientIP(r)
	if proof.CurrentPassword != nil {
		if err := s.loginGate(r.Context(), w.Header(), u.User.Email, ip); err != nil {
			return err
		}
	}
	if err := s.Svc.Identity().Reauthenticate(r.Context(), u.User, u.Session, proof); err != nil {
		if proof.CurrentPassword != nil && payment.KindOf(err) == payment.KindValidation {
			s.loginFailed(r.Context(), u.User.Email, ip)
		}
		return err
	}
	until := time.Now().Add(s.ReauthWindow)
	OK(w, r, http.StatusOK, "Identity confirmed; sensitive actions are open to this session for a while",
		map[string]any{"sensitiveActionsUntil": views.Time(until)})
	return nil
}

type accountEventView struct {
	ID         string         `json:"id"`
	OccurredAt string         `json:"occurredAt"`
	Action     string         `json:"action"`
	SessionID  string         `json:"sessionId"`
	IP         string         `json:"ip"`
	UserAgent  string         `json:"userAgent"`
	Details    map[string]any `json:"details"`
}

func (s identityAPI) SecurityLog(w http.ResponseWriter, r *http.Request) error {
	list, err := s.Svc.Identity().AccountEvents(r.Context(), CurrentUser(r).User.ID)
	if err != nil {
		return err
	}
	OK(w, r, http.StatusOK, "Security log retrieved", MapSlice(list, func(e payment.AccountEvent) accountEventView {
		d := e.Details
		if d == nil {
			d = map[string]any{}
		}
		return accountEventView{ID: e.ID, OccurredAt: views.Time(e.OccurredAt), Action: e.Action, SessionID: e.SessionID, IP: e.IP,
			UserAgent: e.UserAgent, Details: d}
	}))
	return nil
}

type invitationView struct {
	ID             string `json:"id"`
	Email          string `json:"email"`
	Role           string `json:"role"`
	InvitedBy      string `json:"invitedBy"`
	InvitedByEmail string `json:"invitedByEmail"`
	CreatedAt      string `json:"createdAt"`
	ExpiresAt      string `json:"expiresAt"`
}

func (s identityAPI) RevokeInvitation(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.Svc.Access().RevokeInvitation(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("invitationId"))
	if err != nil {
		return err
	}
	OK(w, r, http.StatusOK, "Invitation revoked", map[string]any{"id": inv.ID, "email": inv.Email})
	return nil
}

// Sign-in throttling (docs/identity.md "Sign-in throttling"). Failed
// passwords are counted per account and client address, and per account:
//   - an address that has spent its budget of failures on an account is
//     refused (429) for that account until the window refills;
//   - an account whose failures, from anywhere, have spent the account's
//     budget is under attack: every attempt on it waits loginSlowdown, and
//     an address that has failed on it at all in the window is refused;
//     an address that has not failed is never refused, so a guesser
//     cannot lock the holder of the password out.
//
// Both budgets are the Moderate tier's, in the rate limiter's store (Redis
// when several replicas run).

// loginSlowdown is the wait of every attempt on an account under attack.
var loginSlowdown = time.Second

func loginPairCounter(email, ip string) string {
	return "login-failure:" + strings.ToLower(strings.TrimSpace(email)) + "|" + ip
}

func loginAccountCounter(email string) string {
	return "login-failure:account:" + strings.ToLower(strings.TrimSpace(email))
}

// spent reads a failure budget without spending it: whether it is
// exhausted, and whether any of it was spent.
func (s identityAPI) spent(ctx context.Context, counter string) (exhausted, touched bool) {
	tokens, remaining, err := s.Limiters[Moderate].Get(ctx, LimitKey(Moderate, counter))
	if err != nil || tokens == 0 {
		return false, false // untouched, or a broken store: never a lockout
	}
	return remaining == 0, remaining < tokens
}

var errLoginThrottled = &payment.Error{Kind: payment.KindRateLimited,
	Message: "Too many failed sign-ins for this account from this address; wait a minute, or sign in from where you usually do"}

// loginGate lets a sign-in attempt on an account from an address go on,
// slowed when the account is under attack, or refuses it.
func (s identityAPI) loginGate(ctx context.Context, out http.Header, email, ip string) error {
	pair := loginPairCounter(email, ip)
	if exhausted, _ := s.spent(ctx, pair); exhausted {
		// Confirm with Take, which refills a bucket whose window passed.
		if err := s.Take(ctx, out, Moderate, pair); err != nil {
			return errLoginThrottled
		}
	}
	account := loginAccountCounter(email)
	attacked, _ := s.spent(ctx, account)
	if attacked {
		// memorystore's Get reports the last window it took from: Take
		// confirms the account's budget is spent in this one (a Take that
		// succeeds starts a new window, and pays a failure in advance).
		_, _, _, allowed, err := s.Limiters[Moderate].Take(ctx, LimitKey(Moderate, account))
		attacked = err == nil && !allowed
	}
	if attacked {
		if _, failedHere := s.spent(ctx, pair); failedHere {
			out.Set("Retry-After", "60")
			return errLoginThrottled
		}
		select {
		case <-time.After(loginSlowdown):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// loginFailed spends one failure of the account from the address, and
// one of the account's.
func (s identityAPI) loginFailed(ctx context.Context, email, ip string) {
	for _, c := range []string{loginPairCounter(email, ip), loginAccountCounter(email)} {
		_, _, _, _, _ = s.Limiters[Moderate].Take(ctx, LimitKey(Moderate, c))
	}
}
