package workflows

import (
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// CheckoutSessionWorkflowID is the workflow ID of a checkout session.
func CheckoutSessionWorkflowID(sessionID string) string { return "checkout-session/" + sessionID }

// CheckoutSessionStartOptions are the options a session's workflow starts
// with: its ID names the session, so a repeated start finds the running
// workflow instead of starting a second one.
func CheckoutSessionStartOptions(s payment.Session, planTitle string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		StaticSummary:            SessionSummary(s, planTitle),
		ID:                       CheckoutSessionWorkflowID(s.ID),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// A session's workflow that ended is never started again by a
		// late start (a retried one, a sweep's); one that failed or was
		// terminated may be, by an operator's repair.
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		TypedSearchAttributes: sessionSearchAttributes(s),
	}
}

// CancelSessionUpdateOptions send a session's workflow the merchant's
// cancel and wait for its answer.
func CancelSessionUpdateOptions(sessionID string, in CancelRequest) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID: CheckoutSessionWorkflowID(sessionID), UpdateName: UpdateCancelSession,
		Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted,
	}
}

// ResolveExceptionUpdateOptions send a session's workflow a merchant's
// resolution and wait for it to be recorded.
func ResolveExceptionUpdateOptions(in ResolveInput) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID: CheckoutSessionWorkflowID(in.SessionID), UpdateName: UpdateResolveException, Args: []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
}

// AssignTransferUpdateOptions send a session's workflow a merchant's
// assignment and wait for it to be recorded and settled.
func AssignTransferUpdateOptions(in AssignInput) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID: CheckoutSessionWorkflowID(in.SessionID), UpdateName: UpdateAssignTransfer, Args: []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
}

// SessionState is a session's state as its workflow knows it.
type SessionState struct {
	Status      payment.SessionStatus
	PaidUSD     string
	Exception   string
	CompletedAt *time.Time
	Resolution  payment.Resolution
	// FollowedInline are the transactions (workflow IDs) the session's
	// workflow follows itself now (no transaction workflow runs for them).
	FollowedInline []string `json:",omitempty"`
}

// MaxSubmittedHashes is how many transaction hashes a session takes from
// its (public) payer endpoint.
const MaxSubmittedHashes = 20

// SubmitInput is a transaction hash the payer's wallet sent.
type SubmitInput struct {
	Network string
	ChainID int64
	TxHash  string
}

// SubmitPaymentUpdateOptions send a session's workflow a payer's hash and
// wait for the recorded claim.
func SubmitPaymentUpdateOptions(sessionID string, in SubmitInput) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID: CheckoutSessionWorkflowID(sessionID), UpdateName: UpdateSubmitPayment, Args: []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
}

// Error types of the session's updates, for the caller to map.
const (
	ErrorInvalid  = "invalid"
	ErrorConflict = "conflict"
	// ErrorAuditRefused: the database refused the change's audit entry
	// for good, so the change was not made either.
	ErrorAuditRefused = "audit_refused"
)

// CheckoutSessionInput starts a checkout session's workflow.
type CheckoutSessionInput struct {
	Session  payment.Session
	Settings SessionSettings
	// Version is the workflow's version of ChangeOneWorkflowPerPayment,
	// as the starters set it before the engine used Worker Versioning.
	//
	// Deprecated: kept to decode the executions started with it; a
	// starter sets none, and a session's workflow takes its version from
	// the release that started it (sessionVersion, versions.go).
	Version workflow.Version `json:",omitempty"`
}

// CheckoutSession drives one checkout session, whose row the API recorded
// before starting it (package activities/sessionstart): it makes sure a transaction workflow follows each payment to its deposit
// address (reported by chainwatch, or claimed by the payer's hash, an
// update), settles the session as their records change, expires it at
// expiresAt with a durable timer once its networks are read that far, and
// keeps taking (late) payments until the end of the late-payment window
// and until every transaction is final.
func CheckoutSession(ctx workflow.Context, in CheckoutSessionInput) error {
	ctx = withLocalActivityOptions(ctx)
	if in.Version < 1 { // none: zero when decoded
		in.Version = sessionVersion(ctx)
	}
	cs := newCheckoutSession(ctx, in)
	if err := cs.setHandlers(ctx); err != nil {
		return err
	}
	return cs.run(ctx)
}

