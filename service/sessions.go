package service

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/workflows"
)

// SessionView is a checkout session with its transactions and, when the
// caller holds it, its token.
type SessionView struct {
	Session      payment.Session
	Token        string
	Transactions []payment.Transaction
	// Plan is set for the customer's lookup by token: the hosted page
	// shows its title, merchant and redirect.
	Plan *payment.Plan
	// Refunds are set for the merchant's lookup of one session (nil
	// elsewhere): its refunds, oldest first.
	Refunds []payment.Refund
}

// CreateSession opens a checkout session for a plan. It needs no
// credentials: the plan decides the project and the environment. A
// merchant's server that sends its API key (key, else nil) may use only the
// plans of that key's project and environment; another's is "no payment
// plan has this ID", as an unknown one. The session is recorded with its
// workflow's pending start in one database transaction (OpenSession), so
// it is readable when this returns; the workflow starts in the background.
func (svc Checkout) CreateSession(ctx context.Context, key *payment.Principal, in payment.SessionInput) (SessionView, error) {
	defer svc.starts.Opening()()
	metadata, err := payment.CheckSessionInput(in)
	if err != nil {
		return SessionView{}, err
	}
	plan, err := svc.store.Checkout().PlanByID(ctx, *in.PaymentPlanID)
	if err == nil && key != nil && (plan.ProjectID != key.ProjectID || plan.IsLive != key.IsLive) {
		err = payment.ErrNotFound
	}
	if errors.Is(err, payment.ErrNotFound) {
		var probs payment.Problems
		probs.Add("paymentPlanId", "no payment plan has this ID")
		return SessionView{}, probs.Err()
	}
	if err != nil {
		return SessionView{}, fmt.Errorf("load plan: %w", err)
	}
	now := svc.now()
	var due decimal.Decimal
	if plan.SharedRecipient() {
		err = payment.TokenAmountDue(plan, in.AmountUSD, now)
	} else {
		due, err = payment.AmountDue(plan, in.AmountUSD, now)
	}
	if err != nil {
		return SessionView{}, err
	}
	project, err := svc.store.Checkout().GetProject(ctx, plan.ProjectID)
	if err != nil {
		return SessionView{}, fmt.Errorf("load project: %w", err)
	}
	lifetime := project.SessionLifetime
	if lifetime <= 0 {
		lifetime = svc.sessionLifetime
	}
	if lifetime <= 0 {
		lifetime = payment.DefaultSessionLifetime
	}
	token := payment.NewSessionToken()
	s := payment.Session{
		ID:             payment.NewID(payment.PrefixSession, now),
		TokenHash:      payment.HashSecret(token),
		ProjectID:      plan.ProjectID,
		PaymentPlanID:  plan.ID,
		IsLive:         plan.IsLive,
		Status:         payment.SessionOpen,
		Metadata:       metadata,
		AmountUSD:      due,
		AmountPaidUSD:  decimal.Zero,
		ExpiresAt:      now.Add(lifetime),
		CreatedAt:      now,
		UpdatedAt:      now,
		PaymentOptions: []payment.PaymentOption{},
	}
	if plan.QuoteTTL > 0 {
		s.ExpiresAt = now.Add(plan.QuoteTTL)
	}
	s.QuoteExpiresAt = s.ExpiresAt
	s.LateUntil = s.ExpiresAt.Add(project.LatePaymentWindow)
	if in.Email != nil {
		s.Email = *in.Email
	}
	if plan.SharedRecipient() {
		err = svc.sharedRecipientOptions(ctx, plan, &s)
	} else {
		err = svc.quotedOptions(ctx, plan, due, &s)
	}
	if err != nil {
		return SessionView{}, err
	}
	settings := workflows.SessionSettings{CompleteOn: project.CompleteOn, TolerancePercent: project.UnderpaymentTolerancePercent}
	if err := svc.OpenSession(ctx, s, plan.Title, settings); err != nil {
		return SessionView{}, err
	}
	return SessionView{Session: s, Token: token, Transactions: []payment.Transaction{}}, nil
}

