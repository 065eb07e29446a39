package activities_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// The activities that move money are run as the worker runs them (the
// SDK's activity environment, over the real store), and each is run again
// as after a commit whose answer was lost: a retry changes nothing more,
// records no second event and no second audit entry.

var usdc = payment.Asset{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337,
	TokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}

const depositAddress = "0x7117F573757ea2B592989CC2dD840A662Db09bC8"

// moneyFixture records a project and a plan, and returns the activities
// over the store, in the activity environment, and a session of the plan
// taking 25 USDC on devnet, not recorded yet.
func moneyFixture(t *testing.T) (*store.Store, *testsuite.TestActivityEnvironment, payment.Session) {
	t.Helper()
	st := storetest.NewStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := recordProject(t, st, "Money", now)
	amount := decimal.RequireFromString("25")
	plan := recordPlan(t, st, pid, "P", amount, now)
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(payment.NewSessionToken()),
		ProjectID: pid, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, Metadata: payment.EmptyMetadata,
		DepositAddress: depositAddress, PaymentOptions: []payment.PaymentOption{{AssetDefinitionID: usdc.ID, Network: "devnet",
			ChainID: 1337, Symbol: "USDC", Decimals: 6, AmountBaseUnits: "25000000"}},
		ExpiresAt: now.Add(30 * time.Minute), QuoteExpiresAt: now.Add(30 * time.Minute), LateUntil: now.Add(24 * time.Hour),
		CreatedAt: now, UpdatedAt: now}
	chains := chainwatch.Chains{"devnet": {Network: chainwatch.Network{Key: "devnet", ChainID: 1337}, Assets: []payment.Asset{usdc}}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	(&activities.Activities{Store: st, Chains: chains}).Register(env)
	return st, env, cs
}

