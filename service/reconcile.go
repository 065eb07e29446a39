package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
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
func (svc Chains) Reconcile(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	var out []Finding
	sessions, err := svc.store.Checkout().SessionsNeedingWorkflow(ctx, o.ProjectID)
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
	txs, err := svc.store.Payments().UnfinishedTransactions(ctx, o.ProjectID)
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
			if _, err := svc.Payments().ResumeTransaction(ctx, t.ChainID, t.TxHash); err != nil {
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

// finalizedBlocksGone checks the blocks of the finalized payments within
// each network's reorg window against the chain, as the finality watch
// does, and with Repair hands the payments of a block gone to their
// workflows.
func (svc Chains) finalizedBlocksGone(ctx context.Context, o ReconcileOptions, down map[string]error) ([]Finding, error) {
	var out []Finding
	for _, network := range slices.Sorted(maps.Keys(svc.chains)) {
		if down[network] != nil {
			continue
		}
		ch := svc.chains[network]
		n, f := ch.Network, ch.Family()
		head, err := f.Head(ctx)
		if err != nil {
			return out, fmt.Errorf("%s: head: %w", network, err)
		}
		from := n.ReorgWindowFrom(head)
		blocks, err := svc.store.Chains().FinalizedBlocks(ctx, network, int64(from), o.ProjectID)
		if err != nil {
			return out, err
		}
		heights := make([]uint64, 0, len(blocks))
		for _, b := range blocks {
			heights = append(heights, uint64(b.Number))
		}
		canonical, err := f.BlockHashes(ctx, slices.Compact(heights))
		if err != nil {
			return out, fmt.Errorf("%s: block hashes: %w", network, err)
		}
		for _, b := range blocks {
			if payment.SameBlock(canonical[uint64(b.Number)], b.Hash) {
				continue
			}
			txs, items, err := svc.store.Chains().FinalizedInBlock(ctx, network, b, o.ProjectID)
			if err != nil {
				return out, err
			}
			detail := fmt.Sprintf("finalized in block %d (%s) of %s, no longer the chain's (%s there now)", b.Number, b.Hash, network,
				canonical[uint64(b.Number)])
			for _, t := range txs {
				fd := Finding{Kind: FindingFinalizedBlockGone, ObjectID: t.ID, Detail: t.TxHash + " " + detail}
				if o.Repair {
					fd.Repaired, fd.Error = repaired(workflows.StartPastFinality(ctx, svc.temporal, t, svc.now()))
				}
				out = append(out, fd)
			}
			for _, it := range items {
				fd := Finding{Kind: FindingFinalizedBlockGone, ObjectID: it.ID, Detail: detail}
				if o.Repair {
					fd.Repaired, fd.Error = repaired(workflows.StartOutgoingRecheck(ctx, svc.temporal, it.ID, it.ProjectID, it.IsLive, network))
				}
				out = append(out, fd)
			}
		}
	}
	return out, nil
}

// repaired is a repair's outcome as a finding says it.
func repaired(err error) (bool, string) {
	if err != nil {
		return false, err.Error()
	}
	return true, ""
}

// reversedUnsettled finds what a reorg past finality reversed and no one
// has settled: nothing to repair, the merchant decides.
func (svc Chains) reversedUnsettled(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	txs, items, err := svc.store.Chains().ReversedUnsettled(ctx, o.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("load reversed payments: %w", err)
	}
	var out []Finding
	for _, t := range txs {
		out = append(out, Finding{Kind: FindingPaymentReversed, ObjectID: t.ID,
			Detail: fmt.Sprintf("%s on %s was finalized, then reversed past finality; its session %s is flagged payment_reversed",
				t.TxHash, t.Network, t.CheckoutSessionID),
			Error: "the merchant settles it with the customer, then resolves the session (reversal_settled)"})
	}
	for _, it := range items {
		out = append(out, Finding{Kind: FindingPaymentReversed, ObjectID: it.ID,
			Detail: "finalized, then reversed past finality: the recipient was not paid",
			Error:  "the merchant cancels it and sends again, unless its transaction is mined again"})
	}
	return out, nil
}

// depositCountersBehind finds deposit keys whose counter is at or below an
// index already used, by a recorded session or on chain (the networks
// down left out), and with Repair moves the counter past it.
func (svc Chains) depositCountersBehind(ctx context.Context, o ReconcileOptions, down map[string]error) ([]Finding, error) {
	counters, err := svc.store.Chains().DepositCounters(ctx, o.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("load deposit counters: %w", err)
	}
	var out []Finding
	for _, c := range counters {
		var why []string
		used := c.MaxUsed
		if used >= c.NextIndex {
			why = append(why, fmt.Sprintf("a recorded session holds index %d", used))
		}
		onChain, err := svc.usedOnChain(ctx, c, max(c.NextIndex, used+1), down)
		if err != nil {
			return out, err
		}
		if onChain > used {
			why = append(why, fmt.Sprintf("the address at index %d is used on chain", onChain))
			used = onChain
		}
		if used < c.NextIndex {
			continue
		}
		env := "sandbox"
		if c.IsLive {
			env = "live"
		}
		f := Finding{Kind: FindingDepositIndexBehind, ObjectID: c.ProjectID,
			Detail: fmt.Sprintf("the %s deposit key's next index is %d, but %s", env, c.NextIndex, strings.Join(why, " and "))}
		if o.Repair {
			if err := svc.store.Chains().AdvanceDepositIndex(ctx, c.ProjectID, c.IsLive, used+1); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired = true
				f.Detail += fmt.Sprintf("; moved to %d", used+1)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// networkAnswerWait bounds how long the reconciliation waits for a
// network's nodes before it finds the network unreachable.
const networkAnswerWait = 15 * time.Second

// networksDown asks every configured network the chain checks read (a
// deposit key's addresses, refunds and payouts: chainwatch.Capabilities
// DepositKey, MoneyOut) for its head: those whose nodes cannot be read
// are found (network-unreachable) and returned with why, for the chain
// checks to leave them out.
func (svc Chains) networksDown(ctx context.Context) (map[string]error, []Finding) {
	down := map[string]error{}
	var out []Finding
	for _, network := range slices.Sorted(maps.Keys(svc.chains)) {
		ch := svc.chains[network]
		if caps := ch.Family().Capabilities(); !caps.DepositKey && !caps.MoneyOut {
			continue // no chain check reads it
		}
		wait, cancel := context.WithTimeout(ctx, networkAnswerWait)
		_, err := ch.Family().Head(wait)
		cancel()
		if err == nil {
			continue
		}
		down[network] = err
		out = append(out, Finding{Kind: FindingNetworkUnreachable, ObjectID: network,
			Detail: fmt.Sprintf("configured, but its nodes cannot be read (%v): its deposit addresses, refunds and payouts are not checked", err),
			Error:  "not checked"})
	}
	return down, out
}

// usedOnChain reads the addresses of c's key from index from on, on every
// network of c's environment but those down, until depositLookahead in a
// row are unused, and returns the highest index used (-1: none). An
// address is used when it has sent a transaction or holds any of the
// network's assets.
func (svc Chains) usedOnChain(ctx context.Context, c store.DepositCounter, from int64, down map[string]error) (int64, error) {
	key, err := keys.ParseKey(c.Xpub)
	if err != nil {
		return -1, err
	}
	highest := int64(-1)
	for i, gap := from, 0; gap < depositLookahead && i < 1<<31; i, gap = i+1, gap+1 {
		addr, err := key.DeriveAddress(uint32(i))
		if err != nil {
			return -1, err
		}
		for _, network := range slices.Sorted(maps.Keys(svc.chains)) {
			ch := svc.chains[network]
			if ch.Network.IsLive != c.IsLive || !ch.Family().Capabilities().DepositKey || down[network] != nil {
				continue
			}
			used, err := addressUsed(ctx, ch, addr)
			if err != nil {
				return -1, fmt.Errorf("read %s on %s: %w", addr, network, err)
			}
			if used {
				highest, gap = i, -1
				break
			}
		}
	}
	return highest, nil
}

// addressUsed says whether addr has sent a transaction on ch or holds any
// of its assets.
func addressUsed(ctx context.Context, ch *chainwatch.Chain, addr common.Address) (bool, error) {
	var nonce, balance hexutil.Big
	if err := ch.Client.Call(ctx, &nonce, "eth_getTransactionCount", addr, "latest"); err != nil {
		return false, err
	}
	if err := ch.Client.Call(ctx, &balance, "eth_getBalance", addr, "latest"); err != nil {
		return false, err
	}
	if nonce.ToInt().Sign() > 0 || balance.ToInt().Sign() > 0 {
		return true, nil
	}
	for _, a := range ch.Assets {
		if a.Native() {
			continue
		}
		token := common.HexToAddress(a.TokenAddress)
		// balanceOf(addr)
		data := append(common.FromHex("0x70a08231"), common.LeftPadBytes(addr[:], 32)...)
		out, err := ch.Client.CallContract(ctx, ethereum.CallMsg{To: &token, Data: data}, nil)
		if err != nil {
			return false, err
		}
		if new(big.Int).SetBytes(out).Sign() > 0 {
			return true, nil
		}
	}
	return false, nil
}

// reconcileSession checks one session that must have a running workflow.
func (svc Chains) reconcileSession(ctx context.Context, s payment.Session, repair bool) (*Finding, error) {
	pending, err := svc.store.Checkout().PendingSessionStarts(ctx, []string{s.ID})
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		f := &Finding{Kind: FindingStartPending, ObjectID: s.ID, Detail: "recorded; its workflow's start is pending (a worker's sweep makes it)"}
		if repair {
			if err := svc.starts.Ensure(ctx, s.ID); err != nil {
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
	txs, err := svc.store.Payments().SessionTransactions(ctx, s.ID)
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
	plan, err := svc.store.Checkout().PlanByID(ctx, s.PaymentPlanID)
	if err != nil {
		return nil, err
	}
	project, err := svc.store.Checkout().GetProject(ctx, s.ProjectID)
	if err != nil {
		return nil, err
	}
	in := workflows.CheckoutSessionInput{Session: s, Settings: workflows.SessionSettings{CompleteOn: project.CompleteOn,
		TolerancePercent: project.UnderpaymentTolerancePercent}}
	if _, err := svc.temporal.ExecuteWorkflow(ctx, workflows.CheckoutSessionStartOptions(s, plan.Title), workflows.CheckoutSession, in); err != nil {
		f.Error = err.Error()
	} else {
		f.Repaired = true
	}
	return f, nil
}

// followedInline tells whether a session's running workflow follows a
// transaction itself (docs/decisions.md "One workflow per payment"), as
// its state query says.
func (svc Chains) followedInline(ctx context.Context, sessionID, txWorkflowID string) bool {
	if sessionID == "" {
		return false
	}
	v, err := svc.temporal.QueryWorkflow(ctx, workflows.CheckoutSessionWorkflowID(sessionID), "", workflows.QuerySessionState)
	var state workflows.SessionState
	if err != nil || v.Get(&state) != nil {
		return false // no workflow, or one that cannot answer: not followed
	}
	return slices.Contains(state.FollowedInline, txWorkflowID)
}

// workflowState is "running", "missing", or the status of the latest run
// of a workflow ID.
func (svc Chains) workflowState(ctx context.Context, workflowID string) (string, error) {
	d, err := svc.temporal.DescribeWorkflowExecution(ctx, workflowID, "")
	var missing *serviceerror.NotFound
	switch {
	case errors.As(err, &missing):
		return "missing", nil
	case err != nil:
		return "", fmt.Errorf("describe %s: %w", workflowID, err)
	}
	st := d.GetWorkflowExecutionInfo().GetStatus()
	if st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "running", nil
	}
	return statusName(st), nil
}

// eachWorkflow calls fn with every workflow execution the visibility
// query finds, scoped to o's project, page after page.
func (svc Chains) eachWorkflow(ctx context.Context, query string, o ReconcileOptions, fn func(*workflowpb.WorkflowExecutionInfo) error) error {
	if o.ProjectID != "" {
		query += fmt.Sprintf(" AND %s = '%s'", workflows.ProjectID.GetName(), strings.ReplaceAll(o.ProjectID, "'", ""))
	}
	var token []byte
	for {
		page, err := svc.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return fmt.Errorf("list workflows (%s): %w", query, err)
		}
		for _, e := range page.GetExecutions() {
			if err := fn(e); err != nil {
				return err
			}
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			return nil
		}
	}
}

// statusName is a workflow status as the findings say it: running,
// completed, terminated…
func statusName(st enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// workflowsWithoutRecord finds session workflows, running or completed,
// whose session the records lack, and records each again from its
// workflow's input and state.
func (svc Chains) workflowsWithoutRecord(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	// A completed workflow within Temporal's retention knows its session's
	// end as well as a running one knows its state.
	query := fmt.Sprintf("WorkflowType = '%s' AND (ExecutionStatus = 'Running' OR ExecutionStatus = 'Completed')", workflows.WorkflowCheckoutSession)
	var out []Finding
	err := svc.eachWorkflow(ctx, query, o, func(e *workflowpb.WorkflowExecutionInfo) error {
		wfID := e.GetExecution().GetWorkflowId()
		sessionID := strings.TrimPrefix(wfID, workflows.CheckoutSessionWorkflowID(""))
		if _, err := svc.store.Checkout().SessionByID(ctx, sessionID); !errors.Is(err, payment.ErrNotFound) {
			return err
		}
		f := Finding{Kind: FindingWorkflowWithoutRecord, ObjectID: sessionID,
			Detail: "its workflow " + wfID + " is " + statusName(e.GetStatus()) + "; the records lack the session"}
		if o.Repair {
			if note, err := svc.recordFromWorkflow(ctx, wfID, e.GetExecution().GetRunId()); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired = true
				f.Detail += note
			}
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// transactionsWithoutRecord finds transaction workflows whose transaction
// the records lack and, with Repair, runs each again from its input: it
// reads the chain, records the transaction as it stands and tells its
// session, which counts a transfer once however often it is told.
func (svc Chains) transactionsWithoutRecord(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	var out []Finding
	seen := map[string]bool{}
	err := svc.eachWorkflow(ctx, fmt.Sprintf("WorkflowType = '%s'", workflows.WorkflowTransaction), o, func(e *workflowpb.WorkflowExecutionInfo) error {
		ex := e.GetExecution()
		if seen[ex.GetWorkflowId()] {
			return nil // an earlier run of the same transaction
		}
		seen[ex.GetWorkflowId()] = true
		// The workflow ID names the transaction: most are recorded, and
		// their histories need not be read.
		if chainID, hash, ok := parseTransactionWorkflowID(ex.GetWorkflowId()); ok {
			if records, err := svc.store.Payments().TransactionRecords(ctx, chainID, hash); err != nil || len(records) > 0 {
				return err
			}
		}
		var in workflows.TransactionInput
		err := svc.workflowInput(ctx, ex.GetWorkflowId(), ex.GetRunId(), &in)
		var deleted *serviceerror.NotFound
		if errors.As(err, &deleted) {
			return nil // deleted since it was listed
		} else if err != nil {
			return err
		}
		if records, err := svc.store.Payments().TransactionRecords(ctx, in.Transfer.ChainID, in.Transfer.TxHash); err != nil || len(records) > 0 {
			return err
		}
		f := Finding{Kind: FindingTransactionWithoutRecord, ObjectID: in.Transfer.TxHash,
			Detail: fmt.Sprintf("its workflow %s is %s; the records lack the transaction of session %s", ex.GetWorkflowId(), statusName(e.GetStatus()), in.Session.ID)}
		switch {
		case !o.Repair:
		case e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			f.Error = "not repaired: its workflow runs and records the transaction at its next step"
		default:
			// A transfer to a shared recipient that matched no session
			// has no session to look for.
			if _, err := svc.store.Checkout().SessionByID(ctx, in.Session.ID); err != nil && in.Session.ID != "" {
				f.Error = "not repaired: its session " + in.Session.ID + " is not in the records either: " + err.Error()
			} else if _, err := svc.temporal.ExecuteWorkflow(ctx, workflows.TransactionStartOptions(in.Session, in.Transfer),
				workflows.WorkflowTransaction, in); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired = true
			}
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// parseTransactionWorkflowID reads the chain ID and hash out of a
// transaction workflow's ID (workflows.TransactionWorkflowID).
func parseTransactionWorkflowID(id string) (int64, string, bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] != "transaction" || !payment.ValidTxHash(parts[2]) {
		return 0, "", false
	}
	chainID, err := strconv.ParseInt(parts[1], 10, 64)
	return chainID, parts[2], err == nil
}

// workflowInput decodes a workflow's input from the first event of its
// history into in.
func (svc Chains) workflowInput(ctx context.Context, workflowID, runID string, in any) error {
	it := svc.temporal.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return fmt.Errorf("%s has no history", workflowID)
	}
	first, err := it.Next()
	if err != nil {
		return err
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(first.GetWorkflowExecutionStartedEventAttributes().GetInput(), in); err != nil {
		return fmt.Errorf("decode %s's input: %w", workflowID, err)
	}
	return nil
}

// recordFromWorkflow records a session again from its workflow: the
// session as it was opened (the workflow's input), with its created event,
// then its state as the workflow knows it now (status, amount paid,
// exception, resolution), with the events of that change. A plan the
// records lost too is recorded again as a stand-in (standInPlan); the note
// says so.
func (svc Chains) recordFromWorkflow(ctx context.Context, workflowID, runID string) (note string, err error) {
	var in workflows.CheckoutSessionInput
	if err := svc.workflowInput(ctx, workflowID, runID, &in); err != nil {
		return "", err
	}
	switch _, err := svc.store.Checkout().PlanByID(ctx, in.Session.PaymentPlanID); {
	case errors.Is(err, payment.ErrNotFound):
		if err := svc.store.Checkout().CreatePlan(ctx, standInPlan(in.Session, svc.now()), renderPlan); err != nil {
			return "", fmt.Errorf("record its plan %s again: %w", in.Session.PaymentPlanID, err)
		}
		note = "; its plan " + in.Session.PaymentPlanID + ", lost too, recorded again as an archived stand-in"
	case err != nil:
		return "", err
	}
	if err := svc.store.Checkout().InsertSession(ctx, in.Session, views.SessionEvent); err != nil {
		return "", err
	}
	v, err := svc.temporal.QueryWorkflow(ctx, workflowID, runID, workflows.QuerySessionState)
	if err != nil {
		return "", fmt.Errorf("query %s: %w", workflowID, err)
	}
	var st workflows.SessionState
	if err := v.Get(&st); err != nil {
		return "", err
	}
	paid, err := decimal.NewFromString(st.PaidUSD)
	if err != nil {
		return "", fmt.Errorf("%s's amount paid %q: %w", workflowID, st.PaidUSD, err)
	}
	return note, svc.store.Checkout().UpdateSession(ctx, in.Session.ID, svc.now(), func(s *payment.Session) []payment.EventType {
		s.Resolution = st.Resolution
		return s.Progress(payment.SessionProgress{Status: st.Status, PaidUSD: paid, Exception: st.Exception, CompletedAt: st.CompletedAt})
	}, views.SessionEvent)
}

// standInPlan is the plan of a session recorded again from its workflow
// when the records lost the plan as well: under its ID, archived (no new
// session opens on it), at the session's amount, accepting the session's
// assets, its title saying where it came from. What else the plan held
// (its title, redirect URL, merchant info, other assets) was lost with
// the backup; the merchant can read it from their own copy.
func standInPlan(s payment.Session, now time.Time) payment.Plan {
	amount := s.AmountUSD
	policies := []payment.Policy{}
	for _, o := range s.PaymentOptions {
		policies = append(policies, payment.Policy{PolicyType: payment.PolicyAssetDefinition, AssetDefinitionID: o.AssetDefinitionID,
			EnvironmentScope: payment.ScopeAll, ChainScope: []string{}})
	}
	return payment.Plan{ID: s.PaymentPlanID, ProjectID: s.ProjectID, IsLive: s.IsLive,
		Title: "Recorded again from checkout session " + s.ID + " after a restore", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, AcceptedAssetPolicies: policies, Status: payment.PlanArchived, CreatedAt: s.CreatedAt, UpdatedAt: now}
}
