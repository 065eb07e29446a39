package workflows_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// inlineEnv runs a session's workflow with the real activities on the dev
// chain, and no other workflow type: a transaction's workflow started for
// a payment would fail the test.
func inlineEnv(st *store.Store, chains chainwatch.Chains, start time.Time) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(workflows.CheckoutSession)
	(&activities.Activities{Store: st, Chains: chains}).Register(env)
	env.SetStartTime(start)
	return env
}

// soloTransfer is chainwatch's report of the fixture's 25 USDC payment,
// which pays its session alone.
func soloTransfer(cs payment.Session, hash string) workflows.SessionTransfer {
	return workflows.SessionTransfer{SessionID: cs.ID, Network: "devnet", ChainID: 1337, TxHash: hash, LogIndex: 0,
		To: cs.DepositAddress, AssetID: "usdc-devnet", AmountBaseUnits: "25000000", Source: "chainwatch", PaysSessionAlone: true}
}

// recordLooks records what each look a session's workflow takes at a
// payment (each CheckTransaction local activity) returned.
func recordLooks(env *testsuite.TestWorkflowEnvironment) *[]workflows.CheckOutput {
	var looks []workflows.CheckOutput
	checks := map[string]bool{} // the local activities that were a look
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, args []any) {
		if _, ok := args[0].(workflows.CheckInput); ok {
			checks[info.ActivityID] = true
		}
	})
	env.SetOnLocalActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
		var out workflows.CheckOutput
		if checks[info.ActivityID] && err == nil && result.Get(&out) == nil {
			looks = append(looks, out)
		}
	})
	return &looks
}

