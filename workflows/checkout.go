package workflows

import (
	"fmt"
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

// UpdateSessionCreated is the update that returns once the session's row is
// recorded by the workflow. The API no longer waits on it (it records the
// row itself once the workflow has started); the handler stays for callers
// that want to wait for the workflow's own record.
const UpdateSessionCreated = "session-created"

// UpdateCancelSession is the merchant's cancel of an open session.
const UpdateCancelSession = "cancel"

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

// UpdateResolveException is a merchant's resolution of the session's
// exception (payment.Resolution): the workflow records it and settles the
// session's later payment changes around it.
const UpdateResolveException = "resolve-exception"

// ResolveExceptionUpdateOptions send a session's workflow a merchant's
// resolution and wait for it to be recorded.
func ResolveExceptionUpdateOptions(in ResolveInput) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID: CheckoutSessionWorkflowID(in.SessionID), UpdateName: UpdateResolveException, Args: []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
}

// UpdateAssignTransfer is a merchant's assignment of an unexpected transfer
// to the session (payment.Transaction.Assign): the workflow records it and
// counts the transfer as a payment, late unless the session still takes
// payments. It answers with the transaction as recorded.
const UpdateAssignTransfer = "assign-transfer"

// AssignTransferUpdateOptions send a session's workflow a merchant's
// assignment and wait for it to be recorded and settled.
func AssignTransferUpdateOptions(in AssignInput) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID: CheckoutSessionWorkflowID(in.SessionID), UpdateName: UpdateAssignTransfer, Args: []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
}

// QuerySessionState answers a session's state as its workflow knows it
// (SessionState): what an operator's reconciliation records again when the
// database lost it.
const QuerySessionState = "session-state"

// SessionState is a session's state as its workflow knows it.
type SessionState struct {
	Status      payment.SessionStatus
	PaidUSD     string
	Exception   string
	CompletedAt *time.Time
	Resolution  payment.Resolution
}

// UpdateSubmitPayment is the payer's submission of a transaction hash to a
// session: the session records it as a claim and returns the session's
// record of that transaction.
const UpdateSubmitPayment = "submit-payment"

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
}

