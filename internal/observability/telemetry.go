package observability

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Telemetry is one process's metrics and traces.
type Telemetry struct {
	metrics client.MetricsHandler
	tracing interceptor.Interceptor // nil when traces are off
	closers []func(context.Context) error
}

// TracingConfigured reports whether the environment names an OTLP
// endpoint for traces (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, with the exporter's other standard
// variables). Without one, no span is exported.
func TracingConfigured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// sdkMetrics is the process's Temporal SDK metrics handler: one exporter
// into the default Prometheus registry, however many clients a process
// makes (the tests' stacks make several).
var sdkMetrics = sync.OnceValues(func() (client.MetricsHandler, error) {
	exporter, err := otelprom.New(otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, err
	}
	// The exporter is read at each scrape: there is nothing to flush, and
	// the provider lives as long as the process.
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:   meters.Meter("temporal-sdk-go"),
		OnError: func(err error) { slog.Warn("temporal sdk metric", "err", err) },
	}), nil
})

// Metrics is a Telemetry with the Temporal SDK's metrics and no traces:
// an in-process stack's (the dev stack, the tests'), whose process may
// already trace through Start.
func Metrics() (*Telemetry, error) {
	m, err := sdkMetrics()
	if err != nil {
		return nil, err
	}
	return &Telemetry{metrics: m}, nil
}

// Start sets the process up: the Temporal SDK's metrics exported to the
// default Prometheus registry, and traces to the configured OTLP endpoint
// (none when TracingConfigured is false). service names the process in
// traces (paymentsd-api, paymentsd-worker).
func Start(ctx context.Context, service string) (*Telemetry, error) {
	t, err := Metrics()
	if err != nil {
		return nil, err
	}
	if !TracingConfigured() {
		return t, nil
	}
	spans, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, errors.Join(err, t.Close(ctx))
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, errors.Join(err, t.Close(ctx))
	}
	tracer := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res))
	t.closers = append(t.closers, tracer.Shutdown)
	otel.SetTracerProvider(tracer)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t.tracing, err = temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tracer.Tracer("temporal-sdk-go")})
	if err != nil {
		return nil, errors.Join(err, t.Close(ctx))
	}
	return t, nil
}

// Temporal adds the SDK's metrics and, when traces are on, the tracing
// interceptor to a Temporal client's options; workers made from the client
// trace their workflows and activities too.
func (t *Telemetry) Temporal(o client.Options) client.Options {
	if t == nil {
		return o
	}
	o.MetricsHandler = t.metrics
	if t.tracing != nil {
		o.Interceptors = append(o.Interceptors, t.tracing)
	}
	return o
}

// HTTP wraps an HTTP handler so that each request is a span (when traces
// are on), which the workflows it starts continue.
func (t *Telemetry) HTTP(h http.Handler, operation string) http.Handler {
	if t == nil || t.tracing == nil {
		return h
	}
	return otelhttp.NewHandler(h, operation)
}

// Close flushes what is buffered and stops the exporters.
func (t *Telemetry) Close(ctx context.Context) error {
	var errs []error
	for i := len(t.closers) - 1; i >= 0; i-- {
		errs = append(errs, t.closers[i](ctx))
	}
	t.closers = nil
	return errors.Join(errs...)
}
