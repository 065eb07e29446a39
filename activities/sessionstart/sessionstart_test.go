package sessionstart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/activities/sessionstart"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// fakeTemporal is a Temporal client that takes workflow starts, the one
// call a starter makes: it keeps one workflow per ID, as the session's
// start options ask (a start of a running ID joins it), or refuses every
// start while down. Every other call panics.
type fakeTemporal struct {
	client.Client

	mu       sync.Mutex
	down     bool
	running  map[string]workflows.CheckoutSessionInput
	starts   int // made
	attempts int // made or refused
	ended    map[string]bool
	signals  map[string][]string
}

func newFakeTemporal() *fakeTemporal {
	return &fakeTemporal{running: map[string]workflows.CheckoutSessionInput{}}
}

func (f *fakeTemporal) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts++
	if f.down {
		return nil, errors.New("temporal unreachable")
	}
	f.starts++
	if o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING {
		panic("a session's workflow must join a running one")
	}
	if _, ok := f.running[o.ID]; !ok {
		f.running[o.ID] = args[0].(workflows.CheckoutSessionInput)
	}
	return nil, nil
}

// SignalWithStartWorkflow starts a workflow as ExecuteWorkflow does, but
// refuses one whose ID ended (ended) as the reuse policy
// REJECT_DUPLICATE has the server do, and keeps the signals sent.
func (f *fakeTemporal) SignalWithStartWorkflow(_ context.Context, id, name string, _ any, o client.StartWorkflowOptions,
	_ any, args ...any) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts++
	if f.down {
		return nil, errors.New("temporal unreachable")
	}
	if o.ID != id || o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING ||
		o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		panic("a signal-with-start must join a running workflow and never start a second run")
	}
	if f.ended[id] {
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("workflow execution already finished", "", "")
	}
	if _, ok := f.running[id]; !ok {
		f.starts++
		f.running[id] = args[0].(workflows.CheckoutSessionInput)
	}
	if f.signals == nil {
		f.signals = map[string][]string{}
	}
	f.signals[id] = append(f.signals[id], name)
	return nil, nil
}

func (f *fakeTemporal) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// refused waits until n starts were attempted: the background starts of
// sessions opened while Temporal was down have failed.
func (f *fakeTemporal) refused(t *testing.T, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		f.mu.Lock()
		attempts := f.attempts
		f.mu.Unlock()
		return attempts >= n, fmt.Sprintf("%d starts attempted, want %d", attempts, n)
	})
}

// workflow returns the input of a session's running workflow.
func (f *fakeTemporal) workflow(sessionID string) (workflows.CheckoutSessionInput, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.running[workflows.CheckoutSessionWorkflowID(sessionID)]
	return in, ok
}

// fixture records a project and a plan, and returns a session of the plan
// to open.
func fixture(t *testing.T, st *store.Store) workflows.CheckoutSessionInput {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: "Starts", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	amount := decimal.RequireFromString("5")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pid, Title: "P", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := st.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	return workflows.CheckoutSessionInput{Session: newSession(pid, plan.ID, now), Settings: workflows.SessionSettings{CompleteOn: payment.TxFinalized}}
}

func newSession(projectID, planID string, now time.Time) payment.Session {
	return payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(payment.NewSessionToken()),
		ProjectID: projectID, PaymentPlanID: planID, Status: payment.SessionOpen, AmountUSD: decimal.RequireFromString("5"),
		Metadata: payment.EmptyMetadata, PaymentOptions: []payment.PaymentOption{}, ExpiresAt: now.Add(30 * time.Minute),
		QuoteExpiresAt: now.Add(30 * time.Minute), CreatedAt: now, UpdatedAt: now}
}

func pending(t *testing.T, st *store.Store, ids ...string) int {
	t.Helper()
	starts, err := st.Checkout().PendingSessionStarts(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	return len(starts)
}

// due makes pending starts due now, as if their grace had passed.
func due(t *testing.T, st *store.Store) {
	t.Helper()
	if _, err := st.Pool().Exec(context.Background(), `UPDATE session_starts SET due_at = now()`); err != nil {
		t.Fatal(err)
	}
}

// Open records the session and its workflow's pending start, then starts
// the workflow in the background with the input it recorded; the start
// done, nothing is pending.
func TestOpenRecordsTheSessionAndStartsItsWorkflow(t *testing.T) {
	st := storetest.NewStore(t)
	fake := newFakeTemporal()
	in := fixture(t, st)
	if err := sessionstart.New(st, fake).Open(context.Background(), in, "P"); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Checkout().SessionByID(context.Background(), in.Session.ID); err != nil || s.Status != payment.SessionOpen {
		t.Fatalf("session = %s (%v); want open, readable once Open returns", s.Status, err)
	}
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		return pending(t, st, in.Session.ID) == 0, "the background start did not happen"
	})
	got, ok := fake.workflow(in.Session.ID)
	if !ok || got.Session.ID != in.Session.ID || got.Settings.CompleteOn != payment.TxFinalized {
		t.Fatalf("workflow started with %+v (%v)", got, ok)
	}
}

