package workflows

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// The workflows' contract with the rest of the engine: the names of the
// workflow types, signals, updates, queries and activities, as Temporal
// records them in histories. Renaming one strands the running executions
// that carry it.

// Workflow type names.
const (
	WorkflowCheckoutSession   = "CheckoutSession"
	WorkflowTransaction       = "Transaction"
	WorkflowChainwatch        = "Chainwatch"
	WorkflowWebhookDelivery   = "WebhookDelivery"
	WorkflowWebhookDispatcher = "WebhookDispatcher"
	WorkflowRescan            = "Rescan"
	WorkflowOutgoing          = "OutgoingTransfer"
	WorkflowFinalityWatch     = "FinalityWatch"
)

// Signals.
const (
	// SignalTransfer tells a session's workflow of a payment to its deposit
	// address, found by chainwatch or submitted by the payer.
	SignalTransfer = "transfer"
	// SignalTxStatus tells a session's workflow that one of its
	// transactions changed status.
	SignalTxStatus = "transaction-status"
	// SignalWatch asks a transaction's workflow, from the session whose ID
	// it carries, to look at the transaction's records again (the session
	// added a claim, or chainwatch reported a transfer to it) and to tell
	// the session when it ends.
	SignalWatch = "watch"
	// SignalScanned tells a session's workflow that a network's chainwatch
	// has handed over every transfer mined before a block time
	// (ScanProgress), when that time passes the session's expiry or its
	// late-payment window.
	SignalScanned = "scanned"
	// SignalOutgoingChanged tells a refund's or payout's workflow that
	// the item changed (a transaction reported, a replacement): it looks
	// at once.
	SignalOutgoingChanged = "outgoing-changed"
)

// Updates of a session's workflow.
const (
	// UpdateCancelSession is the merchant's cancel of an open session.
	UpdateCancelSession = "cancel"
	// UpdateResolveException is a merchant's resolution of the session's
	// exception (payment.Resolution): the workflow records it and settles
	// the session's later payment changes around it.
	UpdateResolveException = "resolve-exception"
	// UpdateAssignTransfer is a merchant's assignment of an unexpected
	// transfer to the session (payment.Transaction.Assign): the workflow
	// records it and counts the transfer as a payment, late unless the
	// session still takes payments. It answers with the transaction as
	// recorded.
	UpdateAssignTransfer = "assign-transfer"
	// UpdateSubmitPayment is the payer's submission of a transaction hash
	// to a session: the session records it as a claim and returns the
	// session's record of that transaction.
	UpdateSubmitPayment = "submit-payment"
)

// Updates of a webhook delivery's workflow.
const (
	// UpdateAttemptNow asks a running delivery for an attempt now (a
	// merchant's redelivery, after fixing their endpoint): it ends the
	// wait before the next attempt, or joins the attempt under way, and
	// answers with that attempt's outcome. If the attempt fails, the retry
	// schedule goes on from there.
	UpdateAttemptNow = "attempt-now"
)

// Queries.
const (
	// QuerySessionState answers a session's state as its workflow knows it
	// (SessionState): what an operator's reconciliation records again when
	// the database lost it.
	QuerySessionState = "session-state"
)

