package evmrpc

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paymentsd/paymentsd/internal/redact"
)

// maxRetryAfter bounds the time an endpoint is benched for, whatever its
// Retry-After says: a misread or absurd value must not lose an endpoint
// for the life of the process.
const maxRetryAfter = time.Hour

// benched reports whether endpoint i is benched now.
func (f *Failover) benched(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	return f.eps[i].benchedUntil.After(f.clock())
}

// wake returns when the first benched endpoint comes back, zero when none
// is benched.
func (f *Failover) wake() time.Time {
	_, wake := f.order()
	return wake
}

// rateLimited reports whether err is endpoint i refusing a call for its
// rate limit, and if so benches it: until the time its Retry-After header
// (or Infura's backoff_seconds) names, else for an exponential backoff
// with jitter. A 503 with a Retry-After counts too: the server says when
// to come back. A refusal while the endpoint is already benched (calls
// made at once) does not lengthen the backoff.
func (f *Failover) rateLimited(i int, err error) bool {
	hint, limited := rateLimitRefusal(err)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	e := &f.eps[i]
	now := f.clock()
	retryAfter := e.retryUntil.Sub(now)
	e.retryUntil = time.Time{}
	var he rpc.HTTPError
	if !limited && !(retryAfter > 0 && errors.As(err, &he) && he.StatusCode == http.StatusServiceUnavailable) {
		return false
	}
	if retryAfter > 0 {
		hint = retryAfter
	}
	if hint <= 0 && e.benchedUntil.After(now) {
		return true
	}
	e.strikes++
	d := hint
	if d <= 0 {
		d = f.backoff(e.strikes)
	}
	d = min(d, maxRetryAfter)
	if until := now.Add(d); until.After(e.benchedUntil) {
		e.benchedUntil = until
	}
	slog.Warn("rpc endpoint rate limited; calls go to the other endpoints until it is due", "network", f.Network,
		"endpoint", hostOf(f.urls[i]), "for", d.Round(time.Millisecond), "err", redact.Error(err))
	return true
}

// backoff is the bench time after the n-th rate-limit refusal in a row:
// RateLimitBackoff doubled n-1 times, at most MaxRateLimitBackoff, less a
// random quarter so that engines (or calls) benched together do not come
// back together.
func (f *Failover) backoff(n int) time.Duration {
	base, most := f.RateLimitBackoff, f.MaxRateLimitBackoff
	if base <= 0 {
		base = DefaultRateLimitBackoff
	}
	if most < base {
		most = base
	}
	d := base
	for k := 1; k < n && d < most; k++ {
		d *= 2
	}
	d = min(d, most)
	return d - rand.N(d/4+1)
}

// setRetryAfter keeps the time endpoint i's last 429 or 503 asked to be
// left alone until.
func (f *Failover) setRetryAfter(i int, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.eps[i].retryUntil = until
}

// retryAfterTransport keeps the Retry-After header of endpoint i's 429
// and 503 answers for rateLimited, which sees only go-ethereum's error.
type retryAfterTransport struct {
	next http.RoundTripper
	f    *Failover
	i    int
}

func (t retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		now := t.f.clock()
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			t.f.setRetryAfter(t.i, now.Add(d))
		}
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an
// HTTP-date (RFC 9110, 10.2.3).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second, s > 0
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		return d, d > 0
	}
	return 0, false
}