// checkoutSession is what a session's workflow knows: where the session
// stands, and a line per payment it has seen. Its methods are the
// workflow's handlers (one per signal, update, query and timer); the
// workflow's main loop (run) is the only one to settle the session.
type checkoutSession struct {
	s        payment.Session
	settings SessionSettings

	status      payment.SessionStatus
	paid        string
	exception   string
	completedAt *time.Time
	// resolution is the merchant's resolution of an exception, made with
	// resolvedPaid paid; later settlements keep it (Resolution.Keep).
	resolution   payment.Resolution
	resolvedPaid decimal.Decimal

	// ledger holds the session's payments.
	ledger *ledger

	// phase is where the workflow stands in its life, and expiry how far
	// the session's expiry is decided (checkout_lifecycle.go).
	phase  phase
	expiry expiryState
	// assignmentUnsettled is set by a merchant's assignment whose line
	// the main loop has not settled yet.
	assignmentUnsettled bool

	// v is the workflow's version of ChangeOneWorkflowPerPayment.
	v workflow.Version
	// inline holds the transactions the workflow follows itself
	// (followInline), by transaction key; news carries their looks' news.
	inline map[string]bool
	news   workflow.Channel
	// scannedTo is how far each network's chainwatch has told the session
	// it has handed over transfers (block time, Unix seconds).
	scannedTo map[string]uint64
	// cancelExpiry stops the expiry timer of a session that closed first.
	cancelExpiry workflow.CancelFunc

	claims   workflow.Channel // a claim or an assignment added a line: settle
	restarts workflow.Channel // a transaction's workflow to start again
	scanned  workflow.Channel // every network was scanned past expiresAt
	pauses   map[string]time.Duration
	sel      workflow.Selector
	// stepErr is the error of the handler the main loop last ran.
	stepErr error
}

func newCheckoutSession(ctx workflow.Context, in CheckoutSessionInput) *checkoutSession {
	return &checkoutSession{
		s:        in.Session,
		settings: in.Settings,
		status:   payment.SessionOpen,
		paid:     "0",
		ledger:   newLedger(),
		restarts: workflow.NewChannel(ctx),
		claims:   workflow.NewBufferedChannel(ctx, 1),
		pauses:   map[string]time.Duration{},
		v:        in.Version,
		inline:   map[string]bool{},
		news:     workflow.NewChannel(ctx),

		scannedTo: map[string]uint64{},
	}
}

// setHandlers sets the handlers of the session's updates and query.
func (cs *checkoutSession) setHandlers(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateResolveException, cs.onResolveException,
		workflow.UpdateHandlerOptions{Validator: cs.validateResolution}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QuerySessionState, cs.state); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateAssignTransfer, cs.onAssignTransfer); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCancelSession, cs.onCancel,
		workflow.UpdateHandlerOptions{Validator: cs.validateCancel}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateSubmitPayment, cs.onSubmitPayment,
		workflow.UpdateHandlerOptions{Validator: cs.validateSubmission})
}

// run is the session's main loop: it takes one signal, timer or settling
// at a time until the session is done, then lets the updates still
// running finish. Between two, it moves the workflow on to its next phase
// (checkout_lifecycle.go).
func (cs *checkoutSession) run(ctx workflow.Context) error {
	cs.listen(ctx)
	for {
		if cs.phase == phaseTakingPayments && cs.closed() {
			cs.enterClosed(ctx)
		}
		if cs.done(ctx) {
			if cs.phase == phaseScannedLate {
				break
			}
			if cs.phase == phaseClosed {
				cs.waitForLateScan(ctx)
			}
		}
		workflow.SetCurrentDetails(ctx, sessionDetails(workflow.Now(ctx), cs.s, cs.status, cs.paid, cs.exception,
			cs.ledger.payments(), cs.phase >= phaseWaitingForLateScan))
		cs.sel.Select(ctx)
		if cs.stepErr != nil {
			return cs.stepErr
		}
	}
	return cs.finishUpdates(ctx)
}

