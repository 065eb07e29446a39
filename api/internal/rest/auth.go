package rest

import (
	"context"
	"net/http"

	"github.com/paymentsd/paymentsd/payment"
)

// AuthFailures names a client IP's budget of failed authentications in the
// Standard tier. It is a counter of its own, apart from the IP's
// Standard-tier calls to public endpoints, so that a payer reporting
// payments does not spend it, nor a key guesser the payers' allowance.
func AuthFailures(ip string) string { return "auth-failure:ip:" + ip }

// FailureBudgetLeft refuses a counter whose budget of failures is spent,
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

// SignedInFrom resolves a session cookie from a client IP under the IP's
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
