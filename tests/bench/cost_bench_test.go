package bench

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/workflows"
)

// cost is what workflow histories cost in Temporal: what the server does
// (workflows, workflow tasks) and what Temporal Cloud bills (actions).
type cost struct {
	Workflows, WorkflowTasks            int
	Activities, LocalActivityTasks      int // local activities: the workflow tasks that record any
	LocalActivities                     int // every local activity, for the record
	Timers, Signals, Updates, Upserts   int
	ChildStarts, ContinueAsNew, Markers int
}

// Actions counts Temporal Cloud's billed actions, by its published rules:
// a workflow started (by a client, as a child or continued as new), an
// activity scheduled, the markers (local activities, side effects,
// versions) of one workflow task as one, a timer started, a signal (counted
// where it is received, once whoever sent it), an update accepted and a
// search-attribute upsert.
func (c cost) Actions() int {
	return c.Workflows + c.Activities + c.LocalActivityTasks + c.Timers + c.Signals + c.Updates + c.Upserts
}

func (c cost) add(o cost) cost {
	c.Workflows += o.Workflows
	c.WorkflowTasks += o.WorkflowTasks
	c.Activities += o.Activities
	c.LocalActivityTasks += o.LocalActivityTasks
	c.LocalActivities += o.LocalActivities
	c.Timers += o.Timers
	c.Signals += o.Signals
	c.Updates += o.Updates
	c.Upserts += o.Upserts
	c.ChildStarts += o.ChildStarts
	c.ContinueAsNew += o.ContinueAsNew
	c.Markers += o.Markers
	return c
}

// historyCost counts one workflow run's history.
func historyCost(events []*historypb.HistoryEvent) cost {
	var c cost
	markedTask := map[int64]bool{}
	for _, e := range events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			c.Workflows++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			c.WorkflowTasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			c.Activities++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			a := e.GetMarkerRecordedEventAttributes()
			c.Markers++
			if a.GetMarkerName() == "LocalActivity" {
				c.LocalActivities++
			}
			if !markedTask[a.GetWorkflowTaskCompletedEventId()] {
				markedTask[a.GetWorkflowTaskCompletedEventId()] = true
				c.LocalActivityTasks++
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			c.Timers++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			c.Signals++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			c.Updates++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			c.Upserts++
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			c.ChildStarts++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			c.ContinueAsNew++
		}
	}
	return c
}

func recordedCost(b *testing.B, release string, names ...string) cost {
	var total cost
	for _, name := range names {
		f, err := os.Open(filepath.Join("..", "..", "workflows", "testdata", "releases", release, name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		total = total.add(historyCost(h.Events))
	}
	return total
}

func liveCost(b *testing.B, c client.Client, workflowID string) cost {
	it := c.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			b.Fatal(err)
		}
		events = append(events, e)
	}
	return historyCost(events)
}

