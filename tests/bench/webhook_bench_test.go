package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// BenchmarkWebhookDeliveries queues BENCH_EVENTS events (default 1,000)
// for a project with 10 endpoints on a local receiver, and reports
// deliveries per second and the median and 99th percentile delay from an
// event being recorded (the state change) to its delivery. It logs the
// process's CPU time a delivery (the engine, the Temporal server and the
// receiver, which share the process) and its use of the database pool;
// BENCH_CPUPROFILE names a file for a CPU profile of the measured part
// alone (the stack's start left out).
func BenchmarkWebhookDeliveries(b *testing.B) {
	st, sealer := fullStack(b).Store, fullStack(b).Sealer
	events := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_EVENTS")); err == nil && v > 0 {
		events = v
	}
	const endpoints = 10
	var mu sync.Mutex
	var delays []time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ Timestamp time.Time }
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		delays = append(delays, time.Since(ev.Timestamp))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	ctx := context.Background()
	_, p := newBenchProject(b)
	// Endpoints and events go straight into the database: the benchmark
	// measures dispatch and delivery, not the API.
	now := time.Now()
	for i := range endpoints {
		id := "we_bench" + strconv.Itoa(i) + p.Project.ID[5:]
		sealed, _ := sealer.Seal(id, "whsec_"+"MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
		if _, err := st.Pool().Exec(ctx, `INSERT INTO webhook_endpoints (id, project_id, is_live, url, enabled_events, secret,
			status, created_at, updated_at) VALUES ($1,$2,false,$3,'["*"]',$4,'enabled',$5,$5)`,
			id, p.Project.ID, srv.URL+"/"+strconv.Itoa(i), sealed, now); err != nil {
			b.Fatal(err)
		}
	}
	// BENCH_EVENT_RATE records the events at that many a second (in a
	// batch every 100 ms) instead of all at once: the delay the engine
	// adds under a steady load rather than the queue of a burst.
	rate, _ := strconv.Atoi(os.Getenv("BENCH_EVENT_RATE"))
	record := func(from, n int) error {
		_, err := st.Pool().Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
			SELECT 'evt_bench' || i || $1, $2, false, 'transaction.confirmed', 'tx_bench' || i || $1, 1, '{"id":"x"}', now()
			FROM generate_series($3::int, $4::int) AS i`, p.Project.ID[5:], p.Project.ID, from, from+n-1)
		return err
	}
	if path := os.Getenv("BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu, dbCPU, pool := cpuTime(), backendsCPU(ctx, st.Pool()), st.Pool().Stat()
	b.ResetTimer()
	start := time.Now()
	recorded := make(chan time.Duration, 1) // when the last events were recorded
	if rate <= 0 {
		if err := record(1, events); err != nil {
			b.Fatal(err)
		}
		recorded <- time.Since(start)
	} else {
		batch := max(rate/10, 1)
		go func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for from := 1; from <= events; from += batch {
				if err := record(from, min(batch, events-from+1)); err != nil {
					b.Error(err)
					return
				}
				if from+batch > events {
					recorded <- time.Since(start)
					return
				}
				<-tick.C
			}
		}()
	}
	want := events * endpoints
	testwait.Until(b, 20*time.Minute, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(delays) >= want, fmt.Sprintf("%d of %d deliveries", len(delays), want)
	})
	elapsed := time.Since(start)
	used := cpuTime() - cpu
	dbUsed := backendsCPU(ctx, st.Pool())
	for pid, t := range dbCPU {
		dbUsed[pid] -= t
	}
	b.ReportMetric(float64(want)/elapsed.Seconds(), "deliveries/s")
	mu.Lock()
	slices.Sort(delays)
	b.ReportMetric(float64(delays[len(delays)/2].Milliseconds()), "median-delay-ms")
	b.ReportMetric(float64(delays[len(delays)*99/100].Milliseconds()), "p99-delay-ms")
	mu.Unlock()
	if rate > 0 {
		last := <-recorded
		b.Logf("offered: %d deliveries recorded in %v (%.0f a second)", want, last.Round(time.Millisecond), float64(want)/last.Seconds())
	}
	var backends time.Duration
	for _, t := range dbUsed {
		backends += t
	}
	b.Logf("CPU time of the process (engine, Temporal, receiver): %v, %.0f µs a delivery; of the database's backends: %v, %.0f µs a delivery",
		used.Round(time.Millisecond), float64(used.Microseconds())/float64(want),
		backends.Round(time.Millisecond), float64(backends.Microseconds())/float64(want))
	// How much the engine's pool was asked for, and waited for.
	after := st.Pool().Stat()
	acquires := after.AcquireCount() - pool.AcquireCount()
	b.Logf("database pool of %d: %d acquires (%.1f a delivery), %d waited for a connection, %v waiting in all",
		after.MaxConns(), acquires, float64(acquires)/float64(want), after.EmptyAcquireCount()-pool.EmptyAcquireCount(),
		(after.AcquireDuration() - pool.AcquireDuration()).Round(time.Millisecond))
}

// backendsCPU is the CPU time, user and system, that each Postgres backend
// connected to the benchmark's database has used so far, read from /proc:
// none when the server runs on another machine.
func backendsCPU(ctx context.Context, pool *pgxpool.Pool) map[int]time.Duration {
	out := map[int]time.Duration{}
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return out
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return out
	}
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: utime and
		// stime are the 12th and 13th, in clock ticks (100 a second).
		_, rest, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		out[int(pid)] = time.Duration(u+s) * 10 * time.Millisecond
	}
	return out
}

// cpuTime is the CPU time the process has used so far, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
