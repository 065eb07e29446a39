package workflows_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// fixture records a project and a plan and returns a session for it that
// is not recorded yet (execute records it).
func fixture(t *testing.T, st *store.Store, now time.Time) payment.Session {
	t.Helper()
	ctx := context.Background()
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: "WF", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	amount := decimal.RequireFromString("25")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pid, Title: "P", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := st.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	return payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(payment.NewSessionToken()),
		ProjectID: pid, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, Metadata: payment.EmptyMetadata,
		PaymentOptions: []payment.PaymentOption{}, ExpiresAt: now.Add(30 * time.Minute), QuoteExpiresAt: now.Add(30 * time.Minute),
		CreatedAt: now, UpdatedAt: now}
}

// execute records the session, as the API does before it starts the
// session's workflow, and runs the workflow.
func execute(t *testing.T, st *store.Store, env *testsuite.TestWorkflowEnvironment, in workflows.CheckoutSessionInput) {
	t.Helper()
	if err := st.Checkout().InsertSession(context.Background(), in.Session, nil); err != nil {
		t.Fatal(err)
	}
	env.ExecuteWorkflow(workflows.CheckoutSession, in)
}

func newEnv(t *testing.T, st *store.Store) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(workflows.CheckoutSession)
	// devnet is configured: a session waits for its chainwatch.
	chains := chainwatch.Chains{"devnet": {Network: chainwatch.Network{Key: "devnet", ChainID: 1337}}}
	(&activities.Activities{Store: st, Chains: chains}).Register(env)
	return env
}

