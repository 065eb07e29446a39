package activities

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// signalled is a Temporal client whose session workflows in running take
// signals, whose workflows in ended have ended, and that keeps what each
// was sent. A signal-with-start behaves as the server does with the
// policies the scan asks for: it starts a workflow that never ran, signals
// a running one, and refuses an ended one.
type signalled struct {
	client.Client
	mu      sync.Mutex
	running map[string]bool
	ended   map[string]bool
	got     map[string][]string
	started map[string]workflows.CheckoutSessionInput
}

func newSignalled(running ...string) *signalled {
	c := &signalled{running: map[string]bool{}, ended: map[string]bool{}, got: map[string][]string{},
		started: map[string]workflows.CheckoutSessionInput{}}
	for _, id := range running {
		c.running[workflows.CheckoutSessionWorkflowID(id)] = true
	}
	return c
}

func (c *signalled) SignalWorkflow(_ context.Context, id, _, name string, _ any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running[id] {
		return serviceerror.NewNotFound("workflow execution already completed")
	}
	c.got[id] = append(c.got[id], name)
	return nil
}

func (c *signalled) SignalWithStartWorkflow(_ context.Context, id, name string, _ any, o client.StartWorkflowOptions,
	_ any, args ...any) (client.WorkflowRun, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.ID != id || o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE ||
		o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING || o.TaskQueue != workflows.TaskQueue {
		panic("a session's signal-with-start must never start a second run, and must join a running one")
	}
	if c.ended[id] {
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("workflow execution already finished", "", "")
	}
	if !c.running[id] {
		c.running[id] = true
		c.started[id] = args[0].(workflows.CheckoutSessionInput)
	}
	c.got[id] = append(c.got[id], name)
	return nil, nil
}

// recordPending records a session of a new project whose workflow's start
// is still pending, as the API records one (package sessionstart).
func recordPending(t *testing.T, st *store.Store) workflows.CheckoutSessionInput {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: "Scan", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	amount := decimal.RequireFromString("5")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pid, Title: "P", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := st.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	s := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(payment.NewSessionToken()),
		ProjectID: pid, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, Metadata: payment.EmptyMetadata,
		PaymentOptions: []payment.PaymentOption{}, ExpiresAt: now.Add(30 * time.Minute), QuoteExpiresAt: now.Add(30 * time.Minute),
		CreatedAt: now, UpdatedAt: now}
	in := workflows.CheckoutSessionInput{Session: s, Settings: workflows.SessionSettings{CompleteOn: payment.TxFinalized}}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	// No sweep would take it for an hour.
	if err := st.Checkout().InsertSessionToStart(ctx, s, views.SessionEvent, store.SessionStart{SessionID: s.ID, PlanTitle: "P", Input: raw,
		CreatedAt: now}, time.Hour); err != nil {
		t.Fatal(err)
	}
	return in
}

