package workflows

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// Workflow type names, as registered with Temporal. The histories of
// running executions carry them: renaming one strands those executions.
const (
	WorkflowCheckoutSession   = "CheckoutSession"
	WorkflowTransaction       = "Transaction"
	WorkflowChainwatch        = "Chainwatch"
	WorkflowWebhookDelivery   = "WebhookDelivery"
	WorkflowWebhookDispatcher = "WebhookDispatcher"
	WorkflowRescan            = "Rescan"
)

// Definition is a workflow type: the name it is registered under and its
// function.
type Definition struct {
	Name string
	Func any
}

// Definitions lists every workflow type of the engine. The worker
// registers them all, and the replay test replays a recorded history of
// each.
func Definitions() []Definition {
	return []Definition{
		{WorkflowCheckoutSession, CheckoutSession},
		{WorkflowTransaction, Transaction},
		{WorkflowChainwatch, Chainwatch},
		{WorkflowWebhookDelivery, WebhookDelivery},
		{WorkflowWebhookDispatcher, WebhookDispatcher},
		{WorkflowRescan, Rescan},
	}
}

// Register registers every workflow under its name on a worker, a replayer
// or a test environment.
func Register(r worker.WorkflowRegistry) {
	for _, d := range Definitions() {
		r.RegisterWorkflowWithOptions(d.Func, workflow.RegisterOptions{Name: d.Name})
	}
}

// Activities is what package activities implements: one method per
// activity the workflows call, with the input and output of the
// activity's file here.
type Activities interface {
	CreateCheckoutSession(context.Context, payment.Session) error
	ExpireCheckoutSession(context.Context, ExpireSessionInput) error
	CancelCheckoutSession(context.Context, CancelSessionInput) error
	ResolveCheckoutSession(context.Context, ResolveInput) error
	AssignTransfer(context.Context, AssignInput) (payment.Transaction, error)
	RecordSessionProgress(context.Context, ProgressInput) error
	ScanNetwork(context.Context, ScanInput) (ScanOutput, error)
	ScanRange(context.Context, ScanRangeInput) (ScanOutput, error)
	CheckTransaction(context.Context, CheckInput) (CheckOutput, error)
	RecordTransaction(context.Context, RecordInput) (payment.Transaction, error)
	AdvanceTransaction(context.Context, AdvanceInput) error
	SyncTransaction(context.Context, SyncInput) (SyncOutput, error)
	RecordClaim(context.Context, ClaimInput) (payment.Transaction, error)
	ScanBehind(context.Context, ScanBehindInput) ([]string, error)
	DispatchEvents(context.Context) error
	DeliverWebhook(context.Context, DeliverInput) (DeliverResult, error)
	FinishDelivery(context.Context, FinishInput) error
}

// RegisterActivities registers each of a's activities under the name the
// workflows call it by.
func RegisterActivities(r worker.ActivityRegistry, a Activities) {
	for _, act := range []struct {
		name string
		fn   any
	}{
		{ActivityCreateCheckoutSession, a.CreateCheckoutSession},
		{ActivityExpireCheckoutSession, a.ExpireCheckoutSession},
		{ActivityCancelCheckoutSession, a.CancelCheckoutSession},
		{ActivityResolveCheckoutSession, a.ResolveCheckoutSession},
		{ActivityAssignTransfer, a.AssignTransfer},
		{ActivityRecordSessionProgress, a.RecordSessionProgress},
		{ActivityScanNetwork, a.ScanNetwork},
		{ActivityScanRange, a.ScanRange},
		{ActivityCheckTransaction, a.CheckTransaction},
		{ActivityRecordTransaction, a.RecordTransaction},
		{ActivityAdvanceTransaction, a.AdvanceTransaction},
		{ActivitySyncTransaction, a.SyncTransaction},
		{ActivityRecordClaim, a.RecordClaim},
		{ActivityScanBehind, a.ScanBehind},
		{ActivityDispatchEvents, a.DispatchEvents},
		{ActivityDeliverWebhook, a.DeliverWebhook},
		{ActivityFinishDelivery, a.FinishDelivery},
	} {
		r.RegisterActivityWithOptions(act.fn, activity.RegisterOptions{Name: act.name})
	}
}