// The session expires at expiresAt, 30 minutes of workflow time that the
// test environment skips through.
func TestCheckoutSessionExpiresAtExpiresAt(t *testing.T) {
	st := storetest.NewStore(t)
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	cs := fixture(t, st, start)
	env := newEnv(t, st)
	env.SetStartTime(start)

	var statusBefore payment.SessionStatus
	env.RegisterDelayedCallback(func() {
		s, err := st.Checkout().SessionByID(context.Background(), cs.ID)
		if err != nil {
			t.Error(err)
		}
		statusBefore = s.Status
	}, 29*time.Minute)

	execute(t, st, env, workflows.CheckoutSessionInput{Session: cs})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if statusBefore != payment.SessionOpen {
		t.Fatalf("status a minute before expiry = %q, want open", statusBefore)
	}
	s, err := st.Checkout().SessionByID(context.Background(), cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionExpired || !s.UpdatedAt.Equal(cs.ExpiresAt) {
		t.Fatalf("session = %s updated %v, want expired at %v", s.Status, s.UpdatedAt, cs.ExpiresAt)
	}
	if env.Now().Before(cs.ExpiresAt) {
		t.Fatalf("workflow ended at %v, before expiry %v", env.Now(), cs.ExpiresAt)
	}
}

// Lateness is the chain's: a payment mined a minute before expiresAt but
// seen only five minutes after it (the node was down) completes the
// session, not paid_late; until the network is scanned past expiresAt the
// session does not decide its expiry.
func TestPaymentMinedInTimeButSeenLateCompletesTheSession(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	ps := newPaidSession(t, start, start.Add(24*time.Hour), start.Add(29*time.Minute))
	st, cs, env, p, status := ps.st, ps.cs, ps.env, ps.p, ps.status
	// Chainwatch stopped a minute before expiresAt.
	if err := st.Chains().RecordScanProgress(ctx, "devnet", 100, start.Add(29*time.Minute), start); err != nil {
		t.Fatal(err)
	}
	var before payment.SessionStatus
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTransfer, p) }, 35*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTxStatus, status(payment.TxConfirmed)) }, 35*time.Minute+time.Second)
	env.RegisterDelayedCallback(func() {
		s, err := st.Checkout().SessionByID(ctx, cs.ID)
		if err != nil {
			t.Error(err)
		}
		before = s.Status
		if err := st.Chains().RecordScanProgress(ctx, "devnet", 500, start.Add(31*time.Minute), start); err != nil {
			t.Error(err)
		}
	}, 36*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTxStatus, status(payment.TxFinalized)) }, 38*time.Minute)

	execute(t, st, env, workflows.CheckoutSessionInput{Session: cs,
		Settings: workflows.SessionSettings{CompleteOn: payment.TxFinalized}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if before != payment.SessionProcessing {
		t.Fatalf("past expiresAt, not scanned that far, with a payment seen: %q, want processing", before)
	}
	s, err := st.Checkout().SessionByID(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || s.Exception != "" || s.AmountPaidUSD.String() != "25" {
		t.Fatalf("session = %s %q %s, want completed with nothing to flag", s.Status, s.Exception, s.AmountPaidUSD)
	}
}

// Chainwatch held behind for longer than the late-payment window still
// counts a payment made while the session was open: the session waits for
// its network to be scanned past expiresAt, and past the window before it
// ends.
func TestChainwatchBehindByMoreThanTheLateWindowStillCounts(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	ps := newPaidSession(t, start, start.Add(40*time.Minute), start.Add(29*time.Minute))
	st, cs, env, p, status := ps.st, ps.cs, ps.env, ps.p, ps.status
	if err := st.Chains().RecordScanProgress(ctx, "devnet", 100, start.Add(28*time.Minute), start); err != nil {
		t.Fatal(err)
	}
	var atWindowEnd payment.SessionStatus
	env.RegisterDelayedCallback(func() {
		s, err := st.Checkout().SessionByID(ctx, cs.ID)
		if err != nil {
			t.Error(err)
		}
		atWindowEnd = s.Status
	}, 50*time.Minute)
	// Two hours later chainwatch catches up and finds the payment.
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTransfer, p) }, 2*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTxStatus, status(payment.TxFinalized)) }, 2*time.Hour+time.Second)
	env.RegisterDelayedCallback(func() {
		if err := st.Chains().RecordScanProgress(ctx, "devnet", 900, start.Add(2*time.Hour), start.Add(2*time.Hour)); err != nil {
			t.Error(err)
		}
	}, 2*time.Hour+time.Minute)
	execute(t, st, env, workflows.CheckoutSessionInput{Session: cs,
		Settings: workflows.SessionSettings{CompleteOn: payment.TxFinalized}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if atWindowEnd != payment.SessionOpen {
		t.Fatalf("at the window's end, the network not scanned to expiresAt: %q, want open", atWindowEnd)
	}
	s, err := st.Checkout().SessionByID(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || s.Exception != "" || s.AmountPaidUSD.String() != "25" {
		t.Fatalf("session = %s %q %s, want completed with nothing to flag", s.Status, s.Exception, s.AmountPaidUSD)
	}
}

// A session whose only payment fails (a reorg dropped it, and it was not
// mined again) goes back to open: nothing is on its way, and the payer may
// still pay.
func TestASessionWhosePaymentsAllFailedIsOpenAgain(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	ps := newPaidSession(t, start, start.Add(time.Hour), start.Add(time.Minute))
	st, cs, env, p, status := ps.st, ps.cs, ps.env, ps.p, ps.status
	var during, after payment.SessionStatus
	read := func(into *payment.SessionStatus) func() {
		return func() {
			s, err := st.Checkout().SessionByID(ctx, cs.ID)
			if err != nil {
				t.Error(err)
			}
			*into = s.Status
		}
	}
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTransfer, p) }, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTxStatus, status(payment.TxConfirmed)) }, time.Minute+time.Second)
	env.RegisterDelayedCallback(read(&during), 2*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTxStatus, status(payment.TxFailed)) }, 5*time.Minute)
	env.RegisterDelayedCallback(read(&after), 6*time.Minute)
	execute(t, st, env, workflows.CheckoutSessionInput{Session: cs,
		Settings: workflows.SessionSettings{CompleteOn: payment.TxFinalized}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if during != payment.SessionProcessing || after != payment.SessionOpen {
		t.Fatalf("while its payment confirmed: %q, once it failed: %q; want processing, then open", during, after)
	}
}

// paidSession is a session paid 25 USDC on devnet, about to start, whose
// transaction workflows are mocked: the test tells the session what they
// would (status), for the payment p chainwatch reports, mined at minedAt.
type paidSession struct {
	st  *store.Store
	cs  payment.Session
	env *testsuite.TestWorkflowEnvironment
	p   workflows.SessionTransfer
}

func newPaidSession(t *testing.T, start, lateUntil, minedAt time.Time) paidSession {
	st := storetest.NewStore(t)
	cs := fixture(t, st, start)
	cs.DepositAddress, cs.LateUntil = "0x7117F573757ea2B592989CC2dD840A662Db09bC8", lateUntil
	cs.PaymentOptions = []payment.PaymentOption{{AssetDefinitionID: "usdc-devnet", Network: "devnet", ChainID: 1337,
		Symbol: "USDC", Decimals: 6, AmountBaseUnits: "25000000"}}
	env := newEnv(t, st)
	env.RegisterWorkflow(workflows.Transaction)
	env.OnWorkflow(workflows.Transaction, mock.Anything, mock.Anything).Return(nil)
	env.SetStartTime(start)
	p := workflows.SessionTransfer{SessionID: cs.ID, Network: "devnet", ChainID: 1337, TxHash: "0x" + strings.Repeat("ab", 32),
		LogIndex: 0, To: cs.DepositAddress, AssetID: "usdc-devnet", AmountBaseUnits: "25000000",
		BlockTime: uint64(minedAt.Unix()), Source: "chainwatch"}
	return paidSession{st: st, cs: cs, env: env, p: p}
}

// status is what the payment's transaction workflow would tell the session.
func (ps paidSession) status(s payment.TransactionStatus) workflows.TxStatus {
	return workflows.TxStatus{Key: ps.p.Key(), RowID: "tx_1", TransferKey: ps.p.TransferKey(), Status: s,
		AssetID: ps.p.AssetID, AmountBaseUnits: ps.p.AmountBaseUnits, MinedAt: ps.p.BlockTime}
}

// A transfer whose record is made again under another ID (the first lost
// in a restore, its transaction's workflow run again) stays one line of
// the session: it counts once, and the session is not overpaid.
func TestATransferRecordedAgainUnderAnotherIDCountsOnce(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	ps := newPaidSession(t, start, start.Add(time.Hour), start.Add(time.Minute))
	st, cs, env, p, status := ps.st, ps.cs, ps.env, ps.p, ps.status
	if err := st.Chains().RecordScanProgress(ctx, "devnet", 500, start.Add(2*time.Hour), start); err != nil {
		t.Fatal(err)
	}
	again := status(payment.TxFinalized)
	again.RowID = "tx_2"
	var paidBefore string
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTransfer, p) }, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTxStatus, status(payment.TxFinalized)) }, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		s, err := st.Checkout().SessionByID(ctx, cs.ID)
		if err != nil {
			t.Error(err)
		}
		paidBefore = s.AmountPaidUSD.String()
		env.SignalWorkflow(workflows.SignalTxStatus, again)
	}, 3*time.Minute)

	execute(t, st, env, workflows.CheckoutSessionInput{Session: cs,
		Settings: workflows.SessionSettings{CompleteOn: payment.TxFinalized}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	s, err := st.Checkout().SessionByID(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if paidBefore != "25" || s.Status != payment.SessionCompleted || s.AmountPaidUSD.String() != "25" || s.Exception != "" {
		t.Fatalf("paid %s before the record was made again; after: %s, paid %s, exception %q; want completed, 25, none",
			paidBefore, s.Status, s.AmountPaidUSD, s.Exception)
	}
}

// A cancel with no argument cancels without an audit entry; one carrying
// the merchant's audit entry records it with the cancelation, once,
// however often the activity runs.
func TestACancelRecordsItsAuditEntryWithTheChange(t *testing.T) {
	for _, withEntry := range []bool{false, true} {
		st := storetest.NewStore(t)
		start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
		cs := fixture(t, st, start)
		env := newEnv(t, st)
		env.SetStartTime(start)
		entry := payment.AuditEntry{ID: payment.NewID(payment.PrefixAudit, start), ProjectID: cs.ProjectID, OccurredAt: start,
			Origin: payment.Origin{ActorKind: payment.AuditActorAPIKey, ActorID: "key_1", IP: "192.0.2.1"},
			Action: payment.AuditSessionCanceled, TargetType: "checkout_session", TargetID: cs.ID}
		canceled := false
		env.RegisterDelayedCallback(func() {
			var args []any
			if withEntry {
				args = append(args, workflows.CancelRequest{Audit: &entry})
			}
			env.UpdateWorkflow(workflows.UpdateCancelSession, "cancel", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Error(err) },
				OnComplete: func(_ any, err error) { canceled = err == nil }}, args...)
		}, time.Minute)
		execute(t, st, env, workflows.CheckoutSessionInput{Session: cs})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		s, err := st.Checkout().SessionByID(context.Background(), cs.ID)
		if err != nil || !canceled || s.Status != payment.SessionCanceled {
			t.Fatalf("with an entry %v: canceled %v, session %s (%v)", withEntry, canceled, s.Status, err)
		}
		// The activity run again, as after a commit whose answer was lost.
		acts := &activities.Activities{Store: st}
		if withEntry {
			if err := acts.CancelCheckoutSession(context.Background(), workflows.CancelSessionInput{SessionID: cs.ID, At: start, Audit: &entry}); err != nil {
				t.Fatalf("the cancel run again: %v", err)
			}
		}
		_, n, err := st.Access().ListAudit(context.Background(), payment.Principal{ProjectID: cs.ProjectID}, payment.ListQuery{Page: 1, Limit: 20})
		if want := map[bool]int{false: 0, true: 1}[withEntry]; err != nil || n != want {
			t.Fatalf("with an entry %v: %d audit entries (%v), want %d", withEntry, n, err, want)
		}
	}
}