// listen sets up what the main loop waits for: the restarts of
// transactions' workflows, claims and assignments to settle, the expiry
// timer, and the transactions' signals.
func (cs *checkoutSession) listen(ctx workflow.Context) {
	transfers := workflow.GetSignalChannel(ctx, SignalTransfer)
	updates := workflow.GetSignalChannel(ctx, SignalTxStatus)
	expiryCtx, cancelExpiry := workflow.WithCancel(ctx)
	if cs.v >= 1 {
		cs.cancelExpiry = cancelExpiry
	}
	expiry := workflow.NewTimer(expiryCtx, cs.s.ExpiresAt.Sub(workflow.Now(ctx)))
	cs.scanned = workflow.NewChannel(ctx)
	cs.sel = workflow.NewSelector(ctx)
	cs.sel.AddReceive(cs.restarts, func(c workflow.ReceiveChannel, _ bool) {
		var in TransactionInput
		c.Receive(ctx, &in)
		cs.stepErr = cs.follow(ctx, in)
	})
	cs.sel.AddReceive(cs.claims, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		cs.assignmentUnsettled = false
		cs.stepErr = cs.settle(ctx)
	})
	cs.sel.AddFuture(expiry, func(f workflow.Future) {
		if f.Get(ctx, nil) == nil {
			cs.stepErr = cs.onExpiry(ctx)
		}
	})
	cs.sel.AddReceive(cs.scanned, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		cs.stepErr = cs.onScannedPastExpiry(ctx)
	})
	cs.sel.AddReceive(transfers, func(c workflow.ReceiveChannel, _ bool) {
		var p SessionTransfer
		c.Receive(ctx, &p)
		cs.stepErr = cs.onTransfer(ctx, p)
	})
	cs.sel.AddReceive(updates, func(c workflow.ReceiveChannel, _ bool) {
		var u TxStatus
		c.Receive(ctx, &u)
		cs.stepErr = cs.onTxStatus(ctx, u)
	})
	cs.sel.AddReceive(cs.news, func(c workflow.ReceiveChannel, _ bool) {
		var u TxStatus
		c.Receive(ctx, &u)
		cs.stepErr = cs.onTxStatus(ctx, u)
	})
	// The word of the networks' chainwatch is taken as it comes, apart
	// from the main loop: a wait for it (waitScanned) may be under way.
	words := workflow.GetSignalChannel(ctx, SignalScanned)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var word ScanProgress
			words.Receive(ctx, &word)
			cs.scannedTo[word.Network] = max(cs.scannedTo[word.Network], word.BlockTime)
		}
	})
}

// finishUpdates lets a caller still waiting on an update see its answer,
// and settles an assignment accepted while the main loop ended.
func (cs *checkoutSession) finishUpdates(ctx workflow.Context) error {
	for {
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil || !cs.assignmentUnsettled {
			return err
		}
		cs.assignmentUnsettled = false
		if err := cs.settle(ctx); err != nil {
			return err
		}
	}
}

// state answers QuerySessionState.
func (cs *checkoutSession) state() (SessionState, error) {
	return SessionState{Status: cs.status, PaidUSD: cs.paid, Exception: cs.exception, CompletedAt: cs.completedAt,
		Resolution: cs.resolution, FollowedInline: slices.Sorted(maps.Keys(cs.inline))}, nil
}

