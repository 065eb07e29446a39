package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// TransactionWorkflowID is the workflow ID of a transaction.
func TransactionWorkflowID(chainID int64, txHash string) string {
	return fmt.Sprintf("transaction/%d/%s", chainID, strings.ToLower(txHash))
}

// TransactionInput starts a transaction's workflow.
type TransactionInput struct {
	Transfer SessionTransfer
	Session  payment.Session
	// Resume carries where a run stood into the next (continue-as-new).
	Resume *TransactionState `json:",omitempty"`
}

// TransactionState is where a transaction's workflow stands.
type TransactionState struct {
	Status       payment.TransactionStatus
	BlockHash    string
	PendingSince time.Time
	Watchers     []string
	// PastFinality: the run was started by the finality watch (a
	// finalized transaction whose block may have left the chain), or
	// carries on from one: the sessions it pays may have ended.
	PastFinality bool `json:",omitempty"`
}

// looksPerRun bounds a transaction workflow run's history (each look at
// the chain adds a few events): a transaction followed for longer (a slow
// chain's finality) continues as new with its state.
const looksPerRun = 500

// TransactionChildOptions are the options a session's workflow starts a
// transaction's workflow with. One workflow runs per chain and hash at a
// time, whichever sessions it pays: a second report of a running one (the
// chainwatch and the payer, two sessions, or a rescan) finds it running, and
// a report after it ended (a claim that timed out, then mined) starts it
// again, from the records. The transaction outlives its session's workflow.
func TransactionChildOptions(s payment.Session, p SessionTransfer) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID:            p.Key(),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: transactionSearchAttributes(s, p),
		StaticSummary:         TransactionSummary(s, p),
	}
}

// TransactionStartOptions start a transaction's workflow from outside a
// session (an operator resuming it): a running one is left as it is, an
// ended one starts again from the transaction's records.
func TransactionStartOptions(s payment.Session, p SessionTransfer) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       p.Key(),
		TaskQueue:                TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    transactionSearchAttributes(s, p),
		StaticSummary:            TransactionSummary(s, p),
	}
}

// watchTransaction makes sure a transaction's workflow runs and will tell
// the session of its records and of its end: it starts the workflow as a
// child, or signals the running one. It returns the child's future when
// this call started it.
func watchTransaction(ctx workflow.Context, in TransactionInput) (workflow.ChildWorkflowFuture, error) {
	for {
		child := workflow.WithChildOptions(ctx, TransactionChildOptions(in.Session, in.Transfer))
		fut := workflow.ExecuteChildWorkflow(child, Transaction, in)
		var started workflow.Execution
		err := fut.GetChildWorkflowExecution().Get(ctx, &started)
		if err == nil {
			return fut, nil
		}
		if !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			return nil, err
		}
		err = workflow.SignalExternalWorkflow(ctx, in.Transfer.Key(), "", SignalWatch, in.Session.ID).Get(ctx, nil)
		if err == nil {
			return nil, nil
		}
		// It ended between the two: start it again.
	}
}

// Transaction follows one on-chain transaction to finalized or failed,
// whichever sessions it pays. It checks the receipt on durable timers
// sized from the block time and moves the transaction through the
// domain's transitions; at each look it brings the transaction's records
// in line (one per transfer to a session's deposit address, and the
// payers' claims; see payment.MatchTransfers) and tells each record's
// session when its record changes. It ends once the transaction is final,
// or mined with no record left to follow, and then tells the sessions that
// asked it to watch.
func Transaction(ctx workflow.Context, in TransactionInput) error {
	ctx = withLocalActivityOptions(ctx)
	p := in.Transfer
	watchers := []string{in.Session.ID}
	watch := workflow.GetSignalChannel(ctx, SignalWatch)
	addWatcher := func(id string) {
		if !slices.Contains(watchers, id) {
			watchers = append(watchers, id)
		}
	}
	w := newTxWatch(ctx, p)
	w.upsert = true
	pastFinality := false
	if r := in.Resume; r != nil {
		w.status, w.blockHash, w.pendingSince, watchers = r.Status, r.BlockHash, r.PendingSince, r.Watchers
		pastFinality = r.PastFinality
	}
	for looks := 1; ; looks++ {
		st, records, err := w.look(ctx)
		if err != nil {
			return err
		}
		workflow.SetCurrentDetails(ctx, transactionDetails(w.status, st, len(records)))
		for _, r := range records {
			u, isNews := w.news(r, st)
			if !isNews {
				continue
			}
			err := workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(r.CheckoutSessionID), "", SignalTxStatus, u).Get(ctx, nil)
			if err == nil || !pastFinality {
				continue // a session whose workflow has ended takes no news
			}
			// Past finality the session may long have ended: its books
			// follow its records (SettleSession).
			for _, id := range []string{r.CheckoutSessionID, r.AssignedSessionID} {
				if id != "" {
					if err := settleSession(ctx, id); err != nil {
						return err
					}
				}
			}
		}
		if w.status == payment.TxReversed && workflow.Now(ctx).Sub(w.pendingSince) < st.PendingTimeout {
			// Gone past finality: looked at for the network's pending
			// timeout, in case it is mined again.
			if err := workflow.Sleep(ctx, maxLookBlocks*st.BlockTime); err != nil {
				return err
			}
			continue
		}
		if w.ended(st, records) {
			// Done, unless a session asked to watch in the meantime (it
			// may have added a claim): then look once more.
			var id string
			if !watch.ReceiveAsync(&id) {
				break
			}
			addWatcher(id)
			continue
		}
		if looks >= looksPerRun {
			var id string
			for watch.ReceiveAsync(&id) {
				addWatcher(id)
			}
			in.Resume = &TransactionState{Status: w.status, BlockHash: w.blockHash, PendingSince: w.pendingSince, Watchers: watchers,
				PastFinality: pastFinality}
			return workflow.NewContinueAsNewError(ctx, Transaction, in)
		}
		timerCtx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimer(timerCtx, st.BlockTime), func(workflow.Future) {})
		sel.AddReceive(watch, func(c workflow.ReceiveChannel, _ bool) {
			var id string
			c.Receive(ctx, &id)
			addWatcher(id)
		})
		sel.Select(ctx)
		cancel()
	}
	for _, id := range watchers {
		_ = workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(id), "", SignalTxStatus,
			TxStatus{Key: p.Key(), Ended: true}).Get(ctx, nil)
	}
	return nil
}
