package identity

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
)

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
func (s Handlers) spent(ctx context.Context, counter string) (exhausted, touched bool) {
	tokens, remaining, err := s.Limiters[rest.Moderate].Get(ctx, rest.LimitKey(rest.Moderate, counter))
	if err != nil || tokens == 0 {
		return false, false // untouched, or a broken store: never a lockout
	}
	return remaining == 0, remaining < tokens
}

var errLoginThrottled = &payment.Error{Kind: payment.KindRateLimited,
	Message: "Too many failed sign-ins for this account from this address; wait a minute, or sign in from where you usually do"}

// loginGate lets a sign-in attempt on an account from an address go on,
// slowed when the account is under attack, or refuses it.
func (s Handlers) loginGate(ctx context.Context, out http.Header, email, ip string) error {
	pair := loginPairCounter(email, ip)
	if exhausted, _ := s.spent(ctx, pair); exhausted {
		// Confirm with Take, which refills a bucket whose window passed.
		if err := s.Take(ctx, out, rest.Moderate, pair); err != nil {
			return errLoginThrottled
		}
	}
	account := loginAccountCounter(email)
	attacked, _ := s.spent(ctx, account)
	if attacked {
		// memorystore's Get reports the last window it took from: Take
		// confirms the account's budget is spent in this one (a Take that
		// succeeds starts a new window, and pays a failure in advance).
		_, _, _, allowed, err := s.Limiters[rest.Moderate].Take(ctx, rest.LimitKey(rest.Moderate, account))
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
func (s Handlers) loginFailed(ctx context.Context, email, ip string) {
	for _, c := range []string{loginPairCounter(email, ip), loginAccountCounter(email)} {
		_, _, _, _, _ = s.Limiters[rest.Moderate].Take(ctx, rest.LimitKey(rest.Moderate, c))
	}
}
