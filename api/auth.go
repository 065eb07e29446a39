package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
)

// authenticateFrom resolves the API key of a call from a client IP against
// the IP's budget of failed authentications: an IP that has spent it is
// refused (429, Retry-After) before its key is looked at, so guessing keys
// costs no database work and a valid key does not reopen the door; every
// failure spends one. Rate-limit headers go to out.
func (s *Server) authenticateFrom(ctx context.Context, h http.Header, ip string, out http.Header) (payment.Principal, error) {
	counter := rest.AuthFailures(ip)
	paid, err := s.FailureBudgetLeft(ctx, out, counter)
	if err != nil {
		return payment.Principal{}, err
	}
	p, err := s.authenticate(ctx, h)
	if err != nil && !paid {
		if limitErr := s.Take(ctx, out, Standard, counter); limitErr != nil {
			err = limitErr
		}
	}
	if payment.KindOf(err) == payment.KindUnauthenticated {
		out.Set("WWW-Authenticate", bearerChallenge(h))
	}
	return p, err
}

// bearerChallenge is the WWW-Authenticate challenge of a 401 on a route
// that takes API keys and access tokens (RFC 6750 §3): a credential that
// was sent, as a bearer token or in X-API-Key, and refused is
// invalid_token; a request without one (or with another scheme) gets the
// bare challenge, with no error code.
func bearerChallenge(h http.Header) string {
	scheme, token, _ := strings.Cut(h.Get("Authorization"), " ")
	if h.Get("X-API-Key") == "" && (!strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "") {
		return "Bearer"
	}
	return `Bearer error="invalid_token", error_description="The access token or API key is unknown, expired or revoked"`
}

// scopeChallenge is the WWW-Authenticate challenge of a 403 for an access
// token without the scope a route needs (RFC 6750 §3.1).
func scopeChallenge(scope string) string {
	return `Bearer error="insufficient_scope", scope="` + scope + `"`
}
