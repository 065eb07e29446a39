// Package observability is how an engine process is seen from outside:
// its Prometheus metrics, registered with the default registry and served
// as text on /metrics by the API and the worker, with the Temporal SDK's
// own series beside them, and, when an OTLP endpoint is configured, traces
// that follow a request from the API through the workflow it starts to the
// activities that run.
package observability

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paymentsd/paymentsd/internal/version"
)

var (
	// RPCRequests counts the JSON-RPC calls to a network's nodes, by
	// outcome: ok (an answer, "not found" included), error, rate_limited
	// (the node refused for its rate limit and is left alone for a while)
	// or range_refused (an eth_getLogs range the node refused, which is
	// then split). Many rate_limited calls say a provider plan is too small
	// for the traffic.
	RPCRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_rpc_requests_total",
		Help: "JSON-RPC calls to a network's nodes, by outcome (ok, error, rate_limited or range_refused).",
	}, []string{"network", "outcome"})
	// AnswersRejected counts the nodes' answers that failed a check, by
	// node (named by redact.URL) and check (internal/nodetrust): a node
	// that lies, or serves another chain, or a broken one.
	AnswersRejected = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_rpc_answers_rejected_total",
		Help: "Answers of a network's nodes that failed a check (a block's hash, a parent link, a receipt's or log's block, a merkle root, a txid), by node and check.",
	}, []string{"network", "node", "check"})
	// NodeSetAside is 1 while a node is not used: one of its answers
	// failed a check, or it disagrees with the majority of its network's
	// nodes.
	NodeSetAside = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_rpc_node_set_aside",
		Help: "1 while the node is not used (an answer of it failed a check, or it disagrees with the majority of the network's nodes), else 0.",
	}, []string{"network", "node"})
	// NodesDisagree is 1 while a network's nodes disagree with no majority:
	// none is used, and its payments wait.
	NodesDisagree = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_network_nodes_disagree",
		Help: "1 while the network's nodes disagree and no answer holds a majority: no node is used until they agree.",
	}, []string{"network"})
	// NetworkUp is 1 while the last call to a network's nodes was
	// answered, 0 once one failed on every node: an outage.
	NetworkUp = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_network_up",
		Help: "1 when the last JSON-RPC call to the network's nodes was answered, 0 when it failed on every node.",
	}, []string{"network"})
	// ScannedBlock is the last block a network's chainwatch has read.
	ScannedBlock = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_scanned_block",
		Help: "The number of the last block the network's chainwatch has read.",
	}, []string{"network"})
	// TraceFailures counts blocks a network's nodes could not trace: their
	// internal native transfers were not read.
	TraceFailures = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_trace_failures_total",
		Help: "Blocks whose call traces could not be read (their internal native transfers were not read).",
	}, []string{"network"})
	// TransfersUnexpected counts transfers to the deposit address of a
	// session that no longer takes payments: recorded as unexpected, in the
	// merchant's wallet, counted for no session.
	TransfersUnexpected = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_transfers_unexpected_total",
		Help: "Transfers to a deposit address whose session no longer takes payments (recorded as unexpected).",
	}, []string{"network"})
	// FinalizedBlocksGone counts blocks holding finalized payments that
	// the finality watch found no longer on the chain: a reorg deeper
	// than the network's finality.
	FinalizedBlocksGone = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_finalized_blocks_gone_total",
		Help: "Blocks holding finalized payments found no longer on the canonical chain (a reorg deeper than finality).",
	}, []string{"network"})
	// PaymentsReversed counts finalized payments recorded reversed: their
	// block left the chain past finality. direction is in (a payment to
	// a session) or out (a refund or payout).
	PaymentsReversed = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_payments_reversed_total",
		Help: "Finalized payments recorded reversed because their block left the chain past finality.",
	}, []string{"network", "direction"})
	// RPCFailovers counts calls another node answered after the first
	// one tried failed or was behind.
	RPCFailovers = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_rpc_failovers_total",
		Help: "JSON-RPC calls answered by another node after the first one tried failed or was behind.",
	}, []string{"network"})
	// ChainHead is a network's head block as its chainwatch last read it.
	ChainHead = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_chain_head_block",
		Help: "The network's head block as its chainwatch last read it.",
	}, []string{"network"})
	// ScanLag is how many blocks a network's chainwatch is behind the head:
	// payments in those blocks are not seen yet.
	ScanLag = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_scan_lag_blocks",
		Help: "Blocks between the network's head and the last block its chainwatch read.",
	}, []string{"network"})
	// ScanDuration is the time one poll of a network that read new blocks
	// took.
	ScanDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "paymentsd_scan_duration_seconds",
		Help:    "Time one poll of the network that read new blocks took.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 10),
	}, []string{"network"})
	// HTTPRequests counts the API's requests by route pattern, method and
	// status code.
	HTTPRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_http_requests_total",
		Help: "API requests by route pattern (or Connect procedure), method and status code.",
	}, []string{"route", "method", "status"})
	// HTTPDuration is the API's request latency by route and method.
	HTTPDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "paymentsd_http_request_duration_seconds",
		Help:    "API request latency by route pattern (or Connect procedure) and method.",
		Buckets: []float64{.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method"})
	// HTTPInflight is how many requests the API serves now, and HTTPShed
	// counts those refused with 503 because it served as many as it may
	// (MAX_INFLIGHT_REQUESTS): a shed rate above zero says to add API
	// processes or raise the bound.
	HTTPInflight = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "paymentsd_http_requests_in_flight",
		Help: "API requests being served now (probes and /metrics left out).",
	})
	HTTPShed = promauto.NewCounter(prometheus.CounterOpts{
		Name: "paymentsd_http_requests_shed_total",
		Help: "API requests refused with 503 and Retry-After because the process served as many as MAX_INFLIGHT_REQUESTS allows.",
	})
	// RateLimited counts requests refused by a rate-limit tier.
	RateLimited = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_rate_limited_total",
		Help: "Requests refused with 429 by rate-limit tier.",
	}, []string{"tier"})
	// WebhookAttempts counts delivery attempts by outcome: delivered (2xx),
	// rejected (another status), gone (410), or error (no answer).
	WebhookAttempts = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "paymentsd_webhook_attempts_total",
		Help: "Webhook delivery attempts by outcome (delivered, rejected, gone, error).",
	}, []string{"outcome"})
	// WebhookDelay is the time from an event's recording to its delivery
	// (the first 2xx), retries included.
	WebhookDelay = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "paymentsd_webhook_delivery_delay_seconds",
		Help:    "Time from an event's recording to its delivery (the first 2xx answer), retries included.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600},
	})
	// SessionStartDelay is the time from a session's recording to its
	// workflow's start.
	SessionStartDelay = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "paymentsd_session_start_delay_seconds",
		Help:    "Time from a checkout session's recording to the start of its workflow.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	})
	// SessionStartsPending is how many recorded sessions wait for their
	// workflow's start, and SessionStartOldest how long the oldest has
	// waited (read by a worker's sweep).
	SessionStartsPending = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "paymentsd_session_starts_pending",
		Help: "Checkout sessions recorded whose workflow is not started yet.",
	})
	SessionStartOldest = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "paymentsd_session_start_oldest_seconds",
		Help: "How long the oldest checkout session whose workflow is not started yet has waited.",
	})
	// AuditFailures counts management changes whose audit entry the
	// database refused, and that were refused with it.
	AuditFailures = promauto.NewCounter(prometheus.CounterOpts{
		Name: "paymentsd_audit_failures_total",
		Help: "Management changes whose audit log entry the database refused, and so refused with it.",
	})
)

