package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// ChainwatchWorkflowID is the workflow ID of a network's chainwatch.
func ChainwatchWorkflowID(network string) string { return "chainwatch/" + network }

// ChainwatchStartOptions are the options a network's chainwatch starts with:
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

// scansPerRun bounds a chainwatch run's history; then it continues as new
// with its cursor.
const scansPerRun = 300

// Chainwatch scans one network forever: each scan reads a block range (or
// waits at the head for one) and hands the payments it found to their
// sessions.
// Its cursor is durable: it is in the workflow's state and carried across
// continue-as-new.
func Chainwatch(ctx workflow.Context, in ScanInput) error {
	ctx = withActivityOptions(ctx)
	v := workflow.GetVersion(ctx, ChangeOneWorkflowPerPayment, workflow.DefaultVersion, 1)
	in.SignalSessions = workflow.GetVersion(ctx, ChangeSignalsFromScan, workflow.DefaultVersion, 1) >= 1
	delivered := in.SignalSessions && workflow.GetVersion(ctx, ChangeSignalWithStart, workflow.DefaultVersion, 1) >= 1
	for range scansPerRun {
		out, err := scanNetwork(ctx, in)
		if err != nil {
			return err
		}
		report := reportTransfers
		switch {
		case delivered:
			report = reportUndelivered
		case v >= 1:
			report = reportTransfersAtOnce
		}
		if err := report(ctx, out.Transfers); err != nil {
			return err
		}
		if v >= 1 {
			tellProgress(ctx, in.Network, out)
		}
		in.Cursor, in.SessionsToldUntil = out.Cursor, out.DueUntil
		workflow.SetCurrentDetails(ctx, chainwatchDetails(in.Network, out.Cursor, out.CaughtUp))
	}
	return workflow.NewContinueAsNewError(ctx, Chainwatch, in)
}

// tellProgress tells the sessions a scan passed the expiry or late-payment
// window of that it has handed over every transfer mined before its
// cursor's block. A session whose workflow has ended or not started yet
// does not hear it (it reads the progress for itself if it waits).
func tellProgress(ctx workflow.Context, network string, out ScanOutput) {
	word := ScanProgress{Network: network, BlockTime: out.Cursor.Time}
	sent := make([]workflow.Future, len(out.Due))
	for i, id := range out.Due {
		sent[i] = workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(id), "", SignalScanned, word)
	}
	for _, f := range sent {
		_ = f.Get(ctx, nil)
	}
}

// reportUndelivered takes the transfers a scan could not hand to a
// session's workflow (ChangeSignalWithStart): no session's, or a session's
// whose workflow has ended. Each goes to its transaction's workflow, which
// records it (as unexpected, unless it was mined while the session took
// payments). A session whose start was pending was started by the scan's
// signal-with-start, so none is waited for.
func reportUndelivered(ctx workflow.Context, transfers []SessionTransfer) error {
	for _, p := range transfers {
		s := payment.Session{ID: p.SessionID, ProjectID: p.ProjectID, IsLive: p.IsLive}
		if _, err := watchTransaction(ctx, TransactionInput{Transfer: p, Session: s}); err != nil {
			return err
		}
	}
	return nil
}

// reportTransfers hands transfers found on the chain to their sessions, in
// order.
func reportTransfers(ctx workflow.Context, transfers []SessionTransfer) error {
	for _, p := range transfers {
		if err := handOver(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// reportTransfersAtOnce hands transfers found on the chain to their
// sessions: it signals every session's workflow at once (one workflow
// task for a whole scan, not one per transfer). Sessions recorded a moment
// ago may have their workflows' starts still pending (a burst of sessions
// paid as soon as they opened): it hurries those starts together and
// signals their sessions again together once started, instead of waiting
// for each in turn. What is left (no session's, or a session whose
// workflow has ended) it takes one by one as reportTransfers does.
func reportTransfersAtOnce(ctx workflow.Context, transfers []SessionTransfer) error {
	left := signalAtOnce(ctx, transfers)
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		pending, err := makePendingSessionStartsDue(ctx, left)
		if err != nil {
			return err
		}
		if !pending {
			break
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
		left = signalAtOnce(ctx, left)
	}
	for _, p := range left {
		if err := handOver(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// signalAtOnce signals each transfer's session's workflow, all at once,
// and returns the transfers it could not hand over: no session's, or a
// session without a running workflow.
func signalAtOnce(ctx workflow.Context, transfers []SessionTransfer) []SessionTransfer {
	sent := make([]workflow.Future, len(transfers))
	for i, p := range transfers {
		if p.SessionID != "" {
			sent[i] = workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(p.SessionID), "", SignalTransfer, p)
		}
	}
	var left []SessionTransfer
	for i, p := range transfers {
		if sent[i] == nil || sent[i].Get(ctx, nil) != nil {
			left = append(left, p)
		}
	}
	return left
}

// handOver hands one transfer to its session's workflow. A session
// recorded a moment ago may have its workflow's start still pending
// (package sessionstart owns the start): the transfer then waits for the
// workflow, having asked for the start to be made now, so that it never
// finds its session missing. A session whose workflow has ended no longer
// takes payments, and a transfer to a shared recipient may be no
// session's: the transaction's workflow is then started here, and records
// the transfer (as unexpected, unless it was mined while the session took
// payments).
func handOver(ctx workflow.Context, p SessionTransfer) error {
	for wait := time.Second; p.SessionID != ""; wait = min(2*wait, time.Minute) {
		if signalTransfer(ctx, p) == nil {
			return nil
		}
		pending, err := makePendingSessionStartDue(ctx, p.SessionID)
		if err != nil {
			return err
		}
		if !pending {
			// Started since the signal failed, or ended: one more
			// signal tells which.
			if signalTransfer(ctx, p) == nil {
				return nil
			}
			break
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	s := payment.Session{ID: p.SessionID, ProjectID: p.ProjectID, IsLive: p.IsLive}
	_, err := watchTransaction(ctx, TransactionInput{Transfer: p, Session: s})
	return err
}

// signalTransfer tells a session's running workflow of a transfer; it fails
// when there is none.
func signalTransfer(ctx workflow.Context, p SessionTransfer) error {
	return workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(p.SessionID), "", SignalTransfer, p).Get(ctx, nil)
}