// quotedOptions gives a session of a plan priced in USD its deposit
// address and its payment options: due in each accepted asset that can be
// quoted now.
func (svc Checkout) quotedOptions(ctx context.Context, plan payment.Plan, due decimal.Decimal, s *payment.Session) error {
	type quote struct {
		asset payment.Asset
		rate  decimal.Decimal
	}
	var quotes []quote
	for _, a := range svc.catalog.AcceptedAssets(plan.AcceptedAssetPolicies, plan.IsLive) {
		if rate, ok := svc.rate(ctx, a); ok {
			quotes = append(quotes, quote{a, rate})
		}
	}
	if len(quotes) == 0 {
		var probs payment.Problems
		probs.Add("paymentPlanId", "the payment plan accepts no asset that can be quoted now")
		return probs.Err()
	}
	// Bitcoin is offered when the project environment has a Bitcoin
	// account key, the EVM assets when it has an EVM deposit key; a plan
	// accepting both is paid in what its project's keys serve, and
	// refused only when they serve none of its assets.
	bitcoin := slices.ContainsFunc(quotes, func(q quote) bool { return q.asset.Bitcoin() })
	evm := slices.ContainsFunc(quotes, func(q quote) bool { return !q.asset.Bitcoin() })
	if bitcoin && evm {
		xpub, _, _, err := svc.store.Chains().BitcoinKey(ctx, s.ProjectID, s.IsLive)
		if err != nil {
			return fmt.Errorf("bitcoin key: %w", err)
		}
		evmKey, _, err := svc.store.Chains().DepositKey(ctx, s.ProjectID, s.IsLive)
		if err != nil {
			return fmt.Errorf("deposit key: %w", err)
		}
		// Without a key of either kind the session is refused below,
		// naming the EVM key.
		bitcoin = xpub != "" || evmKey == ""
		evm = evmKey != "" || xpub == ""
	}
	// The derivation indexes are taken last, once nothing can refuse the
	// session: a refused request leaves no unused address behind, which a
	// wallet scanning up to a gap limit could stop at.
	if evm {
		if err := svc.depositAddress(ctx, s); err != nil {
			return err
		}
	}
	if bitcoin {
		if err := svc.bitcoinAddress(ctx, s); err != nil {
			return err
		}
	}
	for _, q := range quotes {
		if q.asset.Bitcoin() && !bitcoin || !q.asset.Bitcoin() && !evm {
			continue
		}
		o := payment.Quote(q.asset, due, q.rate, s.DepositAddress)
		if q.asset.Bitcoin() {
			base, _ := new(big.Int).SetString(o.AmountBaseUnits, 10)
			o.DepositAddress, o.PaymentURI = s.BitcoinAddress, payment.BitcoinURI(s.BitcoinAddress, base, plan.Title)
			o.Confirmations = svc.chains[q.asset.Network].Network.ConfirmationsFor(due)
		}
		o.WalletAccountOnly = svc.walletAccountOnly(q.asset)
		s.PaymentOptions = append(s.PaymentOptions, o)
	}
	return nil
}

// environment names a project environment.
func environment(isLive bool) string {
	if isLive {
		return "live"
	}
	return "sandbox"
}

// walletAccountOnly tells whether a payment in the asset is seen only when
// sent from a wallet account: the native coin of a network whose nodes do
// not trace internal transfers.
func (svc Checkout) walletAccountOnly(a payment.Asset) bool {
	c := svc.chains[a.Network]
	return a.Native() && !a.Bitcoin() && c != nil && !c.Network.TraceInternalTransfers
}

// OpenSession records a session with its workflow's pending start, in one
// database transaction, and starts the workflow in the background
// (package sessionstart; docs/decisions.md, "Opening a session"). Once it
// returns, the session is readable and its workflow will run: a start
// that fails is made by a worker's sweep, or by the first call that needs
// the workflow. Opening the same session again (a retry) records and
// starts nothing new.
func (svc Checkout) OpenSession(ctx context.Context, s payment.Session, planTitle string, settings workflows.SessionSettings) error {
	return svc.starts.Open(ctx, workflows.CheckoutSessionInput{Session: s, Settings: settings}, planTitle)
}

// sessionWorkflow makes sure a session's workflow runs or ran before a
// call that needs it: a pending start is made now.
func (svc Checkout) sessionWorkflow(ctx context.Context, id string) error {
	if err := svc.starts.Ensure(ctx, id); err != nil {
		return fmt.Errorf("%w (%v)", &payment.Error{Kind: payment.KindUnavailable,
			Message: "The checkout session's workflow could not be started; retry shortly"}, err)
	}
	return nil
}

// SessionByToken returns the session a token opens.
func (svc Checkout) SessionByToken(ctx context.Context, token string) (SessionView, error) {
	if !payment.ValidSessionToken(token) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	s, err := svc.store.Checkout().SessionByTokenHash(ctx, payment.HashSecret(token))
	if errors.Is(err, payment.ErrNotFound) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	if err != nil {
		return SessionView{}, fmt.Errorf("load session: %w", err)
	}
	plan, err := svc.store.Checkout().PlanByID(ctx, s.PaymentPlanID)
	if err != nil {
		return SessionView{}, fmt.Errorf("load plan: %w", err)
	}
	return svc.withTransactions(ctx, SessionView{Session: s, Token: token, Plan: &plan})
}

