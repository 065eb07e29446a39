package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/internal/core"
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
// plan has this ID", as an unknown one. The service loads what the session
// is decided from, payment.NewSession decides it, and the service takes
// its addresses and records it with its workflow's pending start in one
// database transaction (OpenSession), so it is readable when this returns;
// the workflow starts in the background.
func (svc Service) CreateSession(ctx context.Context, key *payment.Principal, in payment.SessionInput) (SessionView, error) {
	defer svc.Starts.Opening()()
	metadata, err := payment.CheckSessionInput(in)
	if err != nil {
		return SessionView{}, err
	}
	d, err := svc.sessionDraft(ctx, key, in)
	if err != nil {
		return SessionView{}, err
	}
	d.Metadata = metadata
	o, err := payment.NewSession(d)
	if err != nil {
		return SessionView{}, err
	}
	s, err := svc.takeAddresses(ctx, o)
	if err != nil {
		return SessionView{}, err
	}
	settings := workflows.SessionSettings{CompleteOn: d.Project.CompleteOn, TolerancePercent: d.Project.UnderpaymentTolerancePercent}
	if err := svc.OpenSession(ctx, s, d.Plan.Title, settings); err != nil {
		return SessionView{}, err
	}
	return SessionView{Session: s, Token: o.Token, Transactions: []payment.Transaction{}}, nil
}

// sessionDraft loads what a session is decided from: its plan (one of the
// key's project environment, when a key is sent), the plan's project, the
// plan's assets priced now and, when they are of both kinds, which keys
// the project environment has.
func (svc Service) sessionDraft(ctx context.Context, key *payment.Principal, in payment.SessionInput) (payment.SessionDraft, error) {
	plan, err := svc.Store.Checkout().PlanByID(ctx, *in.PaymentPlanID)
	if err == nil && key != nil && (plan.ProjectID != key.ProjectID || plan.IsLive != key.IsLive) {
		err = payment.ErrNotFound
	}
	if errors.Is(err, payment.ErrNotFound) {
		var probs payment.Problems
		probs.Add("paymentPlanId", "no payment plan has this ID")
		return payment.SessionDraft{}, probs.Err()
	}
	if err != nil {
		return payment.SessionDraft{}, fmt.Errorf("load plan: %w", err)
	}
	// A plan not usable now, or an amount it does not allow, is refused
	// before any price is read.
	now := svc.Now()
	if _, err := payment.SessionDue(plan, in.AmountUSD, now); err != nil {
		return payment.SessionDraft{}, err
	}
	project, err := svc.Store.Checkout().GetProject(ctx, plan.ProjectID)
	if err != nil {
		return payment.SessionDraft{}, fmt.Errorf("load project: %w", err)
	}
	d := payment.SessionDraft{Input: in, Plan: plan, Project: project, Quotes: svc.quotes(ctx, plan),
		Lifetime: svc.SessionLifetime, Now: now}
	if payment.OfferBothKinds(d.Quotes) {
		xpub, _, _, err := svc.Store.Chains().BitcoinKey(ctx, plan.ProjectID, plan.IsLive)
		if err != nil {
			return d, fmt.Errorf("bitcoin key: %w", err)
		}
		evmKey, _, err := svc.Store.Chains().DepositKey(ctx, plan.ProjectID, plan.IsLive)
		if err != nil {
			return d, fmt.Errorf("deposit key: %w", err)
		}
		d.Keys = payment.DepositKeys{EVM: evmKey != "", Bitcoin: xpub != ""}
	}
	return d, nil
}

// quotes are the assets a session of the plan may offer, with their
// prices now: a USD-priced plan's accepted assets that have a price; a
// token-priced plan's option assets on served networks, priced up to the
// first that has a price (its USD amount is that one's).
func (svc Service) quotes(ctx context.Context, plan payment.Plan) []payment.AssetQuote {
	var quotes []payment.AssetQuote
	if plan.SharedRecipient() {
		priced := false
		for _, o := range plan.TokenOptions {
			a, ok := svc.Catalog.Asset(o.AssetID)
			if !ok || svc.Chains[a.Network] == nil {
				continue
			}
			q := svc.assetQuote(a)
			if !priced {
				q.Rate, q.Priced = svc.Rate(ctx, a)
				priced = q.Priced
			}
			quotes = append(quotes, q)
		}
		return quotes
	}
	for _, a := range svc.Catalog.AcceptedAssets(plan.AcceptedAssetPolicies, plan.IsLive) {
		q := svc.assetQuote(a)
		if q.Rate, q.Priced = svc.Rate(ctx, a); q.Priced {
			quotes = append(quotes, q)
		}
	}
	return quotes
}

