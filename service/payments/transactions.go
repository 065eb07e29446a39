package payments

import (
	"context"
	"errors"
	"fmt"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/workflows"
)

// GetTransaction returns one of the principal's transactions.
func (svc Service) GetTransaction(ctx context.Context, p payment.Principal, projectID, id string) (payment.Transaction, error) {
	if err := core.OwnsID(p, projectID, payment.PrefixTx, id, "Transaction"); err != nil {
		return payment.Transaction{}, err
	}
	t, err := svc.Store.Payments().GetTransaction(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return t, payment.NotFound("Transaction")
	}
	return t, err
}

// AssignTransaction assigns an unexpected transfer (a transfer its
// address's session no longer took) to a session of the principal, which
// then counts it as a payment. While the session's workflow runs, the
// workflow records the assignment and settles the session; once it has
// ended, the records change in one database transaction, the transfer
// counted as a late payment.
func (svc Service) AssignTransaction(ctx context.Context, p payment.Principal, projectID, id, sessionID string) (payment.Transaction, error) {
	t, err := svc.GetTransaction(ctx, p, projectID, id)
	if err != nil {
		return t, err
	}
	if sessionID == "" {
		var probs payment.Problems
		probs.Add("checkoutSessionId", "is required")
		return t, probs.Err()
	}
	v, err := svc.checkout().GetSession(ctx, p, projectID, sessionID)
	if errors.Is(err, payment.ErrNotFound) || payment.KindOf(err) == payment.KindNotFound {
		var probs payment.Problems
		probs.Add("checkoutSessionId", "no checkout session has this ID")
		return t, probs.Err()
	}
	if err != nil {
		return t, err
	}
	// The same checks the recording makes, answered before the workflow
	// is asked.
	check := t
	if _, err := check.Assign(v.Session); err != nil {
		return t, err
	}
	if err := svc.checkout().SessionWorkflow(ctx, sessionID); err != nil {
		return t, err
	}
	in := workflows.AssignInput{TransactionID: id, SessionID: sessionID, At: svc.Now()}
	// The workflow records the assignment and this entry in one
	// transaction; its details name the session the transfer was sent to
	// once the record is read.
	entry := svc.AuditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditTransactionAssigned, "transaction", id, map[string]any{
		"checkoutSessionId": sessionID, "addressSessionId": t.CheckoutSessionID})
	in.Audit = &entry
	err = svc.Update(ctx, "assign transaction", "", workflows.AssignTransferUpdateOptions(in), &t)
	if errors.Is(err, core.ErrWorkflowEnded) {
		project, err := svc.Store.Checkout().GetProject(ctx, p.ProjectID)
		if err != nil {
			return t, fmt.Errorf("load project: %w", err)
		}
		// The records alone change: with their audit entry, in one
		// transaction.
		err = svc.Store.InTx(ctx, func(ctx context.Context) (err error) {
			t, err = svc.Store.Payments().AssignTransaction(ctx, id, sessionID, in.At, views.TransactionEvent,
				func(s *payment.Session, txs []payment.Transaction) []payment.EventType {
					return s.Progress(endedSettlement(*s, txs, project))
				}, views.SessionEvent)
			if err != nil {
				return err
			}
			return svc.AuditIn(ctx, p.ProjectID, p.IsLive, payment.AuditTransactionAssigned, "transaction", id, map[string]any{
				"checkoutSessionId": sessionID, "addressSessionId": t.CheckoutSessionID})
		})
		return t, err
	}
	return t, err
}

// endedSettlement settles a session whose workflow has ended over the
// transactions that count for it: its own, as they were, and the transfers
// assigned to it, late. Its status stays (it has ended); its amount paid
// and exception follow.
func endedSettlement(s payment.Session, txs []payment.Transaction, project payment.Project) payment.SessionProgress {
	var lines []payment.PaymentLine
	for _, t := range txs {
		switch {
		case t.AssignedSessionID == s.ID:
			lines = append(lines, payment.LineOf(t, true))
		case t.CheckoutSessionID == s.ID && !t.Unexpected:
			lines = append(lines, payment.LineOf(t, false))
		}
	}
	out := payment.Settle(s, s.Status, lines, project.CompleteOn, project.UnderpaymentTolerancePercent)
	return payment.SessionProgress{Status: out.Status, PaidUSD: out.PaidUSD, Exception: out.Exception, CompletedAt: s.CompletedAt}
}

// ListTransactions lists the principal's transactions.
func (svc Service) ListTransactions(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (core.Page[payment.Transaction], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[payment.Transaction]{}, err
	}
	items, total, err := svc.Store.Payments().ListTransactions(ctx, p, q)
	return core.Page[payment.Transaction]{Items: items, Total: total, Query: q}, err
}
