// Package activities implements the engine's Temporal activities over the
// store. Every activity is idempotent: repeating it after a crash or a
// retry changes nothing more. Errors are classified: what retrying cannot
// fix (bad input, a missing record) is non-retryable; everything else is
// retried with backoff by the workflow's policy.
package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// Activities holds the dependencies of the engine's activities.
type Activities struct {
	Store    *store.Store
	Chains   chainwatch.Chains
	Webhooks Webhooks
	// Temporal signals the sessions' workflows of the transfers a scan
	// finds (ScanInput.SignalSessions), with a signal-with-start for a
	// session whose workflow's start is still pending; nil leaves them to
	// chainwatch.
	Temporal client.Client
	// StaleAfter is how long a refund's or payout's transaction may stay
	// unmined before it is stale (payment.DefaultStaleAfter when 0).
	StaleAfter time.Duration

	mempools mempools
}

// The activities are the ones the workflows declare.
var _ workflows.Activities = (*Activities)(nil)

// Register registers every activity under the name the workflows use.
func (a *Activities) Register(r worker.ActivityRegistry) {
	workflows.RegisterActivities(r, a)
}

// ExpireCheckoutSession records that an open or processing session expired.
func (a *Activities) ExpireCheckoutSession(ctx context.Context, in workflows.ExpireSessionInput) error {
	return classify(a.Store.Checkout().UpdateSession(ctx, in.SessionID, in.At, (*payment.Session).Expire, renderSession))
}

// CancelCheckoutSession records that the merchant canceled an open session.
func (a *Activities) CancelCheckoutSession(ctx context.Context, in workflows.CancelSessionInput) error {
	return classify(a.audited(ctx, in.Audit, func(ctx context.Context) error {
		return a.Store.Checkout().UpdateSession(ctx, in.SessionID, in.At, (*payment.Session).Cancel, renderSession)
	}))
}

// ResolveCheckoutSession records a merchant's resolution of a session's
// exception; a session that no longer has the exception (the resolution
// was recorded before) is left as it is.
func (a *Activities) ResolveCheckoutSession(ctx context.Context, in workflows.ResolveInput) error {
	return classify(a.audited(ctx, in.Audit, func(ctx context.Context) error {
		return a.Store.Checkout().UpdateSession(ctx, in.SessionID, in.At, func(s *payment.Session) []payment.EventType {
			events, _ := s.Resolve(in.Resolution, in.At)
			return events
		}, renderSession)
	}))
}

// AssignTransfer records a merchant's assignment of an unexpected transfer
// to a session, whose workflow then counts it; recording it again changes
// nothing.
func (a *Activities) AssignTransfer(ctx context.Context, in workflows.AssignInput) (payment.Transaction, error) {
	var t payment.Transaction
	err := a.audited(ctx, in.Audit, func(ctx context.Context) (err error) {
		t, err = a.Store.Payments().AssignTransaction(ctx, in.TransactionID, in.SessionID, in.At, renderTransaction, nil, renderSession)
		return err
	})
	return t, classify(err)
}

// audited makes a merchant's change and records its audit entry (made by
// the service, with the merchant as actor) in one transaction, or neither.
// The entry's ID is the service's, so a retry after a commit whose answer
// was lost records it once. An entry-less input makes the change
// alone.
func (a *Activities) audited(ctx context.Context, entry *payment.AuditEntry, change func(ctx context.Context) error) error {
	if entry == nil {
		return change(ctx)
	}
	return a.Store.InTx(ctx, func(ctx context.Context) error {
		if err := change(ctx); err != nil {
			return err
		}
		if err := a.Store.Access().RecordAudit(ctx, *entry); err != nil {
			observability.AuditFailures.Inc()
			msg := fmt.Sprintf("audit log: %s not recorded, so not made", entry.Action)
			if store.Refused(err) {
				return temporal.NewNonRetryableApplicationError(msg, workflows.ErrorAuditRefused, err)
			}
			return fmt.Errorf("%s: %w", msg, err) // an outage: retried
		}
		return nil
	})
}

// RecordSessionProgress records a session's status, amount paid and
// exception, with the events payment.Session.Progress decides.
func (a *Activities) RecordSessionProgress(ctx context.Context, in workflows.ProgressInput) error {
	paid, err := decimal.NewFromString(in.PaidUSD)
	if err != nil {
		return classify(&payment.Error{Kind: payment.KindValidation, Message: "bad amount " + in.PaidUSD})
	}
	progress := payment.SessionProgress{Status: in.Status, PaidUSD: paid, Exception: in.Exception, CompletedAt: in.CompletedAt}
	return classify(a.Store.Checkout().UpdateSession(ctx, in.SessionID, in.At, func(s *payment.Session) []payment.EventType {
		return s.Progress(progress)
	}, renderSession))
}

// The events' data: the records as the API shows them.
var (
	renderSession     = views.SessionEvent
	renderTransaction = views.TransactionEvent
)

// classify marks errors that no retry can fix as non-retryable. An error
// classified already (an audit entry refused) keeps its type.
func classify(err error) error {
	var classified *temporal.ApplicationError
	if err == nil || errors.As(err, &classified) {
		return err
	}
	switch payment.KindOf(err) {
	case payment.KindValidation, payment.KindNotFound, payment.KindConflict:
		return temporal.NewNonRetryableApplicationError(err.Error(), "invalid", err)
	}
	return err
}