// BenchmarkPaidSessionCost counts what one paid session costs in Temporal,
// from histories: before, the v0.1.0 shape (its recorded histories of a
// paid session and of its transaction's workflow, workflows/testdata); now,
// a session of this code paid on the dev chain and followed to the end of
// its workflow (a 20 s lifetime, no late-payment window), with every
// workflow its payment ran. It reports the actions per paid session and
// Temporal Cloud's actions per 1,000 paid sessions.
func BenchmarkPaidSessionCost(b *testing.B) {
	before := recordedCost(b, "v0.1.0", "checkout_session_paid", "transaction_finalized")
	s := fullStack(b)
	e, p := newBenchProject(b)
	ctx := context.Background()
	if _, err := s.Store.Pool().Exec(ctx, `UPDATE projects SET session_lifetime_seconds = 20, late_payment_window_seconds = 0
		WHERE id = $1`, p.Project.ID); err != nil {
		b.Fatal(err)
	}
	planID := benchPlan(b, e, p, "2")
	b.ResetTimer()
	var now cost
	for range b.N {
		cs := benchSession(b, e, p, planID)
		id := workflows.CheckoutSessionWorkflowID(cs.ID)
		waitStarted(b, s.Temporal, id)
		if _, err := s.Chain.TransferToken(ctx, s.Chain.Accounts[0], common.HexToAddress(cs.DepositAddress), big.NewInt(2_000_000)); err != nil {
			b.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := s.Temporal.GetWorkflow(wctx, id, "").Get(wctx, nil)
		cancel()
		if err != nil {
			b.Fatalf("the paid session's workflow: %v", err)
		}
		var status string
		if err := s.Store.Pool().QueryRow(ctx, `SELECT status FROM checkout_sessions WHERE id = $1`, cs.ID).Scan(&status); err != nil || status != "completed" {
			b.Fatalf("session %s (%v), want completed", status, err)
		}
		// Every workflow the payment ran, by the session's search attribute.
		runs, err := s.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("CheckoutSessionId = '%s'", cs.ID)})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range runs.Executions {
			now = now.add(liveCost(b, s.Temporal, r.GetExecution().GetWorkflowId()))
		}
	}
	b.StopTimer()
	nowPer := float64(now.Actions()) / float64(b.N)
	b.ReportMetric(float64(before.Actions()), "actions-before")
	b.ReportMetric(nowPer, "actions-now")
	b.ReportMetric(float64(now.Workflows)/float64(b.N), "workflows-now")
	b.ReportMetric(float64(now.WorkflowTasks)/float64(b.N), "tasks-now")
	b.ReportMetric(nowPer*1000, "cloud-actions/1000")
	for _, r := range []struct {
		name string
		c    cost
		n    int
	}{{"v0.1.0 (recorded, to completion)", before, 1}, {"now (to the workflow's end)", now, b.N}} {
		d := func(v int) string { return fmt.Sprintf("%.1f", float64(v)/float64(r.n)) }
		fmt.Fprintf(os.Stderr, "%s: workflows %s, workflow tasks %s, activities %s, local activities %s (in %s tasks), timers %s, "+
			"signals %s, updates %s, upserts %s, child starts %s; actions %s\n", r.name, d(r.c.Workflows), d(r.c.WorkflowTasks),
			d(r.c.Activities), d(r.c.LocalActivities), d(r.c.LocalActivityTasks), d(r.c.Timers), d(r.c.Signals), d(r.c.Updates),
			d(r.c.Upserts), d(r.c.ChildStarts), d(r.c.Actions()))
	}
}

// waitStarted waits until a session's workflow has started (the sweep of
// session starts makes it, shortly after the row).
func waitStarted(b *testing.B, c client.Client, id string) {
	testwait.Until(b, time.Minute, func() (bool, string) {
		_, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		return err == nil, fmt.Sprintf("workflow %s not started: %v", id, err)
	})
}

// BenchmarkOutgoingTransferCost counts what one refund or payout costs in
// Temporal, from its workflow's history: the file OUTGOING_HISTORY names,
// such as the one the end-to-end refund test records
// (RECORD_HISTORIES=DIR go test ./tests/e2e -run
// TestARefundIsClaimedSignedOfflineAndFollowedToFinalized writes
// DIR/outgoing_refund_finalized.json). Without it, it is skipped.
func BenchmarkOutgoingTransferCost(b *testing.B) {
	file := os.Getenv("OUTGOING_HISTORY")
	if file == "" {
		b.Skip("OUTGOING_HISTORY names no history")
	}
	f, err := os.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var c cost
	for range b.N {
		c = historyCost(h.Events)
	}
	b.ReportMetric(float64(c.Actions()), "actions")
	b.ReportMetric(float64(c.LocalActivities), "looks")
	b.ReportMetric(float64(c.Timers), "timers")
	b.ReportMetric(float64(c.Signals), "signals")
	b.ReportMetric(float64(c.Upserts), "upserts")
}
