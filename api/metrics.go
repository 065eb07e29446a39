package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/observability"
)

// withMetrics counts each request by the route that served it (its
// pattern, or the Connect procedure), method and status, and observes its
// latency. Paths no route matches count as one "unmatched" route, so that
// probing cannot grow the series.
func withMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		next.ServeHTTP(sw, r)
		route := routeLabel(r, sw.status)
		method := r.Method
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		default:
			method = "other"
		}
		observability.HTTPRequests.WithLabelValues(route, method, strconv.Itoa(sw.status)).Inc()
		observability.HTTPDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	})
}

// routeLabel is the pattern the mux matched; a Connect service's prefix
// becomes the procedure called when the procedure exists.
func routeLabel(r *http.Request, status int) string {
	p := r.Pattern
	if _, path, ok := strings.Cut(p, " "); ok {
		p = path
	}
	if p == "" || p == "/" { // "/" answers what no route matches
		return "unmatched"
	}
	if strings.HasSuffix(p, "/") && strings.HasPrefix(p, "/paymentsd.") && status != http.StatusNotFound {
		if proc := r.URL.Path[len(p):]; proc != "" && !strings.Contains(proc, "/") && len(proc) <= 64 {
			return p + proc
		}
	}
	return p
}

// statusWriter keeps the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes for
// Connect's streams, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes a streamed response.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
