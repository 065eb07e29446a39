package observability_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/paymentsd/paymentsd/internal/observability"
)

// With an OTLP endpoint configured, a request through the wrapped handler
// is exported as a span of the named service, and Temporal clients get the
// tracing interceptor and the SDK's metrics, which land on /metrics.
func TestTracesAndTemporalMetrics(t *testing.T) {
	var mu sync.Mutex
	var spans []string
	var services []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.Attributes {
				if a.Key == "service.name" {
					services = append(services, a.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, s.Name)
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	if !observability.TracingConfigured() {
		t.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT does not turn traces on")
	}

	ctx := context.Background()
	tel, err := observability.Start(ctx, "paymentsd-test")
	if err != nil {
		t.Fatal(err)
	}
	opts := tel.Temporal(client.Options{})
	if len(opts.Interceptors) != 1 || opts.MetricsHandler == nil {
		t.Fatalf("temporal options = %d interceptors, metrics handler %v; want the tracing interceptor and a handler",
			len(opts.Interceptors), opts.MetricsHandler)
	}
	opts.MetricsHandler.WithTags(map[string]string{"namespace": "default"}).Counter("temporal_request").Inc(2)

	h := tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), "paymentsd-api")
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/assets", nil))
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	if !strings.Contains(strings.Join(names, ","), "temporal_request") {
		t.Errorf("the SDK's counter is not gathered for /metrics; families: %v", names)
	}
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tel.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(spans) == 0 || !strings.Contains(strings.Join(spans, ","), "GET") || services[0] != "paymentsd-test" {
		t.Errorf("exported spans %v of services %v; want the request's span of paymentsd-test", spans, services)
	}
	mu.Unlock()

}