// assetQuote is an asset with what its network tells the customer.
func (svc Service) assetQuote(a payment.Asset) payment.AssetQuote {
	q := payment.AssetQuote{Asset: a, WalletAccountOnly: svc.walletAccountOnly(a)}
	if c := svc.Chains[a.Network]; c != nil && a.Bitcoin() {
		q.Confirmations = c.Network.ConfirmationsFor
	}
	return q
}

// takeAddresses gives a decided session what it is paid at: the amounts
// it holds at its plan's shared recipient, or the next unused addresses of
// its project's keys. They are taken last, once nothing but a missing key
// can refuse the session: a refused request leaves no unused address
// behind, which a wallet scanning up to a gap limit could stop at.
func (svc Service) takeAddresses(ctx context.Context, o payment.Opening) (payment.Session, error) {
	s := o.Session
	if s.SharedRecipient {
		held, err := svc.Store.Checkout().ReserveAmounts(ctx, s, svc.MaxOpenHolds)
		if payment.KindOf(err) != payment.KindInternal {
			return s, err // the recipient not verified, or too many holds
		}
		if err != nil {
			return s, fmt.Errorf("reserve amounts: %w", err)
		}
		return o.WithHeldAmounts(held), nil
	}
	var family chainwatch.Family
	if o.NeedsBitcoinAddress {
		if family = svc.bitcoinFamily(s.IsLive); family == nil {
			return s, fmt.Errorf("no Bitcoin network of the session's environment is configured")
		}
	}
	// Both indexes in one trip, taken together or not at all.
	taken, err := svc.Store.Chains().TakeIndexes(ctx, s.ProjectID, s.IsLive, o.NeedsDepositAddress, o.NeedsBitcoinAddress)
	if err != nil {
		return s, svc.missingKey(err, s.IsLive)
	}
	var a payment.SessionAddresses
	if o.NeedsDepositAddress {
		if a.Deposit, a.DepositIndex, err = svc.depositAddress(ctx, s.ProjectID, s.IsLive, taken.DepositKey, taken.DepositIndex); err != nil {
			return s, err
		}
	}
	if o.NeedsBitcoinAddress {
		addr, err := family.DeriveAddress(taken.BitcoinKey, taken.BitcoinAddressType, uint32(taken.BitcoinIndex))
		if err != nil {
			return s, fmt.Errorf("bitcoin key of %s: %w", s.ProjectID, err)
		}
		a.Bitcoin, a.BitcoinIndex = addr, &taken.BitcoinIndex
	}
	return o.WithAddresses(a), nil
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
func (svc Service) walletAccountOnly(a payment.Asset) bool {
	c := svc.Chains[a.Network]
	return a.Native() && !a.Bitcoin() && c != nil && !c.Network.TraceInternalTransfers
}

// OpenSession records a session with its workflow's pending start, in one
// database transaction, and starts the workflow in the background
// (package sessionstart; docs/decisions.md, "Opening a session"). Once it
// returns, the session is readable and its workflow will run: a start
// that fails is made by a worker's sweep, or by the first call that needs
// the workflow. Opening the same session again (a retry) records and
// starts nothing new.
func (svc Service) OpenSession(ctx context.Context, s payment.Session, planTitle string, settings workflows.SessionSettings) error {
	return svc.Starts.Open(ctx, workflows.CheckoutSessionInput{Session: s, Settings: settings}, planTitle)
}

// SessionWorkflow makes sure a session's workflow runs or ran before a
// call that needs it: a pending start is made now.
func (svc Service) SessionWorkflow(ctx context.Context, id string) error {
	if err := svc.Starts.Ensure(ctx, id); err != nil {
		return fmt.Errorf("%w (%v)", &payment.Error{Kind: payment.KindUnavailable,
			Message: "The checkout session's workflow could not be started; retry shortly"}, err)
	}
	return nil
}

// SessionByToken returns the session a token opens.
func (svc Service) SessionByToken(ctx context.Context, token string) (SessionView, error) {
	if !payment.ValidSessionToken(token) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	s, err := svc.Store.Checkout().SessionByTokenHash(ctx, payment.HashSecret(token))
	if errors.Is(err, payment.ErrNotFound) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	if err != nil {
		return SessionView{}, fmt.Errorf("load session: %w", err)
	}
	plan, err := svc.Store.Checkout().PlanByID(ctx, s.PaymentPlanID)
	if err != nil {
		return SessionView{}, fmt.Errorf("load plan: %w", err)
	}
	return svc.withTransactions(ctx, SessionView{Session: s, Token: token, Plan: &plan})
}

// GetSession returns one of the principal's sessions.
func (svc Service) GetSession(ctx context.Context, p payment.Principal, projectID, id string) (SessionView, error) {
	if err := core.OwnsID(p, projectID, payment.PrefixSession, id, "Checkout session"); err != nil {
		return SessionView{}, err
	}
	s, err := svc.Store.Checkout().GetSession(ctx, p, id)
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
	if v.Refunds, err = svc.Store.MoneyOut().SessionRefunds(ctx, id); err != nil {
		return v, fmt.Errorf("load refunds: %w", err)
	}
	if v.Refunds == nil {
		v.Refunds = []payment.Refund{}
	}
	return v, nil
}

func (svc Service) withTransactions(ctx context.Context, v SessionView) (SessionView, error) {
	txs, err := svc.Store.Payments().SessionTransactions(ctx, v.Session.ID)
	if err != nil {
		return v, fmt.Errorf("load transactions: %w", err)
	}
	v.Transactions = txs
	return v, nil
}

// ListDepositAddresses lists the principal's used deposit addresses in
// derivation order, for the merchant's wallet to find every payment.
func (svc Service) ListDepositAddresses(ctx context.Context, p payment.Principal, projectID string, q payment.DepositQuery) (core.Page[payment.DepositAddress], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[payment.DepositAddress]{}, err
	}
	items, total, err := svc.Store.Chains().ListDepositAddresses(ctx, p, q)
	return core.Page[payment.DepositAddress]{Items: items, Total: total, Query: q.ListQuery}, err
}