// A background start gives way to a creation under way in its process,
// and is made once the creation is done.
func TestBackgroundStartsGiveWayToCreations(t *testing.T) {
	st := storetest.NewStore(t)
	fake := newFakeTemporal()
	in := fixture(t, st)
	s := sessionstart.New(st, fake)
	done := s.Opening() // another customer's creation, under way
	if err := s.Open(context.Background(), in, "P"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // not a wait: time for a start that must not happen while the creation is under way
	if _, ok := fake.workflow(in.Session.ID); ok {
		t.Fatal("the workflow started while a creation was under way")
	}
	done()
	testwait.Until(t, 5*time.Second, func() (bool, string) {
		return pending(t, st, in.Session.ID) == 0, "the background start did not follow the creation"
	})
	if _, ok := fake.workflow(in.Session.ID); !ok {
		t.Fatal("no workflow started")
	}
}

// A session Open cannot record (its plan is not there) leaves nothing
// behind: neither the session nor a pending start of its workflow.
func TestOpenRecordsBothOrNeither(t *testing.T) {
	st := storetest.NewStore(t)
	fake := newFakeTemporal()
	in := fixture(t, st)
	in.Session.PaymentPlanID = "plan_missing"
	if err := sessionstart.New(st, fake).Open(context.Background(), in, "P"); err == nil {
		t.Fatal("a session of a missing plan was opened")
	}
	if _, err := st.Checkout().SessionByID(context.Background(), in.Session.ID); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("session: %v; want not found", err)
	}
	if n := pending(t, st, in.Session.ID); n != 0 {
		t.Fatalf("pending starts = %d, want 0", n)
	}
}

// Starts an API process could not make (Temporal unreachable) are left to
// the sweep: not before their grace has passed, then once, each workflow
// with its own input; a sweep while Temporal is still down gives them back.
func TestSweepStartsWhatWasLeftBehind(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	fake := newFakeTemporal()
	fake.setDown(true)
	api := sessionstart.New(st, fake)
	first := fixture(t, st)
	second := first
	second.Session = newSession(first.Session.ProjectID, first.Session.PaymentPlanID, first.Session.CreatedAt)
	for _, in := range []workflows.CheckoutSessionInput{first, second} {
		if err := api.Open(ctx, in, "P"); err != nil {
			t.Fatal(err)
		}
	}
	fake.refused(t, 2)
	ids := []string{first.Session.ID, second.Session.ID}
	sweeper := sessionstart.New(st, fake)
	if n, err := sweeper.Sweep(ctx, 10); n != 0 || err != nil {
		t.Fatalf("sweep within the grace started %d (%v); want none", n, err)
	}

	due(t, st)
	if n, err := sweeper.Sweep(ctx, 10); n != 0 || err == nil {
		t.Fatalf("sweep with Temporal down started %d (%v); want none and an error", n, err)
	}
	if n := pending(t, st, ids...); n != 2 {
		t.Fatalf("pending starts = %d, want both given back", n)
	}

	fake.setDown(false)
	due(t, st)
	if n, err := sweeper.Sweep(ctx, 10); n != 2 || err != nil {
		t.Fatalf("sweep started %d (%v), want 2", n, err)
	}
	if n := pending(t, st, ids...); n != 0 {
		t.Fatalf("pending starts = %d after the sweep, want 0", n)
	}
	for _, in := range []workflows.CheckoutSessionInput{first, second} {
		if got, ok := fake.workflow(in.Session.ID); !ok || got.Session.ID != in.Session.ID {
			t.Fatalf("workflow of %s: %+v (%v)", in.Session.ID, got, ok)
		}
	}
	fake.mu.Lock()
	starts := fake.starts
	fake.mu.Unlock()
	due(t, st)
	if n, err := sweeper.Sweep(ctx, 10); n != 0 || err != nil || fake.starts != starts {
		t.Fatalf("a sweep after all were started started %d (%v)", n, err)
	}
}

