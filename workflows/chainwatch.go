package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// ChainwatchWorkflowID is the workflow ID of a network's scanner.
func ChainwatchWorkflowID(network string) string { return "chainwatch/" + network }

// ChainwatchStartOptions are the options a network's scanner starts with:
// one per network, so starting it again finds the running one.
func ChainwatchStartOptions(network string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       ChainwatchWorkflowID(network),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    networkSearchAttributes(network),
		StaticSummary:            ChainwatchSummary(network),
	}
}

// scansPerRun bounds a scanner run's history; then it continues as new
// with its cursor.
const scansPerRun = 300

// Chainwatch scans one network forever: each scan reads a block range (or
// waits at the head for one) and hands the payments it found to their
// sessions.
// Its cursor is durable: it is in the workflow's state and carried across
// continue-as-new.
func Chainwatch(ctx workflow.Context, in ScanInput) error {
	ctx = withActivityOptions(ctx)
	for range scansPerRun {
		out, err := scanNetwork(ctx, in)
		if err != nil {
			return err
		}
		if err := reportPayments(ctx, out.Payments); err != nil {
			return err
		}
		in.Cursor = out.Cursor
		workflow.SetCurrentDetails(ctx, chainwatchDetails(in.Network, out.Cursor, out.CaughtUp))
	}
	return workflow.NewContinueAsNewError(ctx, Chainwatch, in)
}

// reportPayments hands transfers found on the chain to their sessions. A
// session whose workflow has ended no longer takes payments: the
// transaction's workflow is then started here, and records the transfer
// (as unexpected, unless it was mined while the session took payments).
func reportPayments(ctx workflow.Context, payments []Payment) error {
	for _, p := range payments {
		err := workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(p.SessionID), "", SignalPayment, p).Get(ctx, nil)
		if err == nil {
			continue
		}
		s := payment.Session{ID: p.SessionID, ProjectID: p.ProjectID, IsLive: p.IsLive}
		if _, err := watchTransaction(ctx, TransactionInput{Payment: p, Session: s}); err != nil {
			return err
		}
	}
	return nil
}