// ListSessions lists the principal's sessions (without their transactions).
func (svc Service) ListSessions(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (core.Page[SessionView], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[SessionView]{}, err
	}
	items, total, err := svc.Store.Checkout().ListSessions(ctx, p, q)
	views := make([]SessionView, len(items))
	for i, s := range items {
		views[i] = SessionView{Session: s}
	}
	return core.Page[SessionView]{Items: views, Total: total, Query: q}, err
}

// CancelSession cancels an open session: its workflow refuses unless the
// session is still open (no payment seen).
func (svc Service) CancelSession(ctx context.Context, p payment.Principal, projectID, id string) (SessionView, error) {
	if _, err := svc.GetSession(ctx, p, projectID, id); err != nil {
		return SessionView{}, err
	}
	if err := svc.SessionWorkflow(ctx, id); err != nil {
		return SessionView{}, err
	}
	// The workflow records the cancelation and this entry in one
	// transaction.
	entry := svc.AuditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditSessionCanceled, "checkout_session", id, nil)
	err := svc.Update(ctx, "cancel session", "", workflows.CancelSessionUpdateOptions(id, workflows.CancelRequest{Audit: &entry}), nil)
	if errors.Is(err, core.ErrWorkflowEnded) {
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
func (svc Service) ResolveSession(ctx context.Context, p payment.Principal, projectID, id string, r payment.Resolution) (SessionView, error) {
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
	if err := svc.SessionWorkflow(ctx, id); err != nil {
		return SessionView{}, err
	}
	// While the workflow runs, it records the resolution and this entry in
	// one transaction.
	entry := svc.AuditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditSessionResolved, "checkout_session", id, map[string]any{"resolution": r})
	in := workflows.ResolveInput{SessionID: id, Resolution: r, At: svc.Now(), Audit: &entry}
	err := svc.Update(ctx, "resolve session", "", workflows.ResolveExceptionUpdateOptions(in), nil)
	if errors.Is(err, core.ErrWorkflowEnded) {
		// The workflow has ended: nothing else changes the session now.
		err = svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditSessionResolved, "checkout_session", id, map[string]any{"resolution": r},
			func(ctx context.Context) error {
				var refused error
				err := svc.Store.Checkout().UpdateSession(ctx, id, in.At, func(s *payment.Session) []payment.EventType {
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
