package chains

import (
	"context"
	"fmt"
	"slices"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/workflows"
)

// Kinds of reconciliation finding between the records and the workflows.
const (
	// FindingStartPending: a session recorded with its workflow's start
	// still pending (the sweep makes it; a repair makes it now).
	FindingStartPending = "start-pending"
	// FindingSessionWithoutWorkflow: a session that takes payments (open,
	// processing, or inside its late-payment window) whose workflow is
	// not running: Temporal's store restored behind the records, or a
	// workflow terminated.
	FindingSessionWithoutWorkflow = "session-without-workflow"
	// FindingTransactionWithoutWorkflow: a transaction not final whose
	// workflow is not running, and that its session's workflow does not
	// follow itself either (a payment to that session alone).
	FindingTransactionWithoutWorkflow = "transaction-without-workflow"
	// FindingWorkflowWithoutRecord: a session's workflow (running, or
	// completed within Temporal's retention) whose session is not in the
	// records: the database restored behind
	// Temporal's store.
	FindingWorkflowWithoutRecord = "workflow-without-record"
	// FindingTransactionWithoutRecord: a transaction's workflow (running,
	// or closed within Temporal's retention) whose transaction is not in
	// the records: the database restored behind Temporal's store.
	FindingTransactionWithoutRecord = "transaction-without-record"
	// FindingDepositIndexBehind: a deposit key's counter is at or below an
	// index already used, by a recorded session or by an address the
	// chain shows used (funds, or transactions sent): the records were
	// restored behind, and the next session would get an address already
	// paid to.
	FindingDepositIndexBehind = "deposit-index-behind"
	// FindingNetworkUnreachable: a configured network whose nodes cannot
	// be read: what the reconciliation reads on it (deposit addresses
	// used, refunds and payouts) is not checked.
	FindingNetworkUnreachable = "network-unreachable"
	// FindingFinalizedBlockGone: a finalized payment (incoming, a refund
	// or a payout) within its network's reorg window whose block is no
	// longer the chain's at its height: a reorg deeper than finality the
	// finality watch has not handled yet (the worker down). The repair
	// hands it to its workflow, which records it reversed.
	FindingFinalizedBlockGone = "finalized-block-gone"
	// FindingPaymentReversed: a payment a reorg past finality reversed
	// that no one has settled: a session still flagged payment_reversed
	// (its merchant resolves it, reversal_settled), a refund or payout
	// reversed (its merchant cancels it, or it is mined again).
	FindingPaymentReversed = "payment-reversed"
)

// depositLookahead is how many unused addresses past the last used one
// the chain check reads before it stops, as a wallet's gap limit.
const depositLookahead = 20

// Finding is one difference between the records and the workflows.
type Finding struct {
	Kind     string `json:"kind"`
	ObjectID string `json:"objectId"`
	Detail   string `json:"detail"`
	// Repaired says a repair was made; Error why one failed or was not
	// attempted.
	Repaired bool   `json:"repaired"`
	Error    string `json:"error,omitempty"`
}

// ReconcileOptions scope a reconciliation.
type ReconcileOptions struct {
	// ProjectID limits it to one project; empty is every project.
	ProjectID string
	// Repair makes the repairs that are safe (docs/operations.md, "Backups
	// and restores"); without it nothing changes.
	Repair bool
}

