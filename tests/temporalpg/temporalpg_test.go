// Package temporalpg tests the embedded Temporal server on Postgres
// persistence (devstack.TemporalConfig.PostgresURL): the engine's custom
// search attributes work on Postgres visibility, and a workflow's history
// and a running workflow survive a restart on the same databases. It also
// measures how long the server takes to start on each persistence (see
// docs/scale-out.md).
//
// It lives under tests/ because it links the Temporal server, which is
// built without the race detector (see scripts/test.sh).
package temporalpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/postgres"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

const taskQueue = "temporalpg"

// settle is a workflow that records a payment's status as the engine's
// workflows do (PaymentStatus upserted as it moves), then waits for the
// signal "settled" before it completes.
func settle(ctx workflow.Context, note string) (string, error) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, workflows.PaymentStatus.ValueSet("confirming")); err != nil {
		return "", err
	}
	var by string
	workflow.GetSignalChannel(ctx, "settled").Receive(ctx, &by)
	if err := workflow.UpsertTypedSearchAttributes(ctx, workflows.PaymentStatus.ValueSet("confirmed")); err != nil {
		return "", err
	}
	return note + " settled by " + by, nil
}

// newDatabaseURL returns the URL of a Temporal database on the tests'
// Postgres server with a name of its own; its databases are dropped when
// the test ends.
func newDatabaseURL(tb testing.TB) string {
	tb.Helper()
	base, err := storetest.BaseURL()
	if err != nil {
		tb.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	u.Path = "/temporal_test_" + hex.EncodeToString(b)
	dbURL := u.String()
	tb.Cleanup(func() {
		if err := devstack.DropPostgres(context.Background(), dbURL); err != nil {
			tb.Error(err)
		}
	})
	return dbURL
}

// server is a running embedded server with a client and a worker of
// settle.
type server struct {
	*devstack.Temporal
	client client.Client
	worker sdkworker.Worker
	once   sync.Once
}

// start starts a server; it stops when the test ends, if not before.

func start(tb testing.TB, cfg devstack.TemporalConfig) *server {
	tb.Helper()
	t, err := devstack.StartTemporal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: t.Address, Namespace: t.Namespace, Logger: quietLogger{}})
	if err != nil {
		t.Stop()
		tb.Fatal(err)
	}
	w := sdkworker.New(c, taskQueue, sdkworker.Options{})
	w.RegisterWorkflow(settle)
	if err := w.Start(); err != nil {
		c.Close()
		t.Stop()
		tb.Fatal(err)
	}
	s := &server{Temporal: t, client: c, worker: w}
	tb.Cleanup(s.stop)
	return s
}

func (s *server) stop() {
	s.once.Do(func() {
		s.worker.Stop()
		s.client.Close()
		s.Stop()
	})
}

// begin starts a settle workflow with every custom search attribute of
// the engine set.
func (s *server) begin(tb testing.TB, id, projectID string) client.WorkflowRun {
	tb.Helper()
	run, err := s.client.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: id, TaskQueue: taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.ProjectID.ValueSet(projectID), workflows.CheckoutSessionID.ValueSet("cs_"+id),
			workflows.PaymentStatus.ValueSet("pending"), workflows.Network.ValueSet("devnet"), workflows.IsLive.ValueSet(true)),
	}, settle, "payment "+id)
	if err != nil {
		tb.Fatal(err)
	}
	return run
}

// list waits until query finds want workflows (visibility lags behind),
// and returns their IDs.
func (s *server) list(tb testing.TB, query string, want int) []string {
	tb.Helper()
	var ids []string
	testwait.Until(tb, 30*time.Second, func() (bool, string) {
		resp, err := s.client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			tb.Fatalf("list %q: %v", query, err)
		}
		ids = make([]string, 0, len(resp.Executions))
		for _, e := range resp.Executions {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		return len(ids) == want, fmt.Sprintf("list %q: found %v, want %d workflows", query, ids, want)
	})
	return ids
}

