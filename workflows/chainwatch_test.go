package workflows_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/workflows"
)

// handOverEnv runs a rescan of one block that finds a transfer to session
// cs_1; the session's workflow takes the transfer's signal once it has
// failed `missing` times, and hurry tells whether its start is pending.
func handOverEnv(t *testing.T, missing int, pending bool) (*testsuite.TestWorkflowEnvironment, workflows.SessionTransfer) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	workflows.Register(env)
	env.RegisterActivityWithOptions(func(context.Context, workflows.ScanRangeInput) (workflows.ScanOutput, error) {
		return workflows.ScanOutput{}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityScanRange})
	env.RegisterActivityWithOptions(func(context.Context, string) (bool, error) { return false, nil },
		activity.RegisterOptions{Name: workflows.ActivityMakePendingSessionStartDue})
	p := workflows.SessionTransfer{SessionID: "cs_1", Network: "devnet", ChainID: 1337, TxHash: "0xab", LogIndex: 0,
		AssetID: "usdc-devnet", AmountBaseUnits: "1", Source: "chainwatch"}
	env.OnActivity(workflows.ActivityScanRange, mock.Anything, mock.Anything).Return(workflows.ScanOutput{Transfers: []workflows.SessionTransfer{p}}, nil)
	sessionID := workflows.CheckoutSessionWorkflowID("cs_1")
	if missing > 0 {
		env.OnSignalExternalWorkflow(mock.Anything, sessionID, "", workflows.SignalTransfer, p).Return(errors.New("workflow not found")).Times(missing)
	}
	env.OnSignalExternalWorkflow(mock.Anything, sessionID, "", workflows.SignalTransfer, p).Return(nil)
	env.OnActivity(workflows.ActivityMakePendingSessionStartDue, mock.Anything, "cs_1").Return(pending, nil)
	return env, p
}

