package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/service"
)

// Every request is counted under the route that served it, with its
// status; refusals by the rate limiter are counted by tier; paths no route
// matches share one series; and /metrics serves them all.
func TestRequestsAreCountedByRouteAndStatus(t *testing.T) {
	s, err := New(service.New(service.Deps{}), Config{Limits: map[Tier]uint64{Relaxed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	count := func(route, status string) float64 {
		return testutil.ToFloat64(observability.HTTPRequests.WithLabelValues(route, http.MethodGet, status))
	}
	ok, limited, unmatched := count("/api/v1/assets", "200"), count("/api/v1/assets", "429"), count("unmatched", "404")
	refused := testutil.ToFloat64(observability.RateLimited.WithLabelValues(string(Relaxed)))

	if a, b, c := get("/api/v1/assets"), get("/api/v1/assets"), get("/no/such/path/x1"); a != 200 || b != 429 || c != 404 {
		t.Fatalf("statuses = %d, %d, %d; want 200, 429, 404", a, b, c)
	}
	if d := count("/api/v1/assets", "200") - ok; d != 1 {
		t.Errorf("200s on /api/v1/assets counted %v times, want 1", d)
	}
	if d := count("/api/v1/assets", "429") - limited; d != 1 {
		t.Errorf("429s on /api/v1/assets counted %v times, want 1", d)
	}
	if d := testutil.ToFloat64(observability.RateLimited.WithLabelValues(string(Relaxed))) - refused; d != 1 {
		t.Errorf("rate-limit refusals of tier %s counted %v times, want 1", Relaxed, d)
	}
	if d := count("unmatched", "404") - unmatched; d != 1 {
		t.Errorf("unmatched paths counted %v times, want 1", d)
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`paymentsd_http_requests_total{method="GET",route="/api/v1/assets",status="429"}`,
		`paymentsd_http_request_duration_seconds_bucket{method="GET",route="/api/v1/assets"`, `paymentsd_rate_limited_total{tier="relaxed"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), "/no/such/path") {
		t.Error("/metrics names an unmatched path")
	}
}