// Ensure starts at once the workflow of a session whose start is pending,
// and leaves alone one whose workflow was started.
func TestEnsureStartsOnlyWhatIsPending(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	fake := newFakeTemporal()
	fake.setDown(true)
	in := fixture(t, st)
	if err := sessionstart.New(st, fake).Open(ctx, in, "P"); err != nil {
		t.Fatal(err)
	}
	fake.refused(t, 1)
	fake.setDown(false)
	s := sessionstart.New(st, fake)
	if err := s.Ensure(ctx, in.Session.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := fake.workflow(in.Session.ID); !ok || pending(t, st, in.Session.ID) != 0 {
		t.Fatal("Ensure did not start the pending session's workflow")
	}
	starts := fake.starts
	if err := s.Ensure(ctx, in.Session.ID); err != nil || fake.starts != starts {
		t.Fatalf("Ensure of a started session: %v, %d more starts", err, fake.starts-starts)
	}
}

// HurrySessionStarts tells a pending start from none, and makes a pending
// one due at once.
func TestHurrySessionStarts(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	fake := newFakeTemporal()
	fake.setDown(true)
	in := fixture(t, st)
	if err := sessionstart.New(st, fake).Open(ctx, in, "P"); err != nil {
		t.Fatal(err)
	}
	fake.refused(t, 1)
	fake.setDown(false)
	sweeper := sessionstart.New(st, fake)
	if n, _ := sweeper.Sweep(ctx, 10); n != 0 {
		t.Fatalf("a start within its grace was swept")
	}
	if p, err := st.Checkout().HurrySessionStarts(ctx, []string{"cs_never_recorded", in.Session.ID}); !p || err != nil {
		t.Fatalf("hurry = %v, %v; want pending", p, err)
	}
	if n, err := sweeper.Sweep(ctx, 10); n != 1 || err != nil {
		t.Fatalf("sweep after the hurry started %d (%v), want 1", n, err)
	}
	if p, err := st.Checkout().HurrySessionStarts(ctx, []string{in.Session.ID}); p || err != nil {
		t.Fatalf("hurry of a started session = %v, %v; want none pending", p, err)
	}
}

// A transfer's signal-with-start starts a pending session's workflow with
// the input recorded for it, and signals it; a sweep racing it (the start
// still pending) starts nothing more. A session whose workflow has ended
// is not started again: the signal-with-start is refused.
func TestSignalWithStartStartsThePendingWorkflowOnce(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	fake := newFakeTemporal()
	fake.setDown(true)
	in := fixture(t, st)
	if err := sessionstart.New(st, fake).Open(ctx, in, "P"); err != nil {
		t.Fatal(err)
	}
	fake.refused(t, 1)
	fake.setDown(false)
	starts, err := st.Checkout().PendingSessionStarts(ctx, []string{in.Session.ID})
	if err != nil || len(starts) != 1 {
		t.Fatalf("pending starts = %v, %v", starts, err)
	}
	if err := sessionstart.SignalWithStart(ctx, fake, starts[0], workflows.SignalTransfer, "0xab"); err != nil {
		t.Fatal(err)
	}
	got, ok := fake.workflow(in.Session.ID)
	if !ok || got.Session.ID != in.Session.ID || got.Settings.CompleteOn != in.Settings.CompleteOn || fake.starts != 1 {
		t.Fatalf("workflow started with %+v (%v, %d starts), want the recorded input once", got, ok, fake.starts)
	}
	if s := fake.signals[workflows.CheckoutSessionWorkflowID(in.Session.ID)]; len(s) != 1 || s[0] != workflows.SignalTransfer {
		t.Fatalf("the workflow heard %v, want the transfer", s)
	}
	due(t, st)
	if _, err := sessionstart.New(st, fake).Sweep(ctx, 10); err != nil || len(fake.running) != 1 {
		t.Fatalf("a sweep racing the signal-with-start: %v, %d workflows, want still 1", err, len(fake.running))
	}

	ended := fixture(t, st)
	raw, _ := json.Marshal(ended)
	fake.ended = map[string]bool{workflows.CheckoutSessionWorkflowID(ended.Session.ID): true}
	err = sessionstart.SignalWithStart(ctx, fake, store.SessionStart{SessionID: ended.Session.ID, PlanTitle: "P", Input: raw,
		CreatedAt: ended.Session.CreatedAt}, workflows.SignalTransfer, "0xcd")
	if !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		t.Fatalf("signal-with-start of an ended session: %v, want it refused as started already", err)
	}
	if _, ok := fake.workflow(ended.Session.ID); ok {
		t.Fatal("an ended session's workflow was started again")
	}
}
