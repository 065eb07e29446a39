package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
)

// authFailures names a client IP's budget of failed authentications in the
// Standard tier. It is a counter of its own, apart from the IP's
// Standard-tier calls to public endpoints, so that a payer reporting
// payments does not spend it, nor a key guesser the payers' allowance.
func AuthFailures(ip string) string { return "auth-failure:ip:" + ip }

// authenticateFrom resolves the API key of a call from a client IP against
// the IP's budget of failed authentications: an IP that has spent it is
// refused (429, Retry-After) before its key is looked at, so guessing keys
// costs no database work and a valid key does not reopen the door; every
// failure spends one. Rate-limit headers go to out.
func (s *Server) authenticateFrom(ctx context.Context, h http.Header, ip string, out http.Header) (payment.Principal, error) {
	counter := AuthFailures(ip)
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

// failureBudgetLeft refuses a counter whose budget of failures is spent,
// without spending any while some is left. The store's Get reads a bucket
// without refilling it, so an empty bucket is confirmed with Take, which
// refills it when its window has passed: Take refuses (still spent), or
// takes a token of the new window, which then pays for this call's failure
// in advance (paid), or is lost if the call authenticates.
func (s *Edge) FailureBudgetLeft(ctx context.Context, out http.Header, counter string) (paid bool, err error) {
	tokens, remaining, err := s.Limiters[Standard].Get(ctx, LimitKey(Standard, counter))
	if err != nil || tokens == 0 || remaining > 0 {
		return false, nil // unknown, untouched or not spent; a broken store must not lock everyone out
	}
	return true, s.Take(ctx, out, Standard, counter)
}

// signedInFrom resolves a session cookie from a client IP under the IP's
// budget of failed authentications, as API keys are.
func (s *Edge) SignedInFrom(ctx context.Context, token, ip string, out http.Header) (SignedIn, error) {
	counter := AuthFailures(ip)
	paid, err := s.FailureBudgetLeft(ctx, out, counter)
	if err != nil {
		return SignedIn{}, err
	}
	u, us, err := s.Svc.Identity().SessionOf(ctx, token)
	if err != nil {
		if payment.KindOf(err) == payment.KindUnauthenticated {
			err = &payment.Error{Kind: payment.KindUnauthenticated, Message: "Signed out: the session has ended or is unknown; sign in again"}
		}
		if !paid {
			if limitErr := s.Take(ctx, out, Standard, counter); limitErr != nil {
				err = limitErr
			}
		}
		return SignedIn{}, err
	}
	return SignedIn{u, us}, nil
}
