package workflows

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
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
	// set by whoever starts it (SessionVersion). A session started without
	// it asks workflow.GetVersion, as before: v0.1.0's sessions replay at
	// the default version. In the input, the version costs the session no
	// marker and no TemporalChangeVersion upsert (a visibility write, and
	// a billed action on Temporal Cloud).
	Version workflow.Version `json:",omitempty"`
}

// SessionVersion is the version a session's workflow starts at.
const SessionVersion workflow.Version = 1

// CheckoutSession drives one checkout session, whose row the API recorded
// before starting it (package internal/sessionstart): it makes sure a transaction workflow follows each payment to its deposit
// address (reported by chainwatch, or claimed by the payer's hash, an
// update), settles the session as their records change, expires it at
// expiresAt with a durable timer once its networks are read that far, and
// keeps taking (late) payments until the end of the late-payment window
// and until every transaction is final.
func CheckoutSession(ctx workflow.Context, in CheckoutSessionInput) error {
	ctx = withLocalActivityOptions(ctx)
	if in.Version == workflow.DefaultVersion {
		in.Version = workflow.GetVersion(ctx, ChangeOneWorkflowPerPayment, workflow.DefaultVersion, 1)
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

	// lines are the session's payments, and order their keys in arrival
	// order, for deterministic iteration. A line is a transaction record
	// (by its ID); a transfer chainwatch reported has a line under its
	// transfer key until its record is told.
	lines map[string]*payment.PaymentLine
	order []string
	// seenLate holds, by line, whether its payment was first seen late.
	seenLate map[string]bool
	seen     map[string]bool     // transfer keys reported
	reported map[string][]string // transfer keys reported, by transaction
	rowOf    map[string]string   // the record's ID of a transfer, by transfer key
	claimed  []string            // hashes the payer submitted

	// expiryWaits is set when expiresAt passed while payments made in time
	// were still confirming: the session then completes if they reach the
	// amount due, and expires once they are final if they do not.
	expiryWaits bool
	pastExpiry  bool // the expiry timer fired
	expired     bool // expiry is decided
	// unsettled is set by an assignment not settled yet.
	unsettled bool
	lateTimer bool
	// lateScan is set once the session is done: it then waits until every network it takes has been scanned past the
	// late-payment window (up to ScanWaitLimit), so that no transfer mined
	// inside the window reaches it after it has ended.
	lateScan, lateScanned bool

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
		lines:    map[string]*payment.PaymentLine{},
		seenLate: map[string]bool{},
		seen:     map[string]bool{},
		reported: map[string][]string{},
		rowOf:    map[string]string{},
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
// running finish.
func (cs *checkoutSession) run(ctx workflow.Context) error {
	cs.listen(ctx)
	for {
		if cs.done(ctx) {
			if cs.lateScanned {
				break
			}
			if !cs.lateScan {
				cs.lateScan = true
				cs.waitLateScan(ctx)
			}
		}
		if !cs.lateTimer && cs.closed() && workflow.Now(ctx).Before(cs.s.LateUntil) {
			cs.lateTimer = true
			cs.sel.AddFuture(workflow.NewTimer(ctx, cs.s.LateUntil.Sub(workflow.Now(ctx))), func(workflow.Future) {})
		}
		workflow.SetCurrentDetails(ctx, sessionDetails(workflow.Now(ctx), cs.s, cs.status, cs.paid, cs.exception, cs.lines, cs.order, cs.lateScan))
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
		cs.unsettled = false
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
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil || !cs.unsettled {
			return err
		}
		cs.unsettled = false
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

// validateResolution refuses a resolution the session as the workflow
// knows it does not take.
func (cs *checkoutSession) validateResolution(in ResolveInput) error {
	view := payment.Session{Status: cs.status, Exception: cs.exception}
	if _, err := view.Resolve(in.Resolution, in.At); err != nil {
		return temporal.NewApplicationError(err.Error(), ErrorConflict)
	}
	return nil
}

// onResolveException records a merchant's resolution (UpdateResolveException).
func (cs *checkoutSession) onResolveException(ctx workflow.Context, in ResolveInput) error {
	ctx = withLocalActivityOptions(ctx)
	// The session as the workflow knows it decides, as it will decide
	// every later settlement.
	view := payment.Session{Status: cs.status, Exception: cs.exception, CompletedAt: cs.completedAt}
	if _, err := view.Resolve(in.Resolution, in.At); err != nil {
		return temporal.NewApplicationError(err.Error(), ErrorConflict)
	}
	if err := resolveCheckoutSession(ctx, in); err != nil {
		return err
	}
	cs.status, cs.exception, cs.completedAt, cs.resolution = view.Status, view.Exception, view.CompletedAt, in.Resolution
	cs.resolvedPaid, _ = decimal.NewFromString(cs.paid)
	cs.upsertStatus(ctx)
	return nil
}

// onAssignTransfer records a merchant's assignment of an unexpected
// transfer (UpdateAssignTransfer) and leaves its settling to the main loop.
func (cs *checkoutSession) onAssignTransfer(ctx workflow.Context, in AssignInput) (payment.Transaction, error) {
	ctx = withLocalActivityOptions(ctx)
	t, err := assignTransfer(ctx, in)
	if err != nil {
		return t, err
	}
	if cs.lines[t.ID] == nil {
		cs.addLine(t.ID, &payment.PaymentLine{AssetID: t.AssetDefinitionID, AmountBaseUnits: t.AmountBaseUnits, Status: t.Status,
			Late: cs.late()})
	}
	// The main loop settles (it owns the session's records), or the end
	// of the workflow does, when the loop has finished.
	cs.unsettled = true
	cs.claims.SendAsync(t.ID)
	return t, nil
}

func (cs *checkoutSession) validateCancel(CancelRequest) error {
	if cs.status != payment.SessionOpen {
		return fmt.Errorf("only an open session can be canceled; this one is %s", cs.status)
	}
	return nil
}

// onCancel records the merchant's cancel (UpdateCancelSession).
func (cs *checkoutSession) onCancel(ctx workflow.Context, in CancelRequest) error {
	ctx = withLocalActivityOptions(ctx)
	if err := payment.AdvanceSession(cs.status, payment.SessionCanceled); err != nil {
		return err
	}
	if err := cancelCheckoutSession(ctx, CancelSessionInput{SessionID: cs.s.ID, At: workflow.Now(ctx), Audit: in.Audit}); err != nil {
		return err
	}
	cs.status = payment.SessionCanceled
	cs.upsertStatus(ctx)
	return nil
}

func (cs *checkoutSession) validateSubmission(ctx workflow.Context, in SubmitInput) error {
	if !slices.ContainsFunc(cs.s.PaymentOptions, func(o payment.PaymentOption) bool { return o.Network == in.Network }) {
		return temporal.NewApplicationError("must be one of the session's networks", ErrorInvalid)
	}
	switch {
	case cs.status == payment.SessionCanceled || cs.status == payment.SessionExpired && !workflow.Now(ctx).Before(cs.s.LateUntil):
		return temporal.NewApplicationError("The checkout session no longer takes payments", ErrorConflict)
	case !slices.Contains(cs.claimed, in.TxHash) && len(cs.claimed) >= MaxSubmittedHashes:
		return temporal.NewApplicationError(fmt.Sprintf("The checkout session takes at most %d submitted transaction hashes", MaxSubmittedHashes), ErrorConflict)
	}
	return nil
}

// onSubmitPayment records a payer's hash as a claim (UpdateSubmitPayment)
// and has its transaction's workflow follow it.
func (cs *checkoutSession) onSubmitPayment(ctx workflow.Context, in SubmitInput) (payment.Transaction, error) {
	ctx = withLocalActivityOptions(ctx)
	if !slices.Contains(cs.claimed, in.TxHash) {
		cs.claimed = append(cs.claimed, in.TxHash)
	}
	now := workflow.Now(ctx)
	var id string
	_ = workflow.SideEffect(ctx, func(workflow.Context) any { return payment.NewID(payment.PrefixTx, now) }).Get(&id)
	t, err := recordClaim(ctx, ClaimInput{Claim: payment.Claim(cs.s, in.Network, in.ChainID, in.TxHash, id, now)})
	if err != nil || !t.IsClaim() || t.Status.Terminal() {
		return t, err // a transfer recorded before: its workflow tells the session
	}
	if cs.lines[t.ID] == nil {
		cs.seenLate[t.ID] = cs.late()
		cs.addLine(t.ID, &payment.PaymentLine{Status: payment.TxPending, Late: cs.seenLate[t.ID]})
	}
	p := SessionTransfer{SessionID: cs.s.ID, Network: in.Network, ChainID: in.ChainID, TxHash: in.TxHash,
		LogIndex: payment.LogIndexClaim, To: cs.s.DepositAddress, Source: "payer"}
	if !cs.inline[p.Key()] { // if it is, its next look takes the claim
		if err := cs.follow(ctx, TransactionInput{Transfer: p, Session: cs.s}); err != nil {
			return payment.Transaction{}, err
		}
	}
	cs.claims.SendAsync(t.ID)
	return t, nil
}

// onExpiry handles the expiry timer. Lateness is the chain's: a payment
// mined before expiresAt is in time however late chainwatch sees it (a
// node outage, a worker restart). So the session waits until every
// network has been scanned past expiresAt, then decides.
func (cs *checkoutSession) onExpiry(ctx workflow.Context) error {
	if !cs.takesPayments() {
		cs.expired = true
		return cs.decideExpiry(ctx)
	}
	cs.pastExpiry = true
	workflow.Go(ctx, func(ctx workflow.Context) {
		// Not past ScanWaitLimit after the late-payment window, though: a
		// network that stopped for good does not hold the session for ever.
		cs.waitScanned(ctx, cs.s.ExpiresAt, cs.s.LateUntil.Add(ScanWaitLimit))
		cs.scanned.Send(ctx, nil)
	})
	return nil
}

// onScannedPastExpiry decides the expiry once the networks have been
// scanned past expiresAt.
func (cs *checkoutSession) onScannedPastExpiry(ctx workflow.Context) error {
	cs.expired = true
	if err := cs.decideExpiry(ctx); err != nil || cs.expiryWaits {
		return err
	}
	return cs.settle(ctx) // the late payments seen while it waited
}

// decideExpiry expires a session still taking payments, unless payments
// made in time are still confirming: it then waits for them.
func (cs *checkoutSession) decideExpiry(ctx workflow.Context) error {
	if !cs.takesPayments() {
		return nil
	}
	if cs.confirming() {
		cs.expiryWaits = true
		return nil
	}
	return cs.expire(ctx)
}

// waitLateScan has the main loop wait until every network the session
// takes has been scanned past the late-payment window.
func (cs *checkoutSession) waitLateScan(ctx workflow.Context) {
	scannedLate := workflow.NewChannel(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		cs.waitScanned(ctx, cs.s.LateUntil, cs.s.LateUntil.Add(ScanWaitLimit))
		scannedLate.Send(ctx, nil)
	})
	cs.sel.AddReceive(scannedLate, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		cs.lateScanned = true
	})
}

// onTransfer takes a payment chainwatch or a rescan reported
// (SignalTransfer): it has a line until its record is told, and its
// transaction's workflow follows it.
func (cs *checkoutSession) onTransfer(ctx workflow.Context, p SessionTransfer) error {
	key := p.TransferKey()
	if cs.seen[key] {
		if cs.v >= 1 && p.Source == SourceRescan && p.PaysSessionAlone && !cs.inline[p.Key()] {
			// An operator's rescan, after the database was restored
			// behind Temporal: one more look at a payment this workflow
			// followed records it again if the records lost it (its line
			// moves to the new record).
			cs.followInline(ctx, TransactionInput{Transfer: p, Session: cs.s})
		}
		return nil // the record is told already
	}
	if cs.afterWindow(ctx, p.BlockTime) {
		// Mined and seen after the late-payment window: its
		// transaction's workflow records it as unexpected.
		cs.seen[key] = true
		return cs.follow(ctx, TransactionInput{Transfer: p, Session: cs.s})
	}
	cs.seen[key] = true
	cs.seenLate[key] = cs.late()
	cs.addLine(key, &payment.PaymentLine{AssetID: p.AssetID, AmountBaseUnits: p.AmountBaseUnits, Status: payment.TxPending,
		Late: cs.lateAt(cs.seenLate[key], p.BlockTime)})
	cs.reported[p.Key()] = append(cs.reported[p.Key()], key)
	switch in := (TransactionInput{Transfer: p, Session: cs.s}); {
	case cs.inline[p.Key()]:
		// Followed here already: its next look records this transfer too.
	case cs.v >= 1 && p.PaysSessionAlone && !slices.Contains(cs.claimed, p.TxHash):
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
	if u.Unexpected {
		// Recorded for no session: not a line of this one.
		cs.seen[u.TransferKey] = true
		if cs.lines[u.TransferKey] != nil {
			cs.drop(u.TransferKey)
		}
		return cs.settle(ctx)
	}
	if u.Ended {
		// Transfers it was told of and did not record will not be.
		for _, k := range cs.reported[u.Key] {
			if cs.lines[k] != nil {
				cs.drop(k)
			}
		}
		delete(cs.reported, u.Key)
		return cs.settle(ctx)
	}
	if prev := cs.rowOf[u.TransferKey]; u.TransferKey != "" && prev != "" && prev != u.RowID && cs.lines[prev] != nil && cs.lines[u.RowID] == nil {
		// The transfer recorded again under another ID: its line moves
		// to the new record rather than counting twice.
		cs.moveLine(prev, u.RowID)
	}
	if u.TransferKey != "" {
		cs.rowOf[u.TransferKey] = u.RowID
	}
	l := cs.lines[u.RowID]
	if u.TransferKey != "" {
		cs.seen[u.TransferKey] = true
		if reportedLine := cs.lines[u.TransferKey]; reportedLine != nil {
			if l == nil {
				l = reportedLine
				cs.lines[u.RowID], cs.seenLate[u.RowID] = l, cs.seenLate[u.TransferKey]
				cs.order[slices.Index(cs.order, u.TransferKey)] = u.RowID
			} else {
				cs.seenLate[u.RowID] = cs.seenLate[u.RowID] && cs.seenLate[u.TransferKey]
			}
			cs.drop(u.TransferKey)
		}
	}
	if l == nil {
		l = &payment.PaymentLine{}
		cs.seenLate[u.RowID] = cs.late()
		cs.addLine(u.RowID, l)
	}
	l.Late = cs.lateAt(cs.seenLate[u.RowID], u.MinedAt)
	l.Status, l.AssetID, l.AmountBaseUnits = u.Status, u.AssetID, u.AmountBaseUnits
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

// settle settles the session over its lines, as far as its expiry allows.
func (cs *checkoutSession) settle(ctx workflow.Context) error {
	if cs.pastExpiry && !cs.expired && cs.takesPayments() {
		// Past expiresAt, before the chain has been read that far: only
		// payments made in time may complete the session.
		return cs.settleOver(ctx, true)
	}
	if !cs.expiryWaits {
		return cs.settleOver(ctx, false)
	}
	if err := cs.settleOver(ctx, true); err != nil || cs.status == payment.SessionCompleted {
		cs.expiryWaits = false
		if err == nil {
			err = cs.settleOver(ctx, false) // late payments made while it waited count too, flagged
		}
		return err
	}
	if !cs.confirming() {
		cs.expiryWaits = false
		return cs.expire(ctx)
	}
	return nil
}

// settleOver settles the session over its lines (only those in time, if
// onTimeOnly) and records what changed.
func (cs *checkoutSession) settleOver(ctx workflow.Context, onTimeOnly bool) error {
	list := make([]payment.PaymentLine, 0, len(cs.order))
	for _, k := range cs.order {
		if !onTimeOnly || !cs.lines[k].Late {
			list = append(list, *cs.lines[k])
		}
	}
	out := payment.Settle(cs.s, cs.status, list, cs.settings.CompleteOn, cs.settings.TolerancePercent)
	if cs.resolution != "" {
		out = cs.resolution.Keep(out, cs.resolvedPaid)
	}
	if out.Status == payment.SessionProcessing && !out.SeenUSD.IsPositive() {
		out.Status = payment.SessionOpen // every payment it saw failed
	}
	if out.Status == cs.status && out.PaidUSD.String() == cs.paid && out.Exception == cs.exception {
		return nil
	}
	if out.Status != cs.status {
		if err := payment.AdvanceSession(cs.status, out.Status); err != nil {
			return err
		}
	}
	now := workflow.Now(ctx)
	if out.Status == payment.SessionCompleted && cs.completedAt == nil {
		cs.completedAt = &now
	}
	cs.status, cs.paid, cs.exception = out.Status, out.PaidUSD.String(), out.Exception
	cs.upsertStatus(ctx)
	return recordSessionProgress(ctx, ProgressInput{SessionID: cs.s.ID, Status: cs.status,
		PaidUSD: cs.paid, Exception: cs.exception, CompletedAt: cs.completedAt, At: now})
}

// expire records the session's expiry, then settles its late payments.
func (cs *checkoutSession) expire(ctx workflow.Context) error {
	if err := payment.AdvanceSession(cs.status, payment.SessionExpired); err != nil {
		return err
	}
	if err := expireCheckoutSession(ctx, ExpireSessionInput{SessionID: cs.s.ID, At: cs.s.ExpiresAt}); err != nil {
		return err
	}
	cs.status = payment.SessionExpired
	cs.upsertStatus(ctx)
	return cs.settleOver(ctx, false)
}

func (cs *checkoutSession) upsertStatus(ctx workflow.Context) {
	_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(cs.status)))
	if cs.cancelExpiry != nil && (cs.status == payment.SessionCompleted || cs.status == payment.SessionCanceled) {
		cs.cancelExpiry() // nothing left for the expiry to decide
	}
}

func (cs *checkoutSession) takesPayments() bool {
	return cs.status == payment.SessionOpen || cs.status == payment.SessionProcessing
}

// confirming reports a payment seen before expiresAt that may still count
// (not failed, not yet at completeOn).
func (cs *checkoutSession) confirming() bool {
	for _, k := range cs.order {
		l := cs.lines[k]
		if !l.Late && l.Status != payment.TxFailed && !payment.Counts(l.Status, cs.settings.CompleteOn) {
			return true
		}
	}
	return false
}

// late tells whether a payment first seen now is seen late.
func (cs *checkoutSession) late() bool {
	return cs.status == payment.SessionExpired || cs.status == payment.SessionCanceled || cs.expiryWaits || cs.pastExpiry
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

func (cs *checkoutSession) addLine(key string, l *payment.PaymentLine) {
	cs.lines[key] = l
	cs.order = append(cs.order, key)
}

// moveLine moves a line to another key, keeping its place.
func (cs *checkoutSession) moveLine(from, to string) {
	cs.lines[to], cs.seenLate[to] = cs.lines[from], cs.seenLate[from]
	cs.order[slices.Index(cs.order, from)] = to
	delete(cs.lines, from)
	delete(cs.seenLate, from)
}

func (cs *checkoutSession) drop(key string) {
	delete(cs.lines, key)
	delete(cs.seenLate, key)
	cs.order = slices.DeleteFunc(cs.order, func(k string) bool { return k == key })
}

// closed tells that the session takes no more payments in time.
func (cs *checkoutSession) closed() bool {
	return cs.expired || cs.status == payment.SessionCompleted || cs.status == payment.SessionCanceled
}

// done tells that the session may end: its late-payment window has passed
// and every transaction it started is final.
func (cs *checkoutSession) done(ctx workflow.Context) bool {
	if !cs.closed() || workflow.Now(ctx).Before(cs.s.LateUntil) {
		return false
	}
	for _, k := range cs.order {
		if !cs.lines[k].Status.Terminal() {
			return false
		}
	}
	return true
}

// ScanWaitLimit bounds how long past its late-payment window a session
// waits for its networks' chainwatch (a node down for days): a transfer
// reported after that is recorded as unexpected.
const ScanWaitLimit = 7 * 24 * time.Hour

// sessionNetworks are the networks a session takes payments on.
func sessionNetworks(s payment.Session) []string {
	var networks []string
	for _, o := range s.PaymentOptions {
		if !slices.Contains(networks, o.Network) {
			networks = append(networks, o.Network)
		}
	}
	return networks
}

// waitScanned waits until every network the session takes has been
// scanned past before (its chainwatch has handed over every transfer mined
// before), or until limit. Each network's chainwatch tells the session when
// it passes the session's expiry and late-payment window (SignalScanned).
// Without that word, the session reads the scan's progress once (a chain
// whose clock runs ahead passed the time before the session existed), then
// waits for the word; without it for a minute (the session's workflow was
// not running when it was sent, a network with no chainwatch any more), it
// reads again, less and less often (up to every 10 minutes). A workflow
// before ChangeOneWorkflowPerPayment polls the progress instead
// (waitScanRecorded).
func (cs *checkoutSession) waitScanned(ctx workflow.Context, before, limit time.Time) {
	networks := sessionNetworks(cs.s)
	if cs.v < 1 {
		waitScanRecorded(ctx, networks, before, limit)
		return
	}
	told := func() bool {
		for _, n := range networks {
			if time.Unix(int64(cs.scannedTo[n]), 0).Before(before) {
				return false
			}
		}
		return true
	}
	for wait := time.Minute; workflow.Now(ctx).Before(limit); wait = min(2*wait, 10*time.Minute) {
		if told() {
			return
		}
		behind, err := scanBehind(ctx, ScanBehindInput{Networks: networks, Before: before})
		if err != nil || len(behind) == 0 {
			return
		}
		if ok, err := workflow.AwaitWithTimeout(ctx, min(wait, limit.Sub(workflow.Now(ctx))), told); err != nil || ok {
			return
		}
	}
}

// waitScanRecorded waits until every one of the networks has been scanned past
// before, or until limit, reading the scan's progress. It looks every few seconds at first, and less
// often the longer it waits (a tenth of the time waited, up to 10 minutes),
// so that a network down for days does not fill the history.
func waitScanRecorded(ctx workflow.Context, networks []string, before, limit time.Time) {
	started := workflow.Now(ctx)
	next := func(wait time.Duration) time.Duration {
		return min(2*wait, max(10*time.Second, min(workflow.Now(ctx).Sub(started)/10, 10*time.Minute)))
	}
	for wait := time.Second; workflow.Now(ctx).Before(limit); wait = next(wait) {
		behind, err := scanBehind(ctx, ScanBehindInput{Networks: networks, Before: before})
		if err != nil || len(behind) == 0 {
			return
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return
		}
	}
}