func TestWorkflowsSurviveARestartOnPostgres(t *testing.T) {
	dbURL := newDatabaseURL(t)
	cfg := devstack.TemporalConfig{PostgresURL: dbURL}

	began := time.Now()
	first := start(t, cfg)
	t.Logf("started on new Postgres databases in %v", time.Since(began).Round(time.Millisecond))
	done := first.begin(t, "pay-1", "proj_pg")
	if err := first.client.SignalWorkflow(context.Background(), "pay-1", "", "settled", "the first server"); err != nil {
		t.Fatal(err)
	}
	var result string
	if err := done.Get(context.Background(), &result); err != nil {
		t.Fatal(err)
	}
	if result != "payment pay-1 settled by the first server" {
		t.Fatalf("pay-1 returned %q", result)
	}
	first.begin(t, "pay-2", "proj_pg")
	first.begin(t, "other", "proj_other")
	// Every attribute, of both types, is searchable; PaymentStatus as the
	// workflow last upserted it.
	if ids := first.list(t, `ProjectId = 'proj_pg' AND CheckoutSessionId = 'cs_pay-1' AND PaymentStatus = 'confirmed' AND Network = 'devnet' AND IsLive = true`, 1); ids[0] != "pay-1" {
		t.Fatalf("found %v, want pay-1", ids)
	}
	if ids := first.list(t, `ProjectId = 'proj_pg' AND PaymentStatus = 'confirming'`, 1); ids[0] != "pay-2" {
		t.Fatalf("found %v, want pay-2", ids)
	}
	first.list(t, `Network = 'devnet' AND IsLive = false`, 0)
	first.stop()

	began = time.Now()
	second := start(t, cfg)
	t.Logf("started again on the same databases in %v", time.Since(began).Round(time.Millisecond))

	// The finished workflow's history is all there.
	completed := false
	it := second.client.GetWorkflowHistory(context.Background(), "pay-1", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	events := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		completed = completed || e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
	}
	if !completed {
		t.Fatalf("pay-1's history after the restart has %d events and no completion", events)
	}
	if err := second.client.GetWorkflow(context.Background(), "pay-1", "").Get(context.Background(), &result); err != nil || result != "payment pay-1 settled by the first server" {
		t.Fatalf("pay-1 after the restart: %q, %v", result, err)
	}
	// The workflow that was waiting carries on.
	if err := second.client.SignalWorkflow(context.Background(), "pay-2", "", "settled", "the second server"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := second.client.GetWorkflow(ctx, "pay-2", "").Get(ctx, &result); err != nil {
		t.Fatal(err)
	}
	if result != "payment pay-2 settled by the second server" {
		t.Fatalf("pay-2 returned %q", result)
	}
	// Visibility came through the restart too.
	second.list(t, `ProjectId = 'proj_pg' AND PaymentStatus = 'confirmed' AND IsLive = true`, 2)
	second.list(t, `ProjectId = 'proj_other'`, 1)
}

func TestBadPostgresURL(t *testing.T) {
	for _, u := range []string{"mysql://root@127.0.0.1/temporal", "postgres://127.0.0.1:5432", "postgres:///temporal"} {
		if _, err := devstack.StartTemporal(devstack.TemporalConfig{PostgresURL: u}); err == nil {
			t.Errorf("%s: started", u)
		}
	}
}

// BenchmarkStart measures how long the embedded server takes until a
// workflow has run on it, on each persistence, new and restarted:
//
//	go test ./tests/temporalpg -run '^$' -bench Start -benchtime 3x
func BenchmarkStart(b *testing.B) {
	ready := func(b *testing.B, cfg devstack.TemporalConfig) {
		b.Helper()
		s := start(b, cfg)
		defer s.stop()
		run := s.begin(b, "bench-"+time.Now().Format("150405.000000"), "proj_bench")
		if err := s.client.SignalWorkflow(context.Background(), run.GetID(), "", "settled", "bench"); err != nil {
			b.Fatal(err)
		}
		if err := run.Get(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("sqlite-memory", func(b *testing.B) {
		for b.Loop() {
			ready(b, devstack.TemporalConfig{})
		}
	})
	b.Run("sqlite-file-new", func(b *testing.B) {
		for b.Loop() {
			ready(b, devstack.TemporalConfig{DBFile: filepath.Join(b.TempDir(), "temporal.db")})
		}
	})
	b.Run("sqlite-file-restart", func(b *testing.B) {
		cfg := devstack.TemporalConfig{DBFile: filepath.Join(b.TempDir(), "temporal.db")}
		ready(b, cfg)
		for b.Loop() {
			ready(b, cfg)
		}
	})
	b.Run("postgres-new", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			cfg := devstack.TemporalConfig{PostgresURL: newDatabaseURL(b)}
			b.StartTimer()
			ready(b, cfg)
		}
	})
	b.Run("postgres-restart", func(b *testing.B) {
		cfg := devstack.TemporalConfig{PostgresURL: newDatabaseURL(b)}
		ready(b, cfg)
		for b.Loop() {
			ready(b, cfg)
		}
	})
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// pgTool runs a PostgreSQL client tool.
func pgTool(t *testing.T, name string, args ...string) {
	t.Helper()
	bin, err := postgres.Tool(name)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Temporal's store backed up with pg_dump and restored with pg_restore,
// as docs/operations.md says: the server stopped, both databases restored,
// the server started again. A workflow started before the backup runs on
// from where it was; one started after it is gone (admin reconcile then
// finds its session without a workflow).
func TestTemporalRestoredFromABackup(t *testing.T) {
	dbURL := newDatabaseURL(t)
	cfg := devstack.TemporalConfig{PostgresURL: dbURL}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path += devstack.VisibilitySuffix
	visibilityURL := u.String()
	dir := t.TempDir()

	first := start(t, cfg)
	first.begin(t, "kept", "proj_backup")
	first.list(t, `ProjectId = 'proj_backup'`, 1)
	pgTool(t, "pg_dump", "--format=custom", "--file="+filepath.Join(dir, "temporal.dump"), dbURL)
	pgTool(t, "pg_dump", "--format=custom", "--file="+filepath.Join(dir, "visibility.dump"), visibilityURL)
	first.begin(t, "lost", "proj_backup")
	first.list(t, `ProjectId = 'proj_backup'`, 2)
	first.stop()

	pgTool(t, "pg_restore", "--clean", "--if-exists", "--no-owner", "--dbname="+dbURL, filepath.Join(dir, "temporal.dump"))
	pgTool(t, "pg_restore", "--clean", "--if-exists", "--no-owner", "--dbname="+visibilityURL, filepath.Join(dir, "visibility.dump"))

	second := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := second.client.SignalWorkflow(ctx, "kept", "", "settled", "the restored server"); err != nil {
		t.Fatal(err)
	}
	var result string
	if err := second.client.GetWorkflow(ctx, "kept", "").Get(ctx, &result); err != nil || result != "payment kept settled by the restored server" {
		t.Fatalf("the workflow from before the backup: %q, %v", result, err)
	}
	if _, err := second.client.DescribeWorkflowExecution(ctx, "lost", ""); err == nil {
		t.Fatal("the workflow started after the backup survived its restore")
	}
	if ids := second.list(t, `ProjectId = 'proj_backup'`, 1); ids[0] != "kept" {
		t.Fatalf("visibility after the restore lists %v; want kept alone", ids)
	}
}
