// Package bench holds the API's throughput benchmarks against a real
// PostgreSQL: each read endpoint served by the full API handler (routing,
// request IDs, API-key authentication, rate limits, the envelope) next to a
// bare net/http + pgx handler that runs the same SQL and writes plain JSON.
// It has no tests; run it with
//
//	go test ./bench -run '^$' -bench . -benchtime 3s
//
// See docs/performance.md for the results.
package bench
