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
	status := payment.TxPending
	var blockHash string
	// pendingSince is when the transaction last entered pending: its
	// start, or the reorg that took its block away.
	pendingSince := workflow.Now(ctx)
	if r := in.Resume; r != nil {
		status, blockHash, pendingSince, watchers = r.Status, r.BlockHash, r.PendingSince, r.Watchers
	}
	told := map[string]TxStatus{}
	for looks := 1; ; looks++ {
		st, err := checkTransaction(ctx, CheckInput{Network: p.Network, TxHash: p.TxHash})
		if err != nil {
			return err
		}
		next, reason := status, ""
		switch status {
		case payment.TxPending:
			switch {
			case st.Mined && !st.Succeeded:
				next, reason = payment.TxFailed, "reverted"
			case st.Mined:
				next, blockHash = payment.TxConfirmed, st.BlockHash
			case workflow.Now(ctx).Sub(pendingSince) >= st.PendingTimeout:
				next, reason = payment.TxFailed, "not mined within "+st.PendingTimeout.String()
			}
		case payment.TxConfirmed:
			switch {
			case !st.Mined || st.BlockHash != blockHash:
				next, reason = payment.TxPending, "its block left the canonical chain"
				pendingSince = workflow.Now(ctx)
			case st.Final || st.Confirmations >= st.RequiredConfirmations:
				next = payment.TxFinalized
			}
		}
		justMined := next == payment.TxConfirmed && status != payment.TxConfirmed
		if next != status {
			status = next
			_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(status)))
		}
		obs := payment.Observation{Network: p.Network, ChainID: p.ChainID, TxHash: p.TxHash, Status: status,
			Reason: reason, Mined: st.Mined, Succeeded: st.Succeeded, BlockHash: st.BlockHash,
			Confirmations: st.Confirmations, RequiredConfirmations: st.RequiredConfirmations, At: workflow.Now(ctx)}
		if st.Mined {
			n := int64(st.BlockNumber)
			obs.BlockNumber = &n
			obs.Transfers, obs.InternalUnknown = st.Transfers, st.InternalUnknown
			obs.BlockTime = time.Unix(int64(st.MinedAt), 0).UTC()
		}
		synced, err := syncTransaction(ctx, SyncInput{Observation: obs, ReportIgnored: justMined})
		if err != nil {
			return err
		}
		workflow.SetCurrentDetails(ctx, transactionDetails(status, st, len(synced.Transactions)))
		following := false
		for _, r := range synced.Transactions {
			following = following || !r.Status.Terminal()
			u := TxStatus{Key: p.Key(), RowID: r.ID, Status: r.Status, AssetID: r.AssetDefinitionID,
				AmountBaseUnits: r.AmountBaseUnits, Unexpected: r.Unexpected}
			if st.Mined {
				u.MinedAt = st.MinedAt
			}
			if !r.IsClaim() {
				u.TransferKey = transferKey(r.ChainID, r.TxHash, r.LogIndex)
			}
			if told[r.ID] == u {
				continue
			}
			told[r.ID] = u
			// A session whose workflow has ended takes no news.
			_ = workflow.SignalExternalWorkflow(ctx, CheckoutSessionWorkflowID(r.CheckoutSessionID), "", SignalTxStatus, u).Get(ctx, nil)
		}
		if !following && (status.Terminal() || st.Mined) {
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
			in.Resume = &TransactionState{Status: status, BlockHash: blockHash, PendingSince: pendingSince, Watchers: watchers}
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