// Activity names; each activity's input, output and the typed call the
// workflows use are in its activity_*.go file.
const (
	// ActivityExpireCheckoutSession records that an open or processing
	// session expired.
	ActivityExpireCheckoutSession = "ExpireCheckoutSession"
	// ActivityCancelCheckoutSession records that the merchant canceled an
	// open session.
	ActivityCancelCheckoutSession = "CancelCheckoutSession"
	// ActivityResolveCheckoutSession records a merchant's resolution of a
	// session's exception.
	ActivityResolveCheckoutSession = "ResolveCheckoutSession"
	// ActivityAssignTransfer records an unexpected transfer's assignment
	// to a session.
	ActivityAssignTransfer = "AssignTransfer"
	// ActivityRecordSessionProgress records a session's status, amount
	// paid and exception, with an event for each change.
	ActivityRecordSessionProgress = "RecordSessionProgress"
	// ActivityScanNetwork scans the next blocks of a network for payments
	// to watched deposit addresses.
	ActivityScanNetwork = "ScanNetwork"
	// ActivityScanRange scans a range of a network's blocks for transfers
	// to deposit addresses, apart from the network's chainwatch (an
	// operator's rescan).
	ActivityScanRange = "ScanRange"
	// ActivityScanBehind returns the networks whose chainwatch has not yet
	// reported to their sessions the transfers mined before a time.
	ActivityScanBehind = "ScanBehind"
	// ActivityMakePendingSessionStartDue tells whether a session's
	// workflow's start is still pending, and makes it due now for the next
	// sweep. Its name is the one recorded histories hold.
	ActivityMakePendingSessionStartDue = "HurrySessionStart"
	// ActivityMakePendingSessionStartsDue is
	// ActivityMakePendingSessionStartDue for several sessions: whether any
	// of their starts is still pending.
	ActivityMakePendingSessionStartsDue = "HurrySessionStarts"
	// ActivityCheckTransaction reads a transaction's receipt,
	// confirmations and transfers.
	ActivityCheckTransaction = "CheckTransaction"
	// ActivitySyncTransaction brings the records of one on-chain
	// transaction in line with what the chain says of it
	// (payment.MatchTransfers), with their events, and returns them.
	ActivitySyncTransaction = "SyncTransaction"
	// ActivityRecordClaim records a payer's claim that a transaction pays
	// a session, unless the session has a record of that transaction
	// already.
	ActivityRecordClaim = "RecordClaim"
	// ActivityDispatchEvents waits for recorded events not dispatched yet,
	// records a delivery for each endpoint that wants one and makes its
	// first attempt; it returns the deliveries whose workflows are to
	// start.
	ActivityDispatchEvents = "DispatchEvents"
	// ActivityMarkDispatched records that events' deliveries are made or
	// started.
	ActivityMarkDispatched = "MarkDispatched"
	// ActivityDeliverWebhook makes one attempt to deliver an event to an
	// endpoint, and records it.
	ActivityDeliverWebhook = "DeliverWebhook"
	// ActivityFinishDelivery records a delivery's final status.
	ActivityFinishDelivery = "FinishDelivery"
	// ActivityFollowOutgoing looks at the transaction of a refund or a
	// payout and records what the chain says of it.
	ActivityFollowOutgoing = "FollowOutgoing"
	// ActivityCheckFinality checks the blocks of a network's finalized
	// payments within its reorg window against the chain, and hands the
	// payments of the blocks gone to their workflows.
	ActivityCheckFinality = "CheckFinality"
	// ActivitySettleSession works a session's books out again from its
	// records, its workflow having ended (a payment reversed past
	// finality, or returned).
	ActivitySettleSession = "SettleSession"
)

// Definition is a workflow type: the name it is registered under, its
// function, and how its executions move between the releases of the
// engine's worker deployment (docs/decisions.md, "Worker Versioning").
type Definition struct {
	Name string
	Func any
	// Versioning is the type's versioning behaviour. Pinned: an execution
	// runs to its end on the release that started it, so a later release
	// may change it freely. AutoUpgrade: it moves to each new current
	// release at its next workflow task, so a change to it still goes
	// behind workflow.GetVersion; for the types that run for good or wait
	// on someone else for days, which would otherwise keep an old release
	// running.
	Versioning workflow.VersioningBehavior
}

// Definitions lists every workflow type of the engine. The worker
// registers them all, and the replay test replays a recorded history of
// each.
func Definitions() []Definition {
	const (
		pinned      = workflow.VersioningBehaviorPinned
		autoUpgrade = workflow.VersioningBehaviorAutoUpgrade
	)
	return []Definition{
		// A session lives for its lifetime and late-payment window, a
		// transaction until it is final, a rescan for its range: bounded.
		{WorkflowCheckoutSession, CheckoutSession, pinned},
		{WorkflowTransaction, Transaction, pinned},
		{WorkflowRescan, Rescan, pinned},
		// One per network, continuing as new for good.
		{WorkflowChainwatch, Chainwatch, autoUpgrade},
		{WorkflowFinalityWatch, FinalityWatch, autoUpgrade},
		// One, for good.
		{WorkflowWebhookDispatcher, WebhookDispatcher, autoUpgrade},
		// Retries a failing endpoint for about three days.
		{WorkflowWebhookDelivery, WebhookDelivery, autoUpgrade},
		// Waits for the merchant's signer to send the refund or payout,
		// for as long as that takes.
		{WorkflowOutgoing, Outgoing, autoUpgrade},
	}
}

