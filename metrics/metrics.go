// Package metrics holds the engine's Prometheus metrics, registered with
// the default registry and served as text on /metrics by the API and the
// worker.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
	// NetworkUp is 1 while the last call to a network's nodes was
	// answered, 0 once one failed on every node: an outage.
	NetworkUp = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_network_up",
		Help: "1 when the last JSON-RPC call to the network's nodes was answered, 0 when it failed on every node.",
	}, []string{"network"})
	// ScannedBlock is the last block a network's scanner has read.
	ScannedBlock = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "paymentsd_scanned_block",
		Help: "The number of the last block the network's scanner has read.",
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
	// AuditFailures counts management changes made but not recorded in the
	// audit log (the database refused the entry).
	AuditFailures = promauto.NewCounter(prometheus.CounterOpts{
		Name: "paymentsd_audit_failures_total",
		Help: "Management changes made but not recorded in the audit log.",
	})
)

// Handler serves the metrics in Prometheus' text format.
func Handler() http.Handler { return promhttp.Handler() }
