package rest

import (
	"context"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
)

// SessionCookie is the dashboard session's cookie (the spec: a name
// ending in session_token).
const SessionCookie = "paymentsd_session_token"

// EnvironmentHeader chooses the environment a cookie request acts in:
// live or sandbox (the default), as a dashboard's test-mode switch.
const EnvironmentHeader = "Paymentsd-Environment"

// UserKey holds a cookie request's user and session.
const UserKey ctxKey = 100

type SignedIn struct {
	User    payment.User
	Session payment.UserSession
}

func CurrentUser(r *http.Request) SignedIn {
	v, _ := r.Context().Value(UserKey).(SignedIn)
	return v
}

// SessionToken is the request's session cookie, "" without one.
func SessionToken(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// Environment is the environment a cookie request names.
func Environment(r *http.Request) (bool, error) {
	switch strings.ToLower(r.Header.Get(EnvironmentHeader)) {
	case "", "sandbox":
		return false, nil
	case "live":
		return true, nil
	}
	var probs payment.Problems
	probs.Add(EnvironmentHeader, "must be live or sandbox")
	return false, probs.Err()
}

func UnsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// CrossOrigin refuses a state-changing browser request from another
// origin (net/http.CrossOriginProtection: Sec-Fetch-Site, else Origin
// against Host). Requests without those headers (servers, curl) pass.
func (s *Edge) CrossOrigin(r *http.Request) error {
	if err := s.CrossOriginProtection.Check(r); err != nil {
		return &payment.Error{Kind: payment.KindForbidden, Message: "Cross-origin request refused"}
	}
	return nil
}

// Principal is who a call acts as, once authenticated.
func Principal(r *http.Request) payment.Principal {
	p, _ := r.Context().Value(PrincipalKey).(payment.Principal)
	return p
}

// CallerKey is the principal of a call that sent an API key, nil for an
// anonymous one.
func CallerKey(ctx context.Context) *payment.Principal {
	if p, ok := ctx.Value(PrincipalKey).(payment.Principal); ok {
		return &p
	}
	return nil
}
