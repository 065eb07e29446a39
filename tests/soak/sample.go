package soak

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/tests/prodshape"
	"github.com/paymentsd/paymentsd/workflows"
)

// Sample is the series' values at one moment of the run, by column
// (columns names them).
type Sample struct {
	Elapsed time.Duration
	Values  map[string]float64
}

// Brief is a line of the sample for the run's log.
func (s Sample) Brief() string {
	var b strings.Builder
	for _, c := range columnsOf(s) {
		if c.brief {
			fmt.Fprintf(&b, "%s %.0f  ", c.name, s.Values[c.name])
		}
	}
	return strings.TrimSpace(b.String())
}

// sampler reads the series from the processes' /metrics, Postgres,
// Temporal, the receiver and the load.
type sampler struct {
	sh       *prodshape.Shape
	temporal client.Client
	receiver *prodshape.Receiver
	load     *load
	start    time.Time
}

// every samples now and every interval until ctx ends, calling each
// sample as it comes.
func (s *sampler) every(ctx context.Context, interval time.Duration, each func(Sample)) ([]Sample, error) {
	s.start = time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var out []Sample
	for {
		x, err := s.sample(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return out, nil
			}
			return out, err
		}
		out = append(out, x)
		each(x)
		select {
		case <-ctx.Done():
			return out, nil
		case <-tick.C:
		}
	}
}

func (s *sampler) sample(ctx context.Context) (Sample, error) {
	x := Sample{Elapsed: time.Since(s.start), Values: map[string]float64{}}
	for _, p := range s.processes() {
		m, err := scrape(ctx, p.MetricsURL)
		if err != nil {
			return x, fmt.Errorf("%s: %w", p.Log, err)
		}
		name := processName(p)
		x.Values[name+"_rss_mib"] = m["process_resident_memory_bytes"] / (1 << 20)
		x.Values[name+"_heap_mib"] = m["go_memstats_heap_inuse_bytes"] / (1 << 20)
		x.Values[name+"_goroutines"] = m["go_goroutines"]
		if p.URL == "" {
			x.Values[name+"_cached_workflows"] = m["temporal_sticky_cache_size"]
		}
	}
	engine, temporal, err := s.connections(ctx)
	if err != nil {
		return x, err
	}
	x.Values["db_conns_engine"], x.Values["db_conns_temporal"] = engine, temporal
	for _, kind := range []struct {
		name string
		typ  enumspb.TaskQueueType
	}{{"backlog_workflow_tasks", enumspb.TASK_QUEUE_TYPE_WORKFLOW}, {"backlog_activity_tasks", enumspb.TASK_QUEUE_TYPE_ACTIVITY}} {
		n, err := s.backlog(ctx, kind.typ)
		if err != nil {
			return x, err
		}
		x.Values[kind.name] = n
	}
	running, err := s.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: `ExecutionStatus = "Running"`})
	if err != nil {
		return x, fmt.Errorf("count running workflows: %w", err)
	}
	x.Values["workflows_running"] = float64(running.GetCount())
	// What the receiver has is read first: every event it has is recorded
	// by then, so the difference never counts one the other way.
	received := s.receiver.Events()
	var events, starts int
	if err := s.sh.DB.QueryRow(ctx, `SELECT (SELECT count(*) FROM events WHERE project_id = $1), (SELECT count(*) FROM session_starts)`,
		s.sh.Project.Project.ID).Scan(&events, &starts); err != nil {
		return x, err
	}
	x.Values["backlog_webhook_events"] = float64(events - received)
	x.Values["backlog_session_starts"] = float64(starts)
	c := s.load.counts()
	x.Values["sessions_opened"], x.Values["refusals"], x.Values["errors"] = float64(c.Created), float64(c.Refused), float64(c.Errors)
	return x, nil
}

func (s *sampler) processes() []*prodshape.Process {
	return append(append([]*prodshape.Process(nil), s.sh.APIs...), s.sh.Workers...)
}

// processName is the process's name, its log's: api1, worker2.
func processName(p *prodshape.Process) string {
	return strings.TrimSuffix(path.Base(p.Log), ".log")
}

// connections counts the connections to the engine's database (less the
// harness's own pool) and to Temporal's two.
func (s *sampler) connections(ctx context.Context) (engine, temporal float64, err error) {
	names := []string{dbName(s.sh.DatabaseURL)}
	if s.sh.TemporalDatabaseURL != "" {
		t := dbName(s.sh.TemporalDatabaseURL)
		names = append(names, t, t+devstack.VisibilitySuffix)
	}
	rows, err := s.sh.DB.Query(ctx, `SELECT datname, count(*) FROM pg_stat_activity WHERE datname = ANY($1) GROUP BY datname`, names)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n float64
		if err := rows.Scan(&name, &n); err != nil {
			return 0, 0, err
		}
		if name == names[0] {
			engine += n - float64(s.sh.DB.Stat().TotalConns())
		} else {
			temporal += n
		}
	}
	return engine, temporal, rows.Err()
}

func dbName(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(parsed.Path, "/")
}

// backlog is Temporal's approximate backlog of the engine's task queue,
// of one type (tasks added and not yet handed to a worker).
func (s *sampler) backlog(ctx context.Context, typ enumspb.TaskQueueType) (float64, error) {
	res, err := s.temporal.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: s.sh.Temporal.Namespace, TaskQueue: &taskqueuepb.TaskQueue{Name: workflows.TaskQueue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: typ, ReportStats: true})
	if err != nil {
		return 0, fmt.Errorf("describe task queue: %w", err)
	}
	return float64(res.GetStats().GetApproximateBacklogCount()), nil
}

// scrape reads the series of a Prometheus text page: each unlabelled
// one, and of a labelled one the largest value under its name (the
// SDK's gauges are one process-wide figure, reported under the labels
// of whichever workflow type last touched them).
func scrape(ctx context.Context, base string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d", res.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		cut := strings.LastIndexByte(line, ' ')
		if cut < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(line[cut+1:], 64)
		if err != nil {
			continue
		}
		name, labelled := line[:cut], false
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labelled = name[:i], true
		}
		if old, seen := out[name]; !labelled || !seen || v > old {
			out[name] = v
		}
	}
	return out, sc.Err()
}