// Reconcile compares the records with the workflows after a restore (one
// store restored behind the other) and, with Repair, repairs what can be
// repaired from what is left: pending starts are made, transactions'
// workflows resumed from their records, a session without workflow that
// has seen no payment started again from its record, and a session the
// database lost recorded again from its workflow's input. Running it twice
// repairs nothing the second time.
func (svc Service) Reconcile(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	var out []Finding
	sessions, err := svc.Store.Checkout().SessionsNeedingWorkflow(ctx, o.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("load sessions: %w", err)
	}
	for _, s := range sessions {
		f, err := svc.reconcileSession(ctx, s, o.Repair)
		if err != nil {
			return out, err
		}
		if f != nil {
			out = append(out, *f)
		}
	}
	txs, err := svc.Store.Payments().UnfinishedTransactions(ctx, o.ProjectID)
	if err != nil {
		return out, fmt.Errorf("load transactions: %w", err)
	}
	resumed := map[string]bool{}
	for _, t := range txs {
		id := workflows.TransactionWorkflowID(t.ChainID, t.TxHash)
		if resumed[id] {
			continue
		}
		state, err := svc.workflowState(ctx, id)
		if err != nil {
			return out, err
		}
		if state == "running" {
			continue
		}
		if svc.followedInline(ctx, t.CheckoutSessionID, id) {
			continue
		}
		f := Finding{Kind: FindingTransactionWithoutWorkflow, ObjectID: t.ID,
			Detail: fmt.Sprintf("%s on chain %d is %s; its workflow %s is %s", t.TxHash, t.ChainID, t.Status, id, state)}
		if o.Repair {
			if _, err := svc.payments().ResumeTransaction(ctx, t.ChainID, t.TxHash); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired, resumed[id] = true, true
			}
		}
		out = append(out, f)
	}
	lost, err := svc.workflowsWithoutRecord(ctx, o)
	if out = append(out, lost...); err != nil {
		return out, err
	}
	// After the sessions recorded again: a transaction is recorded on its
	// session.
	lostTxs, err := svc.transactionsWithoutRecord(ctx, o)
	if out = append(out, lostTxs...); err != nil {
		return out, err
	}
	// The networks the checks below read: one whose nodes do not answer
	// is found, and not read further.
	down, unreachable := svc.networksDown(ctx)
	out = append(out, unreachable...)
	// After the sessions recorded again from their workflows: they hold
	// their indexes.
	behind, err := svc.depositCountersBehind(ctx, o, down)
	if out = append(out, behind...); err != nil {
		return out, err
	}
	// What one project's records hold of another's addresses.
	collisions, err := svc.tenantCollisions(ctx, o)
	if out = append(out, collisions...); err != nil {
		return out, err
	}
	// Money out: the refunds and the payouts against the chain and each
	// other, the refunds against their sessions' books.
	moneyOut, err := svc.reconcileMoneyOut(ctx, o, down)
	if out = append(out, moneyOut...); err != nil {
		return out, err
	}
	// Reorgs past finality: blocks gone, and what they reversed.
	gone, err := svc.finalizedBlocksGone(ctx, o, down)
	if out = append(out, gone...); err != nil {
		return out, err
	}
	reversed, err := svc.reversedUnsettled(ctx, o)
	return append(out, reversed...), err
}

// repaired is a repair's outcome as a finding says it.
func repaired(err error) (bool, string) {
	if err != nil {
		return false, err.Error()
	}
	return true, ""
}

// reconcileSession checks one session that must have a running workflow.
func (svc Service) reconcileSession(ctx context.Context, s payment.Session, repair bool) (*Finding, error) {
	pending, err := svc.Store.Checkout().PendingSessionStarts(ctx, []string{s.ID})
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		f := &Finding{Kind: FindingStartPending, ObjectID: s.ID, Detail: "recorded; its workflow's start is pending (a worker's sweep makes it)"}
		if repair {
			if err := svc.Starts.Ensure(ctx, s.ID); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired = true
			}
		}
		return f, nil
	}
	id := workflows.CheckoutSessionWorkflowID(s.ID)
	state, err := svc.workflowState(ctx, id)
	if err != nil || state == "running" {
		return nil, err
	}
	f := &Finding{Kind: FindingSessionWithoutWorkflow, ObjectID: s.ID,
		Detail: fmt.Sprintf("%s, paid %s USD; its workflow is %s", s.Status, payment.FormatUSD(s.AmountPaidUSD), state)}
	if !repair {
		return f, nil
	}
	txs, err := svc.Store.Payments().SessionTransactions(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	// A workflow starts from the session as it was opened: only a session
	// that has seen nothing since is the same again.
	if s.Status != payment.SessionOpen || len(txs) > 0 || s.Resolution != "" {
		f.Error = "not repaired: the session has payments or changes its new workflow would not know; " +
			"keep it under watch and settle it through the API (docs/operations.md)"
		return f, nil
	}
	plan, err := svc.Store.Checkout().PlanByID(ctx, s.PaymentPlanID)
	if err != nil {
		return nil, err
	}
	project, err := svc.Store.Checkout().GetProject(ctx, s.ProjectID)
	if err != nil {
		return nil, err
	}
	in := workflows.CheckoutSessionInput{Session: s, Settings: workflows.SessionSettings{CompleteOn: project.CompleteOn,
		TolerancePercent: project.UnderpaymentTolerancePercent}}
	if _, err := svc.Temporal.ExecuteWorkflow(ctx, workflows.CheckoutSessionStartOptions(s, plan.Title), workflows.CheckoutSession, in); err != nil {
		f.Error = err.Error()
	} else {
		f.Repaired = true
	}
	return f, nil
}

// followedInline tells whether a session's running workflow follows a
// transaction itself (docs/decisions.md "One workflow per payment"), as
// its state query says.
func (svc Service) followedInline(ctx context.Context, sessionID, txWorkflowID string) bool {
	if sessionID == "" {
		return false
	}
	v, err := svc.Temporal.QueryWorkflow(ctx, workflows.CheckoutSessionWorkflowID(sessionID), "", workflows.QuerySessionState)
	var state workflows.SessionState
	if err != nil || v.Get(&state) != nil {
		return false // no workflow, or one that cannot answer: not followed
	}
	return slices.Contains(state.FollowedInline, txWorkflowID)
}
