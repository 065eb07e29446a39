package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
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
		for _, p := range out.Payments {
			// A session whose workflow has ended no longer takes payments:
			// the scanner only watches sessions inside their windows, so
			// this is a race at the window's end and the error is dropped.
			_ = workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(p.SessionID), "", SignalPayment, p).Get(ctx, nil)
		}
		in.Cursor = out.Cursor
	}
	return workflow.NewContinueAsNewError(ctx, Chainwatch, in)
}