// A transfer to a session whose workflow's start is still pending waits
// for the workflow (the start hurried), and is then handed to it: no
// transaction's workflow is started in its place.
func TestATransferWaitsForItsSessionsPendingStart(t *testing.T) {
	env, _ := handOverEnv(t, 2, true)
	env.OnWorkflow(workflows.WorkflowTransaction, mock.Anything, mock.Anything).Return(nil).Run(func(mock.Arguments) {
		t.Error("a transaction's workflow was started for a session about to start")
	}).Maybe()
	env.ExecuteWorkflow(workflows.WorkflowRescan, workflows.RescanInput{Network: "devnet", From: 1, To: 1, Step: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	env.AssertNumberOfCalls(t, workflows.ActivityMakePendingSessionStartDue, 2)
}

// A transfer to a session whose workflow has ended (no start pending, and
// the signal fails again) goes to its transaction's workflow, which
// records it.
func TestATransferToAnEndedSessionGoesToItsTransaction(t *testing.T) {
	env, p := handOverEnv(t, 1000, false)
	started := false
	env.OnWorkflow(workflows.WorkflowTransaction, mock.Anything, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		started = reflect.DeepEqual(args.Get(1).(workflows.TransactionInput).Transfer, p)
	})
	env.ExecuteWorkflow(workflows.WorkflowRescan, workflows.RescanInput{Network: "devnet", From: 1, To: 1, Step: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if !started {
		t.Fatal("the transaction's workflow was not started")
	}
	env.AssertNumberOfCalls(t, workflows.ActivityMakePendingSessionStartDue, 1)
}

// In a chainwatch run started before ChangeSignalWithStart, a scan's
// transfers to sessions opened a moment before, whose workflows' starts
// are still pending, wait for them together: one hurry of all their
// starts, one wait, and one signal each once they run, instead of a wait
// for each session in turn.
func TestAScansTransfersWaitForPendingStartsTogetherInAnOldRun(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	workflows.Register(env)
	env.OnGetVersion(workflows.ChangeSignalWithStart, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	env.RegisterActivityWithOptions(func(context.Context, workflows.ScanInput) (workflows.ScanOutput, error) {
		return workflows.ScanOutput{}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityScanNetwork})
	env.RegisterActivityWithOptions(func(context.Context, string) (bool, error) { return false, nil },
		activity.RegisterOptions{Name: workflows.ActivityMakePendingSessionStartDue})
	env.RegisterActivityWithOptions(func(context.Context, []string) (bool, error) { return false, nil },
		activity.RegisterOptions{Name: workflows.ActivityMakePendingSessionStartsDue})
	var transfers []workflows.SessionTransfer
	var ids []string
	for _, id := range []string{"cs_1", "cs_2", "cs_3"} {
		p := workflows.SessionTransfer{SessionID: id, Network: "devnet", ChainID: 1337, TxHash: "0x" + id, AssetID: "usdc-devnet",
			AmountBaseUnits: "1", Source: "chainwatch"}
		transfers = append(transfers, p)
		ids = append(ids, id)
		// The first signal finds no workflow; the one after the wait does.
		env.OnSignalExternalWorkflow(mock.Anything, workflows.CheckoutSessionWorkflowID(id), "", workflows.SignalTransfer, p).
			Return(errors.New("workflow not found")).Once()
		env.OnSignalExternalWorkflow(mock.Anything, workflows.CheckoutSessionWorkflowID(id), "", workflows.SignalTransfer, p).Return(nil).Once()
	}
	stop := temporal.NewNonRetryableApplicationError("the test's scans end here", "stop", nil)
	env.OnActivity(workflows.ActivityScanNetwork, mock.Anything, mock.Anything).Return(workflows.ScanOutput{Transfers: transfers}, nil).Once()
	env.OnActivity(workflows.ActivityScanNetwork, mock.Anything, mock.Anything).Return(workflows.ScanOutput{}, stop)
	env.OnActivity(workflows.ActivityMakePendingSessionStartsDue, mock.Anything, ids).Return(true, nil).Once()
	env.OnWorkflow(workflows.WorkflowTransaction, mock.Anything, mock.Anything).Return(nil).Run(func(mock.Arguments) {
		t.Error("a transaction's workflow was started for a session about to start")
	}).Maybe()
	start := env.Now()
	var handedOver time.Time
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == workflows.ActivityScanNetwork && handedOver.IsZero() && env.Now().After(start) {
			handedOver = env.Now()
		}
	})
	env.ExecuteWorkflow(workflows.WorkflowChainwatch, workflows.ScanInput{Network: "devnet"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "the test's scans end here") {
		t.Fatalf("workflow ended with %v", err)
	}
	env.AssertExpectations(t)
	env.AssertNumberOfCalls(t, workflows.ActivityMakePendingSessionStartsDue, 1)
	env.AssertNumberOfCalls(t, workflows.ActivityMakePendingSessionStartDue, 0)
	if took := handedOver.Sub(start); took < time.Second || took >= 2*time.Second {
		t.Fatalf("the three transfers were handed over after %v, want one wait of a second", took)
	}
}

// A chainwatch run started since ChangeSignalWithStart hurries and waits
// for no start: the scan has handed each transfer to its session's
// workflow, starting a pending one with the signal-with-start, and what it
// leaves (a transfer to a session whose workflow has ended, one no
// session's) goes at once to its transaction's workflow, which records it.
func TestWhatTheScanCouldNotHandOverGoesToItsTransaction(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	workflows.Register(env)
	env.RegisterActivityWithOptions(func(context.Context, workflows.ScanInput) (workflows.ScanOutput, error) {
		return workflows.ScanOutput{}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityScanNetwork})
	left := []workflows.SessionTransfer{
		{SessionID: "cs_ended", Network: "devnet", ChainID: 1337, TxHash: "0xended", AssetID: "usdc-devnet", AmountBaseUnits: "1", Source: "chainwatch"},
		{Network: "devnet", ChainID: 1337, TxHash: "0xnobody", AssetID: "usdc-devnet", AmountBaseUnits: "2", Source: "chainwatch"},
	}
	stop := temporal.NewNonRetryableApplicationError("the test's scans end here", "stop", nil)
	var asked workflows.ScanInput
	env.OnActivity(workflows.ActivityScanNetwork, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.ScanInput) (workflows.ScanOutput, error) {
			asked = in
			return workflows.ScanOutput{Transfers: left}, nil
		}).Once()
	env.OnActivity(workflows.ActivityScanNetwork, mock.Anything, mock.Anything).Return(workflows.ScanOutput{}, stop)
	var recorded []workflows.SessionTransfer
	env.OnWorkflow(workflows.WorkflowTransaction, mock.Anything, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		in := args.Get(1).(workflows.TransactionInput)
		if in.Session.ID != in.Transfer.SessionID {
			t.Errorf("transaction's workflow for %s's transfer given session %q", in.Transfer.SessionID, in.Session.ID)
		}
		recorded = append(recorded, in.Transfer)
	})
	env.ExecuteWorkflow(workflows.WorkflowChainwatch, workflows.ScanInput{Network: "devnet"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "the test's scans end here") {
		t.Fatalf("workflow ended with %v", err)
	}
	if !asked.SignalSessions {
		t.Fatal("the scan was not asked to hand its transfers over itself")
	}
	if !reflect.DeepEqual(recorded, left) {
		t.Fatalf("transactions' workflows started for %+v, want %+v", recorded, left)
	}
	env.AssertNumberOfCalls(t, workflows.ActivityMakePendingSessionStartsDue, 0)
	env.AssertNumberOfCalls(t, workflows.ActivityMakePendingSessionStartDue, 0)
}