// run runs an activity twice, as a retry after a lost answer does, and
// returns the second run's result in out (if not nil).
func run(t *testing.T, env *testsuite.TestActivityEnvironment, name string, out any, args ...any) {
	t.Helper()
	for range 2 {
		v, err := env.ExecuteActivity(name, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out != nil {
			if err := v.Get(out); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func insert(t *testing.T, st *store.Store, cs payment.Session) {
	t.Helper()
	if err := st.Checkout().InsertSession(context.Background(), cs, nil); err != nil {
		t.Fatal(err)
	}
}

// events counts the project's events by type.
func events(t *testing.T, st *store.Store, projectID string) map[payment.EventType]int {
	t.Helper()
	list, _, err := st.Webhooks().ListEvents(context.Background(), payment.Principal{ProjectID: projectID}, payment.ListQuery{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := map[payment.EventType]int{}
	for _, e := range list {
		n[e.Type]++
	}
	return n
}

func audited(t *testing.T, st *store.Store, projectID string) int {
	t.Helper()
	_, n, err := st.Access().ListAudit(context.Background(), payment.Principal{ProjectID: projectID}, payment.ListQuery{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// observation is what the chain says of a transaction paying the session
// 25 USDC, with confirmations of 3.
func observation(cs payment.Session, status payment.TransactionStatus, confirmations int) payment.Observation {
	block := int64(100)
	now := cs.CreatedAt.Add(time.Minute)
	return payment.Observation{Network: "devnet", ChainID: 1337, TxHash: "0x" + "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12",
		Status: status, Mined: true, Succeeded: true, BlockNumber: &block, BlockHash: "0x" + "77" + "00000000000000000000000000000000000000000000000000000000000000",
		Confirmations: confirmations, RequiredConfirmations: 3, BlockTime: now,
		Transfers: []payment.Transfer{{LogIndex: 0, From: "0x000000000000000000000000000000000000dEaD", To: cs.DepositAddress,
			AssetID: usdc.ID, AmountBaseUnits: "25000000"}}, At: now}
}

// A transaction's transfer to a session is recorded once however often the
// sync that sees it runs, and advanced once to finalized.
func TestSyncTransactionRecordsAndAdvancesATransferOnce(t *testing.T) {
	st, env, cs := moneyFixture(t)
	insert(t, st, cs)

	var out workflows.SyncOutput
	run(t, env, workflows.ActivitySyncTransaction, &out, workflows.SyncInput{Observation: observation(cs, payment.TxConfirmed, 1)})
	if len(out.Transactions) != 1 {
		t.Fatalf("records = %d, want 1", len(out.Transactions))
	}
	confirmed := out.Transactions[0]
	if confirmed.Status != payment.TxConfirmed || confirmed.CheckoutSessionID != cs.ID || confirmed.AmountBaseUnits != "25000000" || confirmed.Unexpected {
		t.Fatalf("record = %+v", confirmed)
	}

	run(t, env, workflows.ActivitySyncTransaction, &out, workflows.SyncInput{Observation: observation(cs, payment.TxFinalized, 3)})
	records, err := st.Payments().SessionTransactions(context.Background(), cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1 || records[0].ID != confirmed.ID || records[0].Status != payment.TxFinalized || records[0].Version != confirmed.Version+1 {
		t.Fatalf("records = %+v; want the one record, finalized, one version on", records)
	}
	n := events(t, st, cs.ProjectID)
	if n[payment.EventTxConfirmed] != 1 || n[payment.EventTxFinalized] != 1 {
		t.Fatalf("events = %v; want one confirmed and one finalized", n)
	}
}

// A session's progress recorded again makes no second event, and a
// progress behind the record changes nothing.
func TestRecordSessionProgressOnce(t *testing.T) {
	st, env, cs := moneyFixture(t)
	insert(t, st, cs)
	at := cs.CreatedAt.Add(time.Minute)
	run(t, env, workflows.ActivityRecordSessionProgress, nil, workflows.ProgressInput{SessionID: cs.ID,
		Status: payment.SessionCompleted, PaidUSD: "25", CompletedAt: &at, At: at})
	s, err := st.Checkout().SessionByID(context.Background(), cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || s.AmountPaidUSD.String() != "25" {
		t.Fatalf("session = %s paid %s", s.Status, s.AmountPaidUSD)
	}
	if n := events(t, st, cs.ProjectID); n[payment.EventSessionCompleted] != 1 {
		t.Fatalf("events = %v; want one completed", n)
	}

	// The workflow task that recorded it ran again (Temporal never
	// recorded its completion), and its look at the chain found the last
	// payment not yet final: the record stays completed, with no event.
	run(t, env, workflows.ActivityRecordSessionProgress, nil, workflows.ProgressInput{SessionID: cs.ID,
		Status: payment.SessionProcessing, PaidUSD: "10", At: at.Add(time.Second)})
	if s, err = st.Checkout().SessionByID(context.Background(), cs.ID); err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || s.AmountPaidUSD.String() != "25" {
		t.Fatalf("a completed session taken back: %s paid %s", s.Status, s.AmountPaidUSD)
	}
	if n := events(t, st, cs.ProjectID); n[payment.EventSessionProcessing] != 0 || n[payment.EventSessionCompleted] != 1 {
		t.Fatalf("events = %v; want one completed and nothing after", n)
	}
}

// auditEntry is a merchant's entry for a change to the session.
func auditEntry(cs payment.Session, action string) payment.AuditEntry {
	return payment.AuditEntry{ID: payment.NewID(payment.PrefixAudit, cs.CreatedAt), ProjectID: cs.ProjectID, OccurredAt: cs.CreatedAt,
		Origin: payment.Origin{ActorKind: payment.AuditActorAPIKey, ActorID: "key_1", IP: "192.0.2.1"},
		Action: action, TargetType: "checkout_session", TargetID: cs.ID}
}

// A merchant's acceptance of an underpayment completes the session and is
// audited, once.
func TestResolveCheckoutSessionIsAuditedOnce(t *testing.T) {
	st, env, cs := moneyFixture(t)
	insert(t, st, cs)
	// Expired, paid 10 of 25.
	expiredAt := cs.ExpiresAt
	if _, err := env.ExecuteActivity(workflows.ActivityExpireCheckoutSession, workflows.ExpireSessionInput{SessionID: cs.ID, At: expiredAt}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ExecuteActivity(workflows.ActivityRecordSessionProgress, workflows.ProgressInput{SessionID: cs.ID,
		Status: payment.SessionExpired, PaidUSD: "10", Exception: payment.ExceptionUnderpaid, At: expiredAt}); err != nil {
		t.Fatal(err)
	}
	entry := auditEntry(cs, payment.AuditSessionResolved)
	run(t, env, workflows.ActivityResolveCheckoutSession, nil, workflows.ResolveInput{SessionID: cs.ID,
		Resolution: payment.ResolutionUnderpaymentAccepted, At: cs.CreatedAt.Add(time.Hour), Audit: &entry})
	s, err := st.Checkout().SessionByID(context.Background(), cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || s.Exception != "" || s.Resolution != payment.ResolutionUnderpaymentAccepted {
		t.Fatalf("session = %s, exception %q, resolution %q", s.Status, s.Exception, s.Resolution)
	}
	if n := events(t, st, cs.ProjectID); n[payment.EventSessionCompleted] != 1 || n[payment.EventSessionResolved] != 1 {
		t.Fatalf("events = %v; want one completed, one resolved", n)
	}
	if n := audited(t, st, cs.ProjectID); n != 1 {
		t.Fatalf("audit entries = %d, want 1", n)
	}
}

// A change whose audit entry the database refuses is not made either, and
// fails for good.
func TestAChangeWhoseAuditEntryIsRefusedIsNotMade(t *testing.T) {
	st, env, cs := moneyFixture(t)
	insert(t, st, cs)
	entry := auditEntry(cs, payment.AuditSessionCanceled)
	entry.ProjectID = "proj_missing" // no such project: the entry is refused
	_, err := env.ExecuteActivity(workflows.ActivityCancelCheckoutSession, workflows.CancelSessionInput{SessionID: cs.ID,
		At: cs.CreatedAt.Add(time.Minute), Audit: &entry})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != workflows.ErrorAuditRefused || !app.NonRetryable() {
		t.Fatalf("error = %v; want a non-retryable %s", err, workflows.ErrorAuditRefused)
	}
	s, err := st.Checkout().SessionByID(context.Background(), cs.ID)
	if err != nil || s.Status != payment.SessionOpen {
		t.Fatalf("session = %s (%v); want open", s.Status, err)
	}
	if n := events(t, st, cs.ProjectID); n[payment.EventSessionCanceled] != 0 {
		t.Fatalf("events = %v; want no canceled", n)
	}
}

// A merchant's assignment of an unexpected transfer to a session is
// recorded and audited once.
func TestAssignTransferIsAuditedOnce(t *testing.T) {
	st, env, ended := moneyFixture(t)
	ctx := context.Background()
	ended.Status = payment.SessionExpired
	insert(t, st, ended)
	now := ended.CreatedAt.Add(2 * time.Hour)
	block := int64(100)
	unexpected := payment.Transaction{ID: payment.NewID(payment.PrefixTx, now), ProjectID: ended.ProjectID,
		CheckoutSessionID: ended.ID, PaymentPlanID: ended.PaymentPlanID, Status: payment.TxFinalized, Network: "devnet",
		ChainID: 1337, TxHash: "0x" + "cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34", LogIndex: 0,
		FromAddress: "0x000000000000000000000000000000000000dEaD", ToAddress: ended.DepositAddress, AssetDefinitionID: usdc.ID,
		Symbol: "USDC", Amount: "25", AmountBaseUnits: "25000000", AmountUSD: decimal.RequireFromString("25"),
		BlockNumber: &block, RequiredConfirmations: 3, Confirmations: 3, Unexpected: true,
		StatusHistory: []payment.StatusChange{{Status: payment.TxFinalized, At: now}}, CreatedAt: now, UpdatedAt: now}
	if _, err := st.Payments().RecordTransaction(ctx, unexpected, nil); err != nil {
		t.Fatal(err)
	}
	open := ended
	open.ID, open.Status, open.DepositAddress = payment.NewID(payment.PrefixSession, now), payment.SessionOpen, "0x1111111111111111111111111111111111111111"
	open.TokenHash = payment.HashSecret(payment.NewSessionToken())
	insert(t, st, open)

	entry := auditEntry(open, payment.AuditTransactionAssigned)
	var assigned payment.Transaction
	run(t, env, workflows.ActivityAssignTransfer, &assigned, workflows.AssignInput{TransactionID: unexpected.ID, SessionID: open.ID,
		At: now, Audit: &entry})
	if assigned.AssignedSessionID != open.ID {
		t.Fatalf("assigned = %+v", assigned)
	}
	if n := events(t, st, open.ProjectID); n[payment.EventTxAssigned] != 1 {
		t.Fatalf("events = %v; want one assigned", n)
	}
	if n := audited(t, st, open.ProjectID); n != 1 {
		t.Fatalf("audit entries = %d, want 1", n)
	}
}
