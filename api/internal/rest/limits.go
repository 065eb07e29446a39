package rest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/sethvargo/go-limiter"
)

// Tier is a rate-limit tier of the spec (section 8).
type Tier string

const (
	Relaxed     Tier = "relaxed"
	SemiRelaxed Tier = "semi_relaxed"
	Standard    Tier = "standard"
	Moderate    Tier = "moderate"
	Strict      Tier = "strict"
	// StrictAPIKey is the Strict tier of a merchant's server creating
	// checkout sessions with its API key, counted per key: a deployment
	// raises it (RATE_LIMIT_STRICT_API_KEY) without opening the
	// anonymous creation counted per client IP.
	StrictAPIKey Tier = "strict_api_key"
)

// Take takes one token of tier for counter, sets the rate-limit headers on
// h and, when none is left, returns a rate-limited error.
func (s *Edge) Take(ctx context.Context, h http.Header, tier Tier, counter string) error {
	return s.TakeFrom(ctx, s.Limiters[tier], h, tier, counter)
}

// TakeFrom is take on the store st.
func (s *Edge) TakeFrom(ctx context.Context, st limiter.Store, h http.Header, tier Tier, counter string) error {
	limit, remaining, reset, allowed, err := st.Take(ctx, LimitKey(tier, counter))
	if err != nil {
		// A broken limiter store must not take the API down with it.
		slog.WarnContext(ctx, "rate limiter unavailable", "err", err)
		return nil
	}
	secs := int64(time.Until(time.Unix(0, int64(reset))).Seconds() + 0.999)
	if secs < 1 {
		secs = 1
	}
	for _, prefix := range []string{"RateLimit-", "X-RateLimit-"} {
		h.Set(prefix+"Limit", strconv.FormatUint(limit, 10))
		h.Set(prefix+"Remaining", strconv.FormatUint(remaining, 10))
		h.Set(prefix+"Reset", strconv.FormatInt(secs, 10))
	}
	if !allowed {
		observability.RateLimited.WithLabelValues(string(tier)).Inc()
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
		return &payment.Error{Kind: payment.KindRateLimited,
			Message: fmt.Sprintf("Rate limit of %d requests per minute exceeded; retry in %d s", limit, secs)}
	}
	return nil
}

// LimitKey is the key of counter's bucket in tier's store.
func LimitKey(tier Tier, counter string) string { return string(tier) + "|" + counter }