// Register registers every workflow under its name, with its versioning
// behaviour, on a worker, a replayer or a test environment.
func Register(r worker.WorkflowRegistry) {
	for _, d := range Definitions() {
		r.RegisterWorkflowWithOptions(d.Func, workflow.RegisterOptions{Name: d.Name, VersioningBehavior: d.Versioning})
	}
}

// Activities is what package activities implements: one method per
// activity the workflows call, with the input and output of the
// activity's file here.
type Activities interface {
	ExpireCheckoutSession(context.Context, ExpireSessionInput) error
	CancelCheckoutSession(context.Context, CancelSessionInput) error
	ResolveCheckoutSession(context.Context, ResolveInput) error
	AssignTransfer(context.Context, AssignInput) (payment.Transaction, error)
	RecordSessionProgress(context.Context, ProgressInput) error
	ScanNetwork(context.Context, ScanInput) (ScanOutput, error)
	ScanRange(context.Context, ScanRangeInput) (ScanOutput, error)
	CheckTransaction(context.Context, CheckInput) (CheckOutput, error)
	SyncTransaction(context.Context, SyncInput) (SyncOutput, error)
	RecordClaim(context.Context, ClaimInput) (payment.Transaction, error)
	ScanBehind(context.Context, ScanBehindInput) ([]string, error)
	MakePendingSessionStartDue(context.Context, string) (bool, error)
	MakePendingSessionStartsDue(context.Context, []string) (bool, error)
	DispatchEvents(context.Context) (DispatchOutput, error)
	MarkDispatched(context.Context, MarkInput) error
	DeliverWebhook(context.Context, DeliverInput) (DeliverResult, error)
	FinishDelivery(context.Context, FinishInput) error
	FollowOutgoing(context.Context, FollowOutgoingInput) (FollowOutgoingOutput, error)
	CheckFinality(context.Context, CheckFinalityInput) (CheckFinalityOutput, error)
	SettleSession(context.Context, SettleSessionInput) error
}

// RegisterActivities registers each of a's activities under the name the
// workflows call it by.
func RegisterActivities(r worker.ActivityRegistry, a Activities) {
	for _, act := range []struct {
		name string
		fn   any
	}{
		{ActivityExpireCheckoutSession, a.ExpireCheckoutSession},
		{ActivityCancelCheckoutSession, a.CancelCheckoutSession},
		{ActivityResolveCheckoutSession, a.ResolveCheckoutSession},
		{ActivityAssignTransfer, a.AssignTransfer},
		{ActivityRecordSessionProgress, a.RecordSessionProgress},
		{ActivityScanNetwork, a.ScanNetwork},
		{ActivityScanRange, a.ScanRange},
		{ActivityCheckTransaction, a.CheckTransaction},
		{ActivitySyncTransaction, a.SyncTransaction},
		{ActivityRecordClaim, a.RecordClaim},
		{ActivityScanBehind, a.ScanBehind},
		{ActivityMakePendingSessionStartDue, a.MakePendingSessionStartDue},
		{ActivityMakePendingSessionStartsDue, a.MakePendingSessionStartsDue},
		{ActivityDispatchEvents, a.DispatchEvents},
		{ActivityMarkDispatched, a.MarkDispatched},
		{ActivityDeliverWebhook, a.DeliverWebhook},
		{ActivityFinishDelivery, a.FinishDelivery},
		{ActivityFollowOutgoing, a.FollowOutgoing},
		{ActivityCheckFinality, a.CheckFinality},
		{ActivitySettleSession, a.SettleSession},
	} {
		r.RegisterActivityWithOptions(act.fn, activity.RegisterOptions{Name: act.name})
	}
}