// GetSession returns one of the principal's sessions.
func (svc Checkout) GetSession(ctx context.Context, p payment.Principal, projectID, id string) (SessionView, error) {
	if err := ownsID(p, projectID, payment.PrefixSession, id, "Checkout session"); err != nil {
		return SessionView{}, err
	}
	s, err := svc.store.Checkout().GetSession(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	if err != nil {
		return SessionView{}, err
	}
	v, err := svc.withTransactions(ctx, SessionView{Session: s})
	if err != nil {
		return v, err
	}
	if v.Refunds, err = svc.store.MoneyOut().SessionRefunds(ctx, id); err != nil {
		return v, fmt.Errorf("load refunds: %w", err)
	}
	if v.Refunds == nil {
		v.Refunds = []payment.Refund{}
	}
	return v, nil
}

func (svc Checkout) withTransactions(ctx context.Context, v SessionView) (SessionView, error) {
	txs, err := svc.store.Payments().SessionTransactions(ctx, v.Session.ID)
	if err != nil {
		return v, fmt.Errorf("load transactions: %w", err)
	}
	v.Transactions = txs
	return v, nil
}

// ListDepositAddresses lists the principal's used deposit addresses in
// derivation order, for the merchant's wallet to find every payment.
func (svc Checkout) ListDepositAddresses(ctx context.Context, p payment.Principal, projectID string, q payment.DepositQuery) (Page[payment.DepositAddress], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.DepositAddress]{}, err
	}
	items, total, err := svc.store.Chains().ListDepositAddresses(ctx, p, q)
	return Page[payment.DepositAddress]{items, total, q.ListQuery}, err
}

// ListSessions lists the principal's sessions (without their transactions).
func (svc Checkout) ListSessions(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[SessionView], error) {
	if err := owns(p, projectID); err != nil {
		return Page[SessionView]{}, err
	}
	items, total, err := svc.store.Checkout().ListSessions(ctx, p, q)
	views := make([]SessionView, len(items))
	for i, s := range items {
		views[i] = SessionView{Session: s}
	}
	return Page[SessionView]{views, total, q}, err
}

// CancelSession cancels an open session: its workflow refuses unless the
// session is still open (no payment seen).
func (svc Checkout) CancelSession(ctx context.Context, p payment.Principal, projectID, id string) (SessionView, error) {
	if _, err := svc.GetSession(ctx, p, projectID, id); err != nil {
		return SessionView{}, err
	}
	if err := svc.sessionWorkflow(ctx, id); err != nil {
		return SessionView{}, err
	}
	// The workflow records the cancelation and this entry in one
	// transaction.
	entry := svc.Access().auditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditSessionCanceled, "checkout_session", id, nil)
	err := svc.update(ctx, "cancel session", "", workflows.CancelSessionUpdateOptions(id, workflows.CancelRequest{Audit: &entry}), nil)
	if errors.Is(err, errWorkflowEnded) {
		return SessionView{}, payment.Conflict("Only an open session can be canceled")
	} else if err != nil {
		return SessionView{}, err
	}
	return svc.GetSession(ctx, p, projectID, id)
}

// ResolveSession records a merchant's resolution of a session's exception
// (payment.Resolution). While the session's workflow runs, the workflow
// records it, so that it settles later payment changes around it; once the
// workflow has ended, the records alone change.
func (svc Checkout) ResolveSession(ctx context.Context, p payment.Principal, projectID, id string, r payment.Resolution) (SessionView, error) {
	if _, err := svc.GetSession(ctx, p, projectID, id); err != nil {
		return SessionView{}, err
	}
	if !r.Valid() {
		var probs payment.Problems
		if r == "" {
			probs.Add("resolution", "is required: "+payment.ResolutionNames)
		} else {
			probs.Add("resolution", "must be "+payment.ResolutionNames)
		}
		return SessionView{}, probs.Err()
	}
	if err := svc.sessionWorkflow(ctx, id); err != nil {
		return SessionView{}, err
	}
	// While the workflow runs, it records the resolution and this entry in
	// one transaction.
	entry := svc.Access().auditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditSessionResolved, "checkout_session", id, map[string]any{"resolution": r})
	in := workflows.ResolveInput{SessionID: id, Resolution: r, At: svc.now(), Audit: &entry}
	err := svc.update(ctx, "resolve session", "", workflows.ResolveExceptionUpdateOptions(in), nil)
	if errors.Is(err, errWorkflowEnded) {
		// The workflow has ended: nothing else changes the session now.
		err = svc.Identity().audited(ctx, p.ProjectID, p.IsLive, payment.AuditSessionResolved, "checkout_session", id, map[string]any{"resolution": r},
			func(ctx context.Context) error {
				var refused error
				err := svc.store.Checkout().UpdateSession(ctx, id, in.At, func(s *payment.Session) []payment.EventType {
					events, err := s.Resolve(r, in.At)
					refused = err
					return events
				}, views.SessionEvent)
				if err == nil {
					err = refused
				}
				return err
			})
		if err != nil {
			return SessionView{}, err
		}
		return svc.GetSession(ctx, p, projectID, id)
	} else if err != nil {
		return SessionView{}, err
	}
	return svc.GetSession(ctx, p, projectID, id)
}