// onTransfer takes a payment chainwatch or a rescan reported
// (SignalTransfer): it has a line until its record is told, and its
// transaction's workflow follows it.
func (cs *checkoutSession) onTransfer(ctx workflow.Context, p SessionTransfer) error {
	in := TransactionInput{Transfer: p, Session: cs.s}
	if cs.ledger.knows(p.TransferKey()) {
		if cs.v >= 1 && p.Source == SourceRescan && p.PaysSessionAlone && !cs.inline[p.Key()] {
			// An operator's rescan, after the database was restored
			// behind Temporal: one more look at a payment this workflow
			// followed records it again if the records lost it (its line
			// goes to the new record).
			cs.followInline(ctx, in)
		}
		return nil // the record is told already
	}
	if cs.afterWindow(ctx, p.BlockTime) {
		// Mined and seen after the late-payment window: its
		// transaction's workflow records it as unexpected.
		cs.ledger.know(p.TransferKey())
		return cs.follow(ctx, in)
	}
	seenLate := cs.late()
	cs.ledger.addReported(p, payment.PaymentLine{AssetID: p.AssetID, AmountBaseUnits: p.AmountBaseUnits, Status: payment.TxPending,
		Late: cs.lateAt(seenLate, p.BlockTime)}, seenLate)
	switch {
	case cs.inline[p.Key()]:
		// Followed here already: its next look records this transfer too.
	case cs.v >= 1 && p.PaysSessionAlone && !cs.ledger.isClaimed(p.TxHash):
		cs.followInline(ctx, in)
	default:
		if err := cs.follow(ctx, in); err != nil {
			return err
		}
	}
	return cs.settle(ctx) // processing from the first payment seen
}

// onTxStatus takes a transaction workflow's news of one of its records,
// or of its end (SignalTxStatus), and brings the record's line in line.
func (cs *checkoutSession) onTxStatus(ctx workflow.Context, u TxStatus) error {
	switch {
	case u.Unexpected:
		// Recorded for no session: not a line of this one.
		cs.ledger.recordedForNoSession(u.TransferKey)
	case u.Ended:
		// Transfers it was told of and did not record will not be.
		cs.ledger.transactionEnded(u.Key)
	default:
		line := cs.ledger.told(u.RowID, u.TransferKey, cs.late())
		line.Late = cs.lateAt(line.seenLate, u.MinedAt)
		line.Status, line.AssetID, line.AmountBaseUnits = u.Status, u.AssetID, u.AmountBaseUnits
	}
	return cs.settle(ctx)
}

// follow makes sure a transaction's workflow runs for the session
// (watchTransaction). When one it started ends abnormally (failed,
// terminated, timed out), it is started again from its records after a
// pause (10 s, doubling up to an hour), for as long as the session runs.
func (cs *checkoutSession) follow(ctx workflow.Context, in TransactionInput) error {
	fut, err := watchTransaction(ctx, in)
	if err != nil || fut == nil {
		return err
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		err := fut.Get(ctx, nil)
		if err == nil {
			return
		}
		key := in.Transfer.Key()
		cs.pauses[key] = min(max(2*cs.pauses[key], 10*time.Second), time.Hour)
		workflow.GetLogger(ctx).Warn("a transaction's workflow ended abnormally; it starts again",
			"transaction", key, "after", cs.pauses[key], "error", err)
		if workflow.Sleep(ctx, cs.pauses[key]) == nil {
			cs.restarts.Send(ctx, in)
		}
	})
	return nil
}

// late tells whether a payment first seen now is seen late.
func (cs *checkoutSession) late() bool {
	return cs.status == payment.SessionExpired || cs.status == payment.SessionCanceled || cs.expiry != expiryAhead
}

// lateAt tells whether a payment is late: seen late, and, once mined
// (blockTime in Unix seconds, 0 before), mined at or after expiresAt. So
// a payment mined in time is in time however late the engine sees it, and
// one seen in time stays in time on a chain whose clock runs ahead.
func (cs *checkoutSession) lateAt(seenLate bool, blockTime uint64) bool {
	return seenLate && (blockTime == 0 || !time.Unix(int64(blockTime), 0).Before(cs.s.ExpiresAt))
}

// afterWindow tells whether a transfer mined at blockTime (Unix seconds, 0
// before it is mined) and seen now is past the late-payment window on both
// counts, so no longer the session's (payment.MatchTransfers decides the
// same).
func (cs *checkoutSession) afterWindow(ctx workflow.Context, blockTime uint64) bool {
	return cs.status != payment.SessionOpen && cs.status != payment.SessionProcessing && !workflow.Now(ctx).Before(cs.s.LateUntil) &&
		(blockTime == 0 || !time.Unix(int64(blockTime), 0).Before(cs.s.LateUntil))
}