// runSession runs a session's workflow (completing on finalized), started
// as the API starts one, to its end.
func runSession(t *testing.T, env *testsuite.TestWorkflowEnvironment, cs payment.Session) {
	t.Helper()
	env.ExecuteWorkflow(workflows.CheckoutSession, workflows.CheckoutSessionInput{Session: cs,
		Settings: workflows.SessionSettings{CompleteOn: payment.TxFinalized}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

// reportAndRun has chainwatch report p to the session a second in, runs the
// session's workflow to its end, and returns p's transaction's record.
func reportAndRun(t *testing.T, env *testsuite.TestWorkflowEnvironment, st *store.Store, cs payment.Session,
	p workflows.SessionTransfer) payment.Transaction {
	t.Helper()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTransfer, p) }, time.Second)
	runSession(t, env, cs)
	tx, err := st.Payments().TransactionByHash(context.Background(), 1337, p.TxHash)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// A payment that pays its session alone is followed to finalized by the
// session's workflow itself: no transaction workflow, and the session
// completes on its records. A release's worker deployment starts it at
// version 1 without a marker (sessionVersion); the test environment has no
// worker deployment, so GetVersion stands in for it here, once
// (TestAnUpgradeFromTheLastRelease checks on a real server that such a
// session records no marker).
func TestASessionFollowsAPaymentToItAloneItself(t *testing.T) {
	ctx := context.Background()
	st, chain, chains, cs, start := transactionFixture(t, 3)
	hash := payAndMine(t, chain, cs)
	env := inlineEnv(st, chains, start)
	env.OnGetVersion(workflows.ChangeOneWorkflowPerPayment, workflow.DefaultVersion, 1).Return(workflow.Version(1)).Once()
	looks := recordLooks(env)
	// Two more blocks 20 s after the payment is seen: its third
	// confirmation.
	env.RegisterDelayedCallback(func() { chain.Commit(); chain.Commit() }, 20*time.Second)
	tx := reportAndRun(t, env, st, cs, soloTransfer(cs, hash.Hex()))
	if tx.Status != payment.TxFinalized || len(tx.StatusHistory) != 2 || tx.CheckoutSessionID != cs.ID ||
		tx.AmountBaseUnits != "25000000" {
		t.Fatalf("transaction = %s %v for %s, %s", tx.Status, tx.StatusHistory, tx.CheckoutSessionID, tx.AmountBaseUnits)
	}
	// The transfers were read at the first look; the next found the
	// transaction in the same block and did not read them again.
	if len(*looks) != 2 || (*looks)[0].SameBlock || len((*looks)[0].Transfers) == 0 || !(*looks)[1].SameBlock || len((*looks)[1].Transfers) != 0 {
		t.Fatalf("looks: %+v", *looks)
	}
	s, err := st.Checkout().SessionByID(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || !s.AmountPaidUSD.Equal(cs.AmountUSD) {
		t.Fatalf("session = %s, paid %s", s.Status, s.AmountPaidUSD)
	}
	// Finalized at the look after the missing confirmations' blocks (two
	// of 15 s), not block by block.
	if took := tx.FinalizedAt.Sub(*tx.ConfirmedAt); took < 30*time.Second || took > 31*time.Second {
		t.Fatalf("finalized %v after confirmed, want the 30 s of the two missing blocks", took)
	}
}

// A payment the scan reported with its transaction's transfers (read in
// the block the scan read) is followed without reading them again: every
// look finds the transaction in that block and reads its receipt alone,
// and the record is the same as when the first look reads them.
func TestAScannedPaymentsFirstLookTakesTheScansTransfers(t *testing.T) {
	ctx := context.Background()
	st, chain, chains, cs, start := transactionFixture(t, 3)
	hash := payAndMine(t, chain, cs)
	r, err := chain.Client().TransactionReceipt(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	p := soloTransfer(cs, hash.Hex())
	p.BlockHash = r.BlockHash.Hex()
	p.TxTransfers = []payment.Transfer{{LogIndex: 0, From: chain.Accounts[0].Address.Hex(), To: cs.DepositAddress,
		AssetID: "usdc-devnet", AmountBaseUnits: "25000000"}}
	env := inlineEnv(st, chains, start)
	looks := recordLooks(env)
	env.RegisterDelayedCallback(func() { chain.Commit(); chain.Commit() }, 20*time.Second)
	tx := reportAndRun(t, env, st, cs, p)
	if len(*looks) != 2 || !(*looks)[0].SameBlock || !(*looks)[1].SameBlock || len((*looks)[0].Transfers) != 0 {
		t.Fatalf("looks: %+v", *looks)
	}
	if tx.Status != payment.TxFinalized || tx.CheckoutSessionID != cs.ID || tx.AmountBaseUnits != "25000000" ||
		tx.LogIndex != 0 || !strings.EqualFold(tx.FromAddress, chain.Accounts[0].Address.Hex()) || tx.BlockHash != p.BlockHash {
		t.Fatalf("transaction = %+v", tx)
	}
	s, err := st.Checkout().SessionByID(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || !s.AmountPaidUSD.Equal(cs.AmountUSD) {
		t.Fatalf("session = %s, paid %s", s.Status, s.AmountPaidUSD)
	}
}

// A payment already as deep as its network asks when the session first
// looks at it (the scan behind the head, the session's workflow task late
// in a busy queue) is finalized by a second look in the same workflow
// task: confirmed, then finalized, with no timer between, and the session
// completes at once, through processing as ever.
func TestAPaymentDeepEnoughAtItsFirstLookIsFinalizedWithoutATimer(t *testing.T) {
	ctx := context.Background()
	st, chain, chains, cs, start := transactionFixture(t, 3)
	hash := payAndMine(t, chain, cs)
	chain.Commit()
	chain.Commit() // its third confirmation, before the scan reports it
	env := inlineEnv(st, chains, start)
	looks := recordLooks(env)
	tx := reportAndRun(t, env, st, cs, soloTransfer(cs, hash.Hex()))
	h := tx.StatusHistory
	if tx.Status != payment.TxFinalized || len(h) != 2 || h[0].Status != payment.TxConfirmed || h[1].Status != payment.TxFinalized {
		t.Fatalf("transaction = %s %v", tx.Status, h)
	}
	// The workflow's clock moves only with its timers: none ran between.
	if !tx.FinalizedAt.Equal(*tx.ConfirmedAt) || !tx.ConfirmedAt.Equal(start.Add(time.Second)) {
		t.Fatalf("confirmed at %v, finalized at %v; want both when the transfer was reported, %v", tx.ConfirmedAt, tx.FinalizedAt,
			start.Add(time.Second))
	}
	if len(*looks) != 2 || (*looks)[0].SameBlock || (*looks)[0].Confirmations < 3 || !(*looks)[1].SameBlock {
		t.Fatalf("looks: %+v", *looks)
	}
	s, err := st.Checkout().SessionByID(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != payment.SessionCompleted || s.CompletedAt == nil || !s.CompletedAt.Equal(start.Add(time.Second)) {
		t.Fatalf("session = %s, completed at %v", s.Status, s.CompletedAt)
	}
	rows, err := st.Pool().Query(ctx, `SELECT type FROM events WHERE object_id = $1 ORDER BY version`, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	types, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(types, "checkout.session.processing") || !slices.Contains(types, "checkout.session.completed") {
		t.Fatalf("the session's events %v; want processing and completed", types)
	}
}

// A reorg that takes a followed payment's block away moves it back to
// pending; not mined again, it fails at the pending timeout, and the
// session, whose only payment it was, expires once it has.
func TestAReorgMovesAPaymentFollowedInlineBackToPending(t *testing.T) {
	ctx := context.Background()
	st, chain, chains, cs, start := transactionFixture(t, 3)
	parent, err := chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash := payAndMine(t, chain, cs)
	env := inlineEnv(st, chains, start)
	env.RegisterDelayedCallback(func() {
		if err := chain.Fork(parent.Hash()); err != nil {
			t.Error(err)
		}
		chain.Rollback() // the transaction is not mined again
		chain.Commit()
		chain.Commit()
	}, 10*time.Second)
	var during payment.SessionStatus
	env.RegisterDelayedCallback(func() {
		s, err := st.Checkout().SessionByID(ctx, cs.ID)
		if err != nil {
			t.Error(err)
		}
		during = s.Status
	}, 5*time.Second)
	tx := reportAndRun(t, env, st, cs, soloTransfer(cs, hash.Hex()))
	h := tx.StatusHistory
	if tx.Status != payment.TxFailed || len(h) != 3 || h[0].Status != payment.TxConfirmed || h[1].Status != payment.TxPending {
		t.Fatalf("transaction = %s %q %v", tx.Status, tx.FailureReason, h)
	}
	s, err := st.Checkout().SessionByID(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if during != payment.SessionProcessing || s.Status != payment.SessionExpired || !s.AmountPaidUSD.IsZero() {
		t.Fatalf("session = %s while confirming, then %s, paid %s", during, s.Status, s.AmountPaidUSD)
	}
}

// At its expiry a session waits for its network's chainwatch to say it has
// handed over the transfers mined before, and expires on that word, not
// by reading the scan's progress over and over.
func TestASessionExpiresOnChainwatchsWord(t *testing.T) {
	ctx := context.Background()
	st, _, chains, cs, start := transactionFixture(t, 3)
	cs.PaymentOptions[0].Network = "devnet"
	cs.LateUntil = cs.ExpiresAt.Add(time.Hour)
	// The scan's recorded progress is behind the expiry throughout.
	if err := st.Chains().RecordScanProgress(ctx, "devnet", 1, start, start); err != nil {
		t.Fatal(err)
	}
	env := inlineEnv(st, chains, start)
	statusAt := map[time.Duration]payment.SessionStatus{}
	for _, after := range []time.Duration{10 * time.Second, 30 * time.Second} {
		env.RegisterDelayedCallback(func() {
			s, err := st.Checkout().SessionByID(ctx, cs.ID)
			if err != nil {
				t.Error(err)
			}
			statusAt[after] = s.Status
		}, cs.ExpiresAt.Sub(start)+after)
	}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalScanned, workflows.ScanProgress{Network: "devnet", BlockTime: uint64(cs.ExpiresAt.Unix() + 1)})
	}, cs.ExpiresAt.Sub(start)+20*time.Second)
	// And of its late-payment window, for the workflow to end.
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalScanned, workflows.ScanProgress{Network: "devnet", BlockTime: uint64(cs.LateUntil.Unix() + 1)})
	}, cs.LateUntil.Sub(start)+time.Second)
	runSession(t, env, cs)
	if statusAt[10*time.Second] != payment.SessionOpen || statusAt[30*time.Second] != payment.SessionExpired {
		t.Fatalf("session 10 s after expiresAt: %s, 30 s after (10 s after the word): %s; want open, then expired",
			statusAt[10*time.Second], statusAt[30*time.Second])
	}
}