// buildInfo is 1, labelled with the build's release and VCS revision: a
// dashboard tells which build each process runs.
var buildInfo = promauto.NewGaugeVec(prometheus.GaugeOpts{
	Name: "paymentsd_build_info",
	Help: "Always 1, labelled with the build's version and VCS revision.",
}, []string{"version", "revision"})

func init() { buildInfo.WithLabelValues(version.Version, version.Revision()).Set(1) }

// Handler serves the metrics in Prometheus' text format.
func Handler() http.Handler { return promhttp.Handler() }

// RecordCount is how many records of a kind are in a status.
type RecordCount struct {
	Kind   string // checkout_session or transaction
	IsLive bool
	Status string
	Count  int64
}

// recordsDesc describes the records gauge.
var recordsDesc = prometheus.NewDesc("paymentsd_records",
	"Checkout sessions and transactions in the database by kind, environment (live) and status.",
	[]string{"kind", "live", "status"}, nil)

// records is a collector that reads the counts through count, at most
// once per interval: a scrape does not cost a count each time.
type records struct {
	count    func(context.Context) ([]RecordCount, error)
	interval time.Duration

	mu    sync.Mutex
	at    time.Time
	cache []RecordCount
}

// RegisterRecords registers the gauge of records by status, read through
// count at most once per interval; unregister removes it, so that a worker
// started again in the same process registers its own. While another
// worker of the process has it registered, that one's gauge stays and
// unregister does nothing.
func RegisterRecords(count func(context.Context) ([]RecordCount, error), interval time.Duration) (unregister func(), err error) {
	r := &records{count: count, interval: interval}
	if err := prometheus.Register(r); err != nil {
		if errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return func() {}, nil
		}
		return nil, err
	}
	return func() { prometheus.Unregister(r) }, nil
}

// ServeMetrics serves /metrics and /healthz on addr until ctx ends: the
// listener of a process that serves no API (the worker's METRICS_ADDR).
func ServeMetrics(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ServeMetricsOn(ctx, ln)
}

// ServeMetricsOn serves /metrics and /healthz on ln until ctx ends (the
// API's METRICS_ADDR, listened on before the API starts).
func ServeMetricsOn(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	slog.Info("listening", "addr", ln.Addr().String(), "serves", "/metrics")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}

func (r *records) Describe(ch chan<- *prometheus.Desc) { ch <- recordsDesc }

func (r *records) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.at) >= r.interval {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		counts, err := r.count(ctx)
		cancel()
		if err != nil {
			slog.Warn("count records for metrics", "err", err)
		} else {
			r.cache, r.at = counts, time.Now()
		}
	}
	for _, c := range r.cache {
		ch <- prometheus.MustNewConstMetric(recordsDesc, prometheus.GaugeValue, float64(c.Count),
			c.Kind, strconv.FormatBool(c.IsLive), c.Status)
	}
}

// NodeReport reports what the ledgers of the networks' nodes
// (internal/nodetrust) find, in the metrics above.
type NodeReport struct{}

// AnswerRejected counts an answer of node that failed check.
func (NodeReport) AnswerRejected(network, node, check string) {
	AnswersRejected.WithLabelValues(network, node, check).Inc()
}

// NodeSetAside sets the node's gauge.
func (NodeReport) NodeSetAside(network, node string, aside bool) {
	NodeSetAside.WithLabelValues(network, node).Set(boolValue(aside))
}

// NodesDisagree sets the network's gauge.
func (NodeReport) NodesDisagree(network string, disagree bool) {
	NodesDisagree.WithLabelValues(network).Set(boolValue(disagree))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