// CheckoutSession drives one checkout session: it records the session,
// makes sure a transaction workflow follows each payment to its deposit
// address (reported by the scanner, or claimed by the payer's hash, an
// update), settles the session as their records change, expires it at
// expiresAt with a durable timer once its networks are read that far, and
// keeps taking (late) payments until the end of the late-payment window
// and until every transaction is final.
func CheckoutSession(ctx workflow.Context, in CheckoutSessionInput) error {
	ctx = withLocalActivityOptions(ctx)
	s := in.Session
	// perTransfer: one line per transaction record, and the payer's
	// hashes as claims (changeTransfers).
	perTransfer := workflow.GetVersion(ctx, changeTransfers, workflow.DefaultVersion, 1) == 1
	created := false
	status := payment.SessionOpen
	lines := map[string]*payment.PaymentLine{}
	var order []string // lines in arrival order, for deterministic iteration
	// expiryWaits is set when expiresAt passed while payments made in time
	// were still confirming: the session then completes if they reach the
	// amount due, and expires once they are final if they do not.
	expiryWaits := false
	pastExpiry := false // the expiry timer fired (perTransfer)
	// late tells whether a payment first seen now is seen late.
	late := func() bool {
		return status == payment.SessionExpired || status == payment.SessionCanceled || expiryWaits || pastExpiry
	}
	// afterWindow tells whether a transfer mined at blockTime (Unix
	// seconds, 0 before it is mined) and seen now is past the late-payment
	// window on both counts, so no longer the session's
	// (payment.MatchTransfers decides the same).
	afterWindow := func(blockTime uint64) bool {
		return status != payment.SessionOpen && status != payment.SessionProcessing && !workflow.Now(ctx).Before(s.LateUntil) &&
			(blockTime == 0 || !time.Unix(int64(blockTime), 0).Before(s.LateUntil))
	}
	// seenLate holds, by line, whether its payment was first seen late.
	seenLate := map[string]bool{}
	// lateAt tells whether a payment is late: seen late, and, once mined
	// (blockTime in Unix seconds, 0 before), mined at or after expiresAt.
	// So a payment mined in time is in time however late the engine sees
	// it, and one seen in time stays in time on a chain whose clock runs
	// ahead.
	lateAt := func(seenLate bool, blockTime uint64) bool {
		return seenLate && (blockTime == 0 || !time.Unix(int64(blockTime), 0).Before(s.ExpiresAt))
	}
	// follow makes sure a transaction's workflow runs for the session
	// (watchTransaction). When one it started ends abnormally (failed,
	// terminated, timed out), it is started again from its records after
	// a pause (10 s, doubling up to an hour), for as long as the session
	// runs.
	restarts := workflow.NewChannel(ctx)
	pauses := map[string]time.Duration{}
	follow := func(ctx workflow.Context, in TransactionInput) error {
		fut, err := watchTransaction(ctx, in)
		if err != nil || fut == nil {
			return err
		}
		workflow.Go(ctx, func(ctx workflow.Context) {
			err := fut.Get(ctx, nil)
			if err == nil {
				return
			}
			key := in.Payment.Key()
			pauses[key] = min(max(2*pauses[key], 10*time.Second), time.Hour)
			workflow.GetLogger(ctx).Warn("a transaction's workflow ended abnormally; it starts again",
				"transaction", key, "after", pauses[key], "error", err)
			if workflow.Sleep(ctx, pauses[key]) == nil {
				restarts.Send(ctx, in)
			}
		})
		return nil
	}
	paid, exception := "0", ""
	var completedAt *time.Time
	// resolution is the merchant's resolution of an exception, made with
	// resolvedPaid paid; later settlements keep it (Resolution.Keep).
	var resolution payment.Resolution
	var resolvedPaid decimal.Decimal
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateResolveException, func(ctx workflow.Context, in ResolveInput) error {
		ctx = withLocalActivityOptions(ctx)
		if err := workflow.Await(ctx, func() bool { return created }); err != nil {
			return err
		}
		// The session as the workflow knows it decides, as it will decide
		// every later settlement.
		view := payment.Session{Status: status, Exception: exception, CompletedAt: completedAt}
		if _, err := view.Resolve(in.Resolution, in.At); err != nil {
			return temporal.NewApplicationError(err.Error(), ErrorConflict)
		}
		if err := resolveCheckoutSession(ctx, in); err != nil {
			return err
		}
		status, exception, completedAt, resolution = view.Status, view.Exception, view.CompletedAt, in.Resolution
		resolvedPaid, _ = decimal.NewFromString(paid)
		_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(status)))
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(in ResolveInput) error {
		view := payment.Session{Status: status, Exception: exception}
		if _, err := view.Resolve(in.Resolution, in.At); err != nil {
			return temporal.NewApplicationError(err.Error(), ErrorConflict)
		}
		return nil
	}}); err != nil {
		return err
	}
	var claimed []string                          // hashes the payer submitted
	claims := workflow.NewBufferedChannel(ctx, 1) // a claim added a line: settle
	if err := workflow.SetQueryHandler(ctx, QuerySessionState, func() (SessionState, error) {
		return SessionState{Status: status, PaidUSD: paid, Exception: exception, CompletedAt: completedAt, Resolution: resolution}, nil
	}); err != nil {
		return err
	}
	// unsettled is set by an assignment not settled yet.
	unsettled := false
	if err := workflow.SetUpdateHandler(ctx, UpdateAssignTransfer, func(ctx workflow.Context, in AssignInput) (payment.Transaction, error) {
		ctx = withLocalActivityOptions(ctx)
		if err := workflow.Await(ctx, func() bool { return created }); err != nil {
			return payment.Transaction{}, err
		}
		t, err := assignTransfer(ctx, in)
		if err != nil {
			return t, err
		}
		if lines[t.ID] == nil {
			lines[t.ID] = &payment.PaymentLine{AssetID: t.AssetDefinitionID, AmountBaseUnits: t.AmountBaseUnits, Status: t.Status,
				Late: late()}
			order = append(order, t.ID)
		}
		// The main loop settles (it owns the session's records), or the
		// end of the workflow does, when the loop has finished.
		unsettled = true
		claims.SendAsync(t.ID)
		return t, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateSessionCreated, func(ctx workflow.Context) error {
		return workflow.Await(ctx, func() bool { return created })
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCancelSession, func(ctx workflow.Context, in CancelRequest) error {
		ctx = withLocalActivityOptions(ctx)
		if err := payment.AdvanceSession(status, payment.SessionCanceled); err != nil {
			return err
		}
		if err := cancelCheckoutSession(ctx, CancelSessionInput{SessionID: s.ID, At: workflow.Now(ctx), Audit: in.Audit}); err != nil {
			return err
		}
		status = payment.SessionCanceled
		_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(status)))
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(CancelRequest) error {
		if status != payment.SessionOpen {
			return fmt.Errorf("only an open session can be canceled; this one is %s", status)
		}
		return nil
	}}); err != nil {
		return err
	}

	if perTransfer {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSubmitPayment, func(ctx workflow.Context, in SubmitInput) (payment.Transaction, error) {
			ctx = withLocalActivityOptions(ctx)
			if err := workflow.Await(ctx, func() bool { return created }); err != nil {
				return payment.Transaction{}, err
			}
			if !slices.Contains(claimed, in.TxHash) {
				claimed = append(claimed, in.TxHash)
			}
			now := workflow.Now(ctx)
			var id string
			_ = workflow.SideEffect(ctx, func(workflow.Context) any { return payment.NewID(payment.PrefixTx, now) }).Get(&id)
			t, err := recordClaim(ctx, ClaimInput{Claim: payment.Claim(s, in.Network, in.ChainID, in.TxHash, id, now)})
			if err != nil || !t.IsClaim() || t.Status.Terminal() {
				return t, err // a transfer recorded before: its workflow tells the session
			}
			if lines[t.ID] == nil {
				seenLate[t.ID] = late()
				lines[t.ID] = &payment.PaymentLine{Status: payment.TxPending, Late: seenLate[t.ID]}
				order = append(order, t.ID)
			}
			p := Payment{SessionID: s.ID, Network: in.Network, ChainID: in.ChainID, TxHash: in.TxHash,
				LogIndex: payment.LogIndexClaim, To: s.DepositAddress, Source: "payer"}
			if err := follow(ctx, TransactionInput{Payment: p, Session: s}); err != nil {
				return payment.Transaction{}, err
			}
			claims.SendAsync(t.ID)
			return t, nil
		}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, in SubmitInput) error {
			if !slices.ContainsFunc(s.PaymentOptions, func(o payment.PaymentOption) bool { return o.Network == in.Network }) {
				return temporal.NewApplicationError("must be one of the session's networks", ErrorInvalid)
			}
			switch {
			case status == payment.SessionCanceled || status == payment.SessionExpired && !workflow.Now(ctx).Before(s.LateUntil):
				return temporal.NewApplicationError("The checkout session no longer takes payments", ErrorConflict)
			case !slices.Contains(claimed, in.TxHash) && len(claimed) >= MaxSubmittedHashes:
				return temporal.NewApplicationError(fmt.Sprintf("The checkout session takes at most %d submitted transaction hashes", MaxSubmittedHashes), ErrorConflict)
			}
			return nil
		}}); err != nil {
			return err
		}
	}

	if err := createCheckoutSession(ctx, s); err != nil {
		return err
	}
	created = true

	payments := workflow.GetSignalChannel(ctx, SignalPayment)
	updates := workflow.GetSignalChannel(ctx, SignalTxStatus)
	expiry := workflow.NewTimer(ctx, s.ExpiresAt.Sub(workflow.Now(ctx)))
	expired := false
	// scanned tells that every network of the session has been scanned
	// past expiresAt (perTransfer): expiry is then decided.
	scanned := workflow.NewChannel(ctx)

	settleOver := func(onTimeOnly bool) error {
		list := make([]payment.PaymentLine, 0, len(order))
		for _, k := range order {
			if !onTimeOnly || !lines[k].Late {
				list = append(list, *lines[k])
			}
		}
		out := payment.Settle(s, status, list, in.Settings.CompleteOn, in.Settings.TolerancePercent)
		if resolution != "" {
			out = resolution.Keep(out, resolvedPaid)
		}
		if perTransfer && out.Status == payment.SessionProcessing && !out.SeenUSD.IsPositive() {
			out.Status = payment.SessionOpen // every payment it saw failed
		}
		if out.Status == status && out.PaidUSD.String() == paid && out.Exception == exception {
			return nil
		}
		if out.Status != status {
			if err := payment.AdvanceSession(status, out.Status); err != nil {
				return err
			}
		}
		now := workflow.Now(ctx)
		if out.Status == payment.SessionCompleted && completedAt == nil {
			completedAt = &now
		}
		status, paid, exception = out.Status, out.PaidUSD.String(), out.Exception
		_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(status)))
		return recordSessionProgress(ctx, ProgressInput{SessionID: s.ID, Status: status,
			PaidUSD: paid, Exception: exception, CompletedAt: completedAt, At: now})
	}
	expire := func() error {
		if err := payment.AdvanceSession(status, payment.SessionExpired); err != nil {
			return err
		}
		if err := expireCheckoutSession(ctx, ExpireSessionInput{SessionID: s.ID, At: s.ExpiresAt}); err != nil {
			return err
		}
		status = payment.SessionExpired
		_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(status)))
		return settleOver(false)
	}
	// confirming reports a payment seen before expiresAt that may still
	// count (not failed, not yet at completeOn).
	confirming := func() bool {
		for _, k := range order {
			l := lines[k]
			if !l.Late && l.Status != payment.TxFailed && !payment.Counts(l.Status, in.Settings.CompleteOn) {
				return true
			}
		}
		return false
	}
	settle := func() error {
		if pastExpiry && !expired && (status == payment.SessionOpen || status == payment.SessionProcessing) {
			// Past expiresAt, before the chain has been read that far:
			// only payments made in time may complete the session.
			return settleOver(true)
		}
		if !expiryWaits {
			return settleOver(false)
		}
		if err := settleOver(true); err != nil || status == payment.SessionCompleted {
			expiryWaits = false
			if err == nil {
				err = settleOver(false) // late payments made while it waited count too, flagged
			}
			return err
		}
		if !confirming() {
			expiryWaits = false
			return expire()
		}
		return nil
	}

	// With perTransfer, a line is a transaction record (by its ID); a
	// transfer the scanner reported has a line under its transfer key until
	// its record is told.
	seen := map[string]bool{}         // transfer keys reported
	reported := map[string][]string{} // transfer keys reported, by transaction
	rowOf := map[string]string{}      // the record's ID of a transfer, by transfer key
	drop := func(key string) {
		delete(lines, key)
		delete(seenLate, key)
		order = slices.DeleteFunc(order, func(k string) bool { return k == key })
	}
	reportTransfer := func(p Payment) error {
		key := p.TransferKey()
		if seen[key] {
			return nil // a rescan, or the record is told already
		}
		if afterWindow(p.BlockTime) && workflow.GetVersion(ctx, changeEveryTransfer, workflow.DefaultVersion, 1) == 1 {
			// Mined and seen after the late-payment window: its
			// transaction's workflow records it as unexpected.
			seen[key] = true
			return follow(ctx, TransactionInput{Payment: p, Session: s})
		}
		seen[key] = true
		seenLate[key] = late()
		lines[key] = &payment.PaymentLine{AssetID: p.AssetID, AmountBaseUnits: p.AmountBaseUnits, Status: payment.TxPending,
			Late: lateAt(seenLate[key], p.BlockTime)}
		order = append(order, key)
		reported[p.Key()] = append(reported[p.Key()], key)
		if err := follow(ctx, TransactionInput{Payment: p, Session: s}); err != nil {
			return err
		}
		return settle() // processing from the first payment seen
	}
	recordStatus := func(u TxStatus) error {
		if u.Unexpected {
			// Recorded for no session: not a line of this one.
			seen[u.TransferKey] = true
			if lines[u.TransferKey] != nil {
				drop(u.TransferKey)
			}
			return settle()
		}
		if u.Ended {
			// Transfers it was told of and did not record will not be.
			for _, k := range reported[u.Key] {
				if lines[k] != nil {
					drop(k)
				}
			}
			delete(reported, u.Key)
			return settle()
		}
		if prev := rowOf[u.TransferKey]; u.TransferKey != "" && prev != "" && prev != u.RowID && lines[prev] != nil && lines[u.RowID] == nil &&
			workflow.GetVersion(ctx, changeOneLinePerTransfer, workflow.DefaultVersion, 1) == 1 {
			// The transfer recorded again under another ID: its line
			// moves to the new record rather than counting twice.
			lines[u.RowID], seenLate[u.RowID] = lines[prev], seenLate[prev]
			order[slices.Index(order, prev)] = u.RowID
			delete(lines, prev)
			delete(seenLate, prev)
		}
		if u.TransferKey != "" {
			rowOf[u.TransferKey] = u.RowID
		}
		l := lines[u.RowID]
		if u.TransferKey != "" {
			seen[u.TransferKey] = true
			if reportedLine := lines[u.TransferKey]; reportedLine != nil {
				if l == nil {
					l = reportedLine
					lines[u.RowID], seenLate[u.RowID] = l, seenLate[u.TransferKey]
					order[slices.Index(order, u.TransferKey)] = u.RowID
				} else {
					seenLate[u.RowID] = seenLate[u.RowID] && seenLate[u.TransferKey]
				}
				drop(u.TransferKey)
			}
		}
		if l == nil {
			l = &payment.PaymentLine{}
			lines[u.RowID], seenLate[u.RowID] = l, late()
			order = append(order, u.RowID)
		}
		l.Late = lateAt(seenLate[u.RowID], u.MinedAt)
		l.Status, l.AssetID, l.AmountBaseUnits = u.Status, u.AssetID, u.AmountBaseUnits
		return settle()
	}

	sel := workflow.NewSelector(ctx)
	var stepErr error
	sel.AddReceive(restarts, func(c workflow.ReceiveChannel, _ bool) {
		var in TransactionInput
		c.Receive(ctx, &in)
		stepErr = follow(ctx, in)
	})
	sel.AddReceive(claims, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		unsettled = false
		stepErr = settle()
	})
	decideExpiry := func() {
		if status != payment.SessionOpen && status != payment.SessionProcessing {
			return
		}
		if confirming() && workflow.GetVersion(ctx, changeExpiryWaitsForPayments, workflow.DefaultVersion, 1) == 1 {
			expiryWaits = true
			return
		}
		stepErr = expire()
	}
	sel.AddFuture(expiry, func(workflow.Future) {
		if !perTransfer || status != payment.SessionOpen && status != payment.SessionProcessing {
			expired = true
			decideExpiry()
			return
		}
		pastExpiry = true
		// Lateness is the chain's: a payment mined before expiresAt is in
		// time however late the scanner sees it (a node outage, a worker
		// restart). Wait until every network has been scanned past
		// expiresAt, then decide.
		workflow.Go(ctx, func(ctx workflow.Context) {
			// Not past the late-payment window (or, since
			// changeEveryTransfer, ScanWaitLimit after it), though: a
			// network that stopped for good does not hold the session for
			// ever.
			limit := s.LateUntil
			if workflow.GetVersion(ctx, changeEveryTransfer, workflow.DefaultVersion, 1) == 1 {
				limit = s.LateUntil.Add(ScanWaitLimit)
			}
			waitScanned(ctx, sessionNetworks(s), s.ExpiresAt, limit)
			scanned.Send(ctx, nil)
		})
	})
	sel.AddReceive(scanned, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		expired = true
		if decideExpiry(); stepErr == nil && !expiryWaits {
			stepErr = settle() // the late payments seen while it waited
		}
	})
	sel.AddReceive(payments, func(c workflow.ReceiveChannel, _ bool) {
		var p Payment
		c.Receive(ctx, &p)
		if perTransfer {
			stepErr = reportTransfer(p)
			return
		}
		key := p.Key()
		if _, seen := lines[key]; seen {
			return // the scanner and the payer both report it, or a rescan
		}
		lines[key] = &payment.PaymentLine{AssetID: p.AssetID, AmountBaseUnits: p.AmountBaseUnits, Status: payment.TxPending,
			Late: late()}
		order = append(order, key)
		if stepErr = startTransaction(ctx, TransactionInput{Payment: p, Session: s}); stepErr != nil {
			return
		}
		stepErr = settle() // processing from the first payment seen
	})
	sel.AddReceive(updates, func(c workflow.ReceiveChannel, _ bool) {
		var u TxStatus
		c.Receive(ctx, &u)
		if perTransfer {
			stepErr = recordStatus(u)
			return
		}
		if u.Ended {
			return
		}
		l, ok := lines[u.Key]
		if !ok {
			return
		}
		l.Status = u.Status
		if u.AssetID != "" {
			l.AssetID, l.AmountBaseUnits = u.AssetID, u.AmountBaseUnits
		}
		stepErr = settle()
	})

	// The session ends once its late-payment window has passed and every
	// transaction it started is final.
	closed := func() bool {
		return expired || status == payment.SessionCompleted || status == payment.SessionCanceled
	}
	done := func() bool {
		if !closed() {
			return false
		}
		if workflow.Now(ctx).Before(s.LateUntil) {
			return false
		}
		for _, k := range order {
			if !lines[k].Status.Terminal() {
				return false
			}
		}
		return true
	}
	lateTimer := false
	// lateScan is set once the session is done: since changeEveryTransfer
	// it then waits until every network it takes has been scanned past the
	// late-payment window (up to ScanWaitLimit), so that no transfer mined
	// inside the window reaches it after it has ended.
	lateScan, lateScanned := false, false
	for {
		if done() {
			if !perTransfer || lateScanned {
				break
			}
			if !lateScan {
				lateScan = true
				if workflow.GetVersion(ctx, changeEveryTransfer, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
					break
				}
				scannedLate := workflow.NewChannel(ctx)
				workflow.Go(ctx, func(ctx workflow.Context) {
					waitScanned(ctx, sessionNetworks(s), s.LateUntil, s.LateUntil.Add(ScanWaitLimit))
					scannedLate.Send(ctx, nil)
				})
				sel.AddReceive(scannedLate, func(c workflow.ReceiveChannel, _ bool) {
					c.Receive(ctx, nil)
					lateScanned = true
				})
			}
		}
		if !lateTimer && closed() && workflow.Now(ctx).Before(s.LateUntil) {
			lateTimer = true
			sel.AddFuture(workflow.NewTimer(ctx, s.LateUntil.Sub(workflow.Now(ctx))), func(workflow.Future) {})
		}
		workflow.SetCurrentDetails(ctx, sessionDetails(workflow.Now(ctx), s, status, paid, exception, lines, order, lateScan))
		sel.Select(ctx)
		if stepErr != nil {
			return stepErr
		}
	}
	// Let a caller still waiting on the update see its answer, and settle
	// an assignment accepted while the loop ended.
	for {
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil || !unsettled {
			return err
		}
		unsettled = false
		if err := settle(); err != nil {
			return err
		}
	}
}

// ScanWaitLimit bounds how long past its late-payment window a session
// waits for its networks' scanners (a node down for days): a transfer
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

// waitScanned waits until every one of the networks has been scanned past
// before, or until limit. It looks every few seconds at first, and less
// often the longer it waits (a tenth of the time waited, up to 10 minutes),
// so that a network down for days does not fill the history.
func waitScanned(ctx workflow.Context, networks []string, before, limit time.Time) {
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
