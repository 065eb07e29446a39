// Package bench holds the benchmarks: the API's throughput against a real
// PostgreSQL: each read endpoint served by the full API handler (routing,
// request IDs, API-key authentication, rate limits, the envelope) next to a
// bare net/http + pgx handler that runs the same SQL and writes plain JSON.
// It has no tests; run it with
//
//	go test ./tests/bench -run '^$' -bench 'Transaction|ScanRPC' -benchtime 3s
//
// and the full-stack ones (detection latency, throughput, webhook
// deliveries, on devstack.Stack) one at a time with -benchtime 1x. The
// benchmarks at scale (BenchmarkScale*, over a million sessions and
// transactions seeded by package seed) run only with BENCH_SCALE set:
// make bench-scale.
//
// See docs/performance.md for the results.
package bench
