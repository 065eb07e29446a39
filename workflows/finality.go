package workflows

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// FinalityWatchWorkflowID is the workflow ID of a network's finality watch.
func FinalityWatchWorkflowID(network string) string { return "finality-watch/" + network }

// FinalityWatchStartOptions are the options a network's finality watch
// starts with: one per network, so starting it again finds the running one.
func FinalityWatchStartOptions(network string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       FinalityWatchWorkflowID(network),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    networkSearchAttributes(network),
		StaticSummary:            fmt.Sprintf("Finality watch of %s: finalized payments' blocks checked against the chain", network),
	}
}

// FinalityWatchInput names the network a finality watch checks.
type FinalityWatchInput struct {
	Network string
}

// checksPerRun bounds a finality watch run's history; then it continues
// as new.
const checksPerRun = 200

// FinalityWatch checks, forever, that the blocks holding a network's
// finalized payments (incoming and outgoing) within its reorg window are
// still the chain's, by their hashes: one read per block, not per
// payment. A payment whose block is gone is handed to its workflow (a
// transaction's, a refund's or a payout's), which records it reversed,
// with its event, and follows it in case it is mined again
// (CheckFinality). A reorg deeper than finality is never silent.
func FinalityWatch(ctx workflow.Context, in FinalityWatchInput) error {
	ctx = withActivityOptions(ctx)
	for range checksPerRun {
		out, err := checkFinality(ctx, CheckFinalityInput(in))
		if err != nil {
			return err
		}
		workflow.SetCurrentDetails(ctx, finalityDetails(out))
		if err := workflow.Sleep(ctx, out.Wait); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, FinalityWatch, in)
}

// finalityDetails says what the last check saw, for the Temporal UI.
func finalityDetails(out CheckFinalityOutput) string {
	s := fmt.Sprintf("**checked** %d blocks of finalized payments, from block %d to the head at %d", out.Blocks, out.From, out.Head)
	if out.Gone > 0 {
		s += fmt.Sprintf("\n\n**%d blocks gone**: %d payments handed to their workflows", out.Gone, out.Reversed)
	}
	return s
}

// CheckFinalityInput names the network to check.
type CheckFinalityInput struct {
	Network string
}

// CheckFinalityOutput is what a check saw, and when to check again.
type CheckFinalityOutput struct {
	Head, From uint64
	// Blocks were checked; Gone were no longer the chain's; Reversed
	// payments in them were handed to their workflows.
	Blocks, Gone, Reversed int
	Wait                   time.Duration
}

// checkFinality runs CheckFinality as an activity.
func checkFinality(ctx workflow.Context, in CheckFinalityInput) (CheckFinalityOutput, error) {
	var out CheckFinalityOutput
	err := workflow.ExecuteActivity(ctx, ActivityCheckFinality, in).Get(ctx, &out)
	return out, err
}

// settleSession runs SettleSession as a local activity.
func settleSession(ctx workflow.Context, sessionID string) error {
	return workflow.ExecuteLocalActivity(ctx, ActivitySettleSession, SettleSessionInput{SessionID: sessionID, At: workflow.Now(ctx)}).Get(ctx, nil)
}

// SettleSessionInput names a session whose books follow its records.
type SettleSessionInput struct {
	SessionID string
	At        time.Time
}

// StartPastFinality hands a finalized payment whose block may have left
// the chain to its transaction's workflow, started from the record (the
// finality watch, an operator's reconciliation): its first look records
// it reversed if the block is gone, and it then follows the transaction
// in case it is mined again. A running one is left as it is.
func StartPastFinality(ctx context.Context, c client.Client, t payment.Transaction, now time.Time) error {
	s := payment.Session{ID: t.CheckoutSessionID, ProjectID: t.ProjectID, IsLive: t.IsLive}
	p := SessionTransfer{SessionID: t.CheckoutSessionID, Network: t.Network, ChainID: t.ChainID, TxHash: t.TxHash,
		LogIndex: t.LogIndex, ProjectID: t.ProjectID, IsLive: t.IsLive, Source: "finality-watch"}
	in := TransactionInput{Transfer: p, Session: s, Resume: &TransactionState{Status: payment.TxFinalized,
		BlockHash: t.BlockHash, PendingSince: now, PastFinality: true}}
	_, err := c.ExecuteWorkflow(ctx, TransactionStartOptions(s, p), Transaction, in)
	return err
}
