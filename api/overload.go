package api

import (
	"errors"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/internal/observability"
)

// DefaultMaxInflight is how many requests one API process serves at once
// unless MAX_INFLIGHT_REQUESTS says otherwise: far above what two cores
// answer in a second's queue, far below what would grow the process's
// memory or the database pool's queue without bound.
const DefaultMaxInflight = 256

// retryAfterBusy is the Retry-After, in seconds, of a request refused
// because the process serves as many as it may (the slot frees in
// milliseconds); a dependency's is rest.RetryAfterUnavailable.
const retryAfterBusy = "1"

// busyMessage is the refusal's message, a sentence for the client.
var busyMessage = "The server is serving as many requests as it may; retry after " + retryAfterBusy + " s"

// unboundedPaths are answered whatever the load: the probes and the
// metrics, which must tell an overloaded process from a dead one.
var unboundedPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// inflight bounds the requests one process serves at once; past the bound
// a request is refused at once with 503 and Retry-After, before it reads
// its body, authenticates or touches the database, so a flood costs the
// process little and queues nothing. Nothing of a refused request was
// done: an Idempotency-Key is not claimed, a retry runs it whole.
type inflight struct {
	slots chan struct{}
	// connectErrors writes a refusal in the protocol of a Connect, gRPC
	// or gRPC-Web call.
	connectErrors *connect.ErrorWriter
}

func newInflight(limit int) *inflight {
	if limit <= 0 {
		limit = DefaultMaxInflight
	}
	return &inflight{slots: make(chan struct{}, limit), connectErrors: connect.NewErrorWriter()}
}

func (b *inflight) bound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if unboundedPaths[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case b.slots <- struct{}{}:
		default:
			observability.HTTPShed.Inc()
			b.refuse(w, r)
			return
		}
		observability.HTTPInflight.Inc()
		defer func() {
			observability.HTTPInflight.Dec()
			<-b.slots
		}()
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request the process has no room for: in the spec's
// envelope, or as a Connect error with code unavailable.
func (b *inflight) refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", retryAfterBusy)
	if strings.HasPrefix(r.URL.Path, "/paymentsd.") && b.connectErrors.IsSupported(r) {
		_ = b.connectErrors.Write(w, r, connect.NewError(connect.CodeUnavailable, errors.New(busyMessage)))
		return
	}
	rest.Fail(w, r, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", busyMessage, nil)
}

// connectUnavailable is a Connect error for a request a dependency could
// not answer: code unavailable, with Retry-After in its metadata (the
// response's headers in the Connect protocol, its trailers in gRPC).
func connectUnavailable(message string) *connect.Error {
	ce := connect.NewError(connect.CodeUnavailable, errors.New(message))
	ce.Meta().Set("Retry-After", rest.RetryAfterUnavailable)
	return ce
}