// A scan's transfer to a session recorded with its workflow's start still
// pending starts that workflow by its signal-with-start, which hears the
// transfer, and the pending start is done; a running session's workflow
// hears its transfer by a plain signal. What no workflow can take (no
// session's transfer, a session's whose workflow has ended, pending start
// or not) is left to chainwatch, which then tells the due sessions too;
// the ended session is not started again. With every transfer handed
// over, the scan tells the due sessions itself.
func TestAScansTransferStartsThePendingWorkflowOfTheSessionItPays(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	pending, endedPending := recordPending(t, st), recordPending(t, st)
	c := newSignalled("cs_running", "cs_due")
	c.ended[workflows.CheckoutSessionWorkflowID("cs_ended")] = true
	c.ended[workflows.CheckoutSessionWorkflowID(endedPending.Session.ID)] = true
	a := &Activities{Store: st, Temporal: c}
	transfer := func(session string) workflows.SessionTransfer {
		return workflows.SessionTransfer{SessionID: session, TxHash: "0x" + session}
	}
	p := pending.Session.ID
	out := &workflows.ScanOutput{Transfers: []workflows.SessionTransfer{transfer("cs_running"), transfer(p), transfer(p),
		transfer("cs_ended"), transfer(endedPending.Session.ID), transfer("")}, Due: []string{"cs_due"}}
	if err := a.signalSessions(ctx, "devnet", out); err != nil {
		t.Fatal(err)
	}
	if in, ok := c.started[workflows.CheckoutSessionWorkflowID(p)]; !ok || in.Session.ID != p || in.Session.ProjectID != pending.Session.ProjectID {
		t.Fatalf("the pending session's workflow was started with %+v (%v), want its recorded input", in, ok)
	}
	if len(c.started) != 1 {
		t.Fatalf("workflows started: %v, want the pending session's alone", c.started)
	}
	if got := c.got[workflows.CheckoutSessionWorkflowID(p)]; !slices.Equal(got, []string{workflows.SignalTransfer, workflows.SignalTransfer}) {
		t.Fatalf("the pending session heard %v, want its two transfers", got)
	}
	if got := c.got[workflows.CheckoutSessionWorkflowID("cs_running")]; !slices.Equal(got, []string{workflows.SignalTransfer}) {
		t.Fatalf("the running session heard %v, want its transfer once", got)
	}
	if left, err := st.Checkout().PendingSessionStarts(ctx, []string{p, endedPending.Session.ID}); err != nil || len(left) != 0 {
		t.Fatalf("pending starts left: %v (%v), want none: the sweep has nothing to start", left, err)
	}
	if len(out.Transfers) != 3 || out.Transfers[0].SessionID != "cs_ended" || out.Transfers[1].SessionID != endedPending.Session.ID ||
		out.Transfers[2].SessionID != "" {
		t.Fatalf("left to chainwatch: %+v, want the ended sessions' transfers and the one no session's", out.Transfers)
	}
	if len(out.Due) != 1 || len(c.got[workflows.CheckoutSessionWorkflowID("cs_due")]) != 0 {
		t.Fatalf("due sessions told before every transfer was handed over (due %v)", out.Due)
	}

	late := recordPending(t, st)
	out = &workflows.ScanOutput{Transfers: []workflows.SessionTransfer{transfer(late.Session.ID)}, Due: []string{"cs_due"}}
	if err := a.signalSessions(ctx, "devnet", out); err != nil {
		t.Fatal(err)
	}
	if len(out.Transfers) != 0 || len(out.Due) != 0 ||
		!slices.Equal(c.got[workflows.CheckoutSessionWorkflowID("cs_due")], []string{workflows.SignalScanned}) {
		t.Fatalf("left %+v, due %v, the due session sent %v: want all handed over and the due session told",
			out.Transfers, out.Due, c.got[workflows.CheckoutSessionWorkflowID("cs_due")])
	}
}

// A scan whose signal fails for any reason but a workflow that has ended
// (Temporal unreachable) fails, to be retried, rather than leave a
// session's transfer to its transaction's workflow.
func TestAScanWhoseSignalFailsIsRetried(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	a := &Activities{Store: st, Temporal: unreachable{}}
	pending := recordPending(t, st)
	for _, session := range []string{"cs_running", pending.Session.ID} {
		out := &workflows.ScanOutput{Transfers: []workflows.SessionTransfer{{SessionID: session, TxHash: "0x1"}}}
		if err := a.signalSessions(ctx, "devnet", out); err == nil {
			t.Fatalf("a scan that could not reach %s's workflow succeeded, leaving %+v", session, out.Transfers)
		}
	}
	if left, err := st.Checkout().PendingSessionStarts(ctx, []string{pending.Session.ID}); err != nil || len(left) != 1 {
		t.Fatalf("pending starts: %v (%v), want the start not made still pending", left, err)
	}
}

// unreachable is a Temporal client every call of which fails.
type unreachable struct{ client.Client }

func (unreachable) SignalWorkflow(context.Context, string, string, string, any) error {
	return serviceerror.NewUnavailable("connection refused")
}

func (unreachable) SignalWithStartWorkflow(context.Context, string, string, any, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	return nil, serviceerror.NewUnavailable("connection refused")
}
