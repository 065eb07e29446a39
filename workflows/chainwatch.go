package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// ChainwatchWorkflowID is the workflow ID of a network's scanner.
func ChainwatchWorkflowID(network string) string { return "chainwatch/" + network }

// ScanCursor is a scanner's position: the last scanned block.
type ScanCursor struct {
	Number uint64
	Hash   string
}

// ScanInput asks to scan the next blocks of a network after Cursor.
type ScanInput struct {
	Network string
	Cursor  ScanCursor
}

// ScanOutput is one scan's result.
type ScanOutput struct {
	Cursor   ScanCursor
	Payments []Payment
	// CaughtUp is true when the scan reached the chain's head.
	CaughtUp bool
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
		var out ScanOutput
		if err := workflow.ExecuteActivity(ctx, ActivityScanNetwork, in).Get(ctx, &out); err != nil {
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
