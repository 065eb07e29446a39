package scaleout

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkCheckoutCreation opens BENCH_SESSIONS sessions (default 400)
// from BENCH_CLIENTS concurrent customers (default 16), spread over the two
// API processes of the production shape, and reports creations per
// second, the latency percentiles, and how long after the first request
// every session's workflow was running (no start left pending).
//
//	go test ./tests/scaleout -run '^$' -bench CheckoutCreation -benchtime 1x
func BenchmarkCheckoutCreation(b *testing.B) {
	n, clients := 400, 16
	if v, err := strconv.Atoi(os.Getenv("BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_CLIENTS")); err == nil && v > 0 {
		clients = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sh := startShape(b, ctx, 1<<30, 1, headBinary(b, ctx))
	key, base := sh.Project.SandboxKey, "/api/v1/projects/"+sh.Project.Project.ID
	plan := call(b, sh.APIs[0], http.MethodPost, base+"/payment-plans", key, map[string]any{"title": "Flash sale", "amountUsd": "2",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": sh.USDC.ID}}})
	if plan.Status != http.StatusCreated {
		b.Fatalf("create plan: %d %s", plan.Status, plan.Raw)
	}
	body := map[string]any{"paymentPlanId": plan.Data["id"]}
	for _, a := range sh.APIs { // warm
		if r := call(b, a, http.MethodPost, "/api/v1/checkout/sessions", "", body); r.Status != http.StatusCreated {
			b.Fatalf("open session: %d %s", r.Status, r.Raw)
		}
	}
	latencies := make([]time.Duration, n)
	work := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for i := range work {
				t := time.Now()
				if r := call(b, sh.APIs[i%2], http.MethodPost, "/api/v1/checkout/sessions", "", body); r.Status != http.StatusCreated {
					b.Errorf("open session %d: %d %s", i, r.Status, r.Raw)
				}
				latencies[i] = time.Since(t)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	created := time.Since(start)
	// Every session's workflow runs once no start is pending; the count of
	// workflows is checked by the scale-out test, here the time is read.
	waitFor(b, ctx, "every session's workflow started", func() bool {
		var pending int
		_ = sh.DB.QueryRow(ctx, `SELECT count(*) FROM session_starts`).Scan(&pending)
		return pending == 0
	})
	started := time.Since(start)
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(n)/created.Seconds(), "creations/s")
	b.ReportMetric(float64(latencies[n/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[n*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(started.Seconds(), "all-started-s")
}
