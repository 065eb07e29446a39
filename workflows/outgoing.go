package workflows

import (
	"context"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// OutgoingWorkflowID is the workflow ID of a refund's or a payout's
// transfer.
func OutgoingWorkflowID(id string) string { return "outgoing/" + id }

// OutgoingInput starts an outgoing transfer's workflow.
type OutgoingInput struct {
	// ID is the refund's or the payout's.
	ID string
	// Status is the item's when the run starts, as its start's search
	// attributes say.
	Status payment.RefundStatus `json:",omitempty"`
	// PastFinality: started by the finality watch for a finalized item
	// whose block may have left the chain; its first look checks.
	PastFinality bool `json:",omitempty"`
}

// OutgoingStartOptions start (or, signalled, find running) the workflow
// of a refund or payout once it is approved (status): one runs per item at
// a time, and a later report (a replacement) starts it again once ended.
func OutgoingStartOptions(id, projectID string, isLive bool, network string, status payment.RefundStatus) client.StartWorkflowOptions {
	kind := "Payout"
	if strings.HasPrefix(id, payment.PrefixRefund) {
		kind = "Refund"
	}
	return client.StartWorkflowOptions{
		ID:                       OutgoingWorkflowID(id),
		TaskQueue:                TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes: temporal.NewSearchAttributes(ProjectID.ValueSet(projectID), IsLive.ValueSet(isLive),
			Network.ValueSet(network), PaymentStatus.ValueSet(string(status))),
		StaticSummary: fmt.Sprintf("%s %s on %s · project %s", kind, id, network, projectID),
	}
}

// StartOutgoing starts the workflow of a refund or payout in status o,
// or wakes the one running (SignalOutgoingChanged): the API after a change
// it recorded, the worker's sweep for the pending follows.
func StartOutgoing(ctx context.Context, c client.Client, id, projectID string, isLive bool, o payment.Outgoing) error {
	_, err := c.SignalWithStartWorkflow(ctx, OutgoingWorkflowID(id), SignalOutgoingChanged, nil,
		OutgoingStartOptions(id, projectID, isLive, o.Network, o.Status), WorkflowOutgoing, OutgoingInput{ID: id, Status: o.Status})
	return err
}

// StartOutgoingRecheck starts the workflow of a finalized refund or
// payout whose block may have left the chain (the finality watch): its
// first look records it reversed if it did. A running one is left as it is.
func StartOutgoingRecheck(ctx context.Context, c client.Client, id, projectID string, isLive bool, network string) error {
	_, err := c.ExecuteWorkflow(ctx, OutgoingStartOptions(id, projectID, isLive, network, payment.RefundFinalized), WorkflowOutgoing,
		OutgoingInput{ID: id, Status: payment.RefundFinalized, PastFinality: true})
	return err
}

// looksPerOutgoingRun bounds an outgoing workflow run's history, as
// looksPerRun does a transaction's.
const looksPerOutgoingRun = 500

// Outgoing follows one refund or payout from its approval: it waits for
// its transaction (reported, or found by the scans), then follows it from
// sent to finalized, failed or an exception, or back to its signature when
// the transaction is rejected, as a transaction's workflow follows a payment:
// a look at the chain (the FollowOutgoing activity, which records what
// the domain makes of it), then a durable timer sized by the activity,
// or sooner when SignalOutgoingChanged says the item changed (a
// replacement was reported). Every item has its own: nothing one
// project's transfers do delays another's.
func Outgoing(ctx workflow.Context, in OutgoingInput) error {
	ctx = withLocalActivityOptions(ctx)
	changed := workflow.GetSignalChannel(ctx, SignalOutgoingChanged)
	status := in.Status // as the start's search attributes say
	if status == "" {
		status = payment.RefundSent
	}
	for looks := 1; ; looks++ {
		for changed.ReceiveAsync(nil) {
		}
		out, err := followOutgoing(ctx, FollowOutgoingInput{ID: in.ID, PastFinality: in.PastFinality && looks == 1})
		if err != nil {
			return err
		}
		workflow.SetCurrentDetails(ctx, outgoingDetails(out))
		if out.Status != status {
			status = out.Status
			_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(status)))
		}
		if out.Ended {
			if changed.ReceiveAsync(nil) {
				continue // reported again as it ended: look once more
			}
			return nil
		}
		if looks >= looksPerOutgoingRun {
			in.Status = status
			return workflow.NewContinueAsNewError(ctx, Outgoing, in)
		}
		timerCtx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimer(timerCtx, out.Wait), func(workflow.Future) {})
		sel.AddReceive(changed, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		sel.Select(ctx)
		cancel()
	}
}

// outgoingDetails says where an outgoing transfer stands.
func outgoingDetails(out FollowOutgoingOutput) string {
	s := fmt.Sprintf("**%s**", out.Status)
	if out.TxHash != "" {
		s += " · " + out.TxHash
	}
	if out.Detail != "" {
		s += "\n\n" + out.Detail
	}
	return s
}
