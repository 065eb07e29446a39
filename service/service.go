// Package service holds the engine's operations: one function per thing a
// merchant or a customer can do. The REST and Connect transports both call
// these, so each operation has one implementation. Reads go to Postgres;
// commands go to Temporal, whose workflows own every state change.
package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/go-webauthn/webauthn/webauthn"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/auth/oauth"
	"github.com/paymentsd/paymentsd/internal/sessionstart"
	"github.com/paymentsd/paymentsd/internal/views"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/workflows"
)

// Deps are what the service runs on.
type Deps struct {
	Store    *store.Store
	Temporal client.Client
	Catalog  payment.Catalog
	Chains   chainwatch.Chains
	Sealer   *webhook.Sealer
	// SessionLifetime is how long a checkout session stays open; zero is
	// payment.DefaultSessionLifetime.
	SessionLifetime time.Duration
	// MaxOpenHolds bounds the holds on a shared recipient: sessions of one
	// plan holding amounts at once, and base units asked above the plan's
	// amount (RECIPIENT_MAX_OPEN_HOLDS); zero is
	// payment.DefaultMaxOpenHolds.
	MaxOpenHolds int
	// Now is the clock; nil is the wall clock.
	Now func() time.Time
}

// Service is the engine's service layer: every operation a merchant, a
// customer or an operator can ask for, whatever the transport. Its
// dependencies are its own; the transports see only its operations.
type Service struct {
	store           *store.Store
	temporal        client.Client
	catalog         payment.Catalog
	chains          chainwatch.Chains
	sealer          *webhook.Sealer
	sessionLifetime time.Duration
	maxOpenHolds    int
	clock           func() time.Time
	starts          *sessionstart.Starter

	authCache sync.Map // key hash -> cachedPrincipal
	// webauthn is the relying party of passkeys (SetRelyingParty); nil:
	// passkeys are off.
	webauthn *webauthn.WebAuthn
	// oauth is the authorization server of third-party applications.
	oauth *oauth.Provider
}

// New returns the service over d.
func New(d Deps) *Service {
	svc := &Service{store: d.Store, temporal: d.Temporal, catalog: d.Catalog, chains: d.Chains, sealer: d.Sealer,
		sessionLifetime: d.SessionLifetime, maxOpenHolds: d.MaxOpenHolds, clock: d.Now, starts: sessionstart.New(d.Store, d.Temporal)}
	if svc.maxOpenHolds <= 0 {
		svc.maxOpenHolds = payment.DefaultMaxOpenHolds
	}
	if d.Store != nil {
		svc.oauth = oauth.New(d.Store.Pool())
	}
	return svc
}

// now is the clock at the database's precision, so that a record returned
// on creation reads the same as when it is fetched later.
func (svc *Service) now() time.Time {
	now := time.Now
	if svc.clock != nil {
		now = svc.clock
	}
	return now().UTC().Truncate(time.Microsecond)
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T
	Total int
	Query payment.ListQuery
}

// CreatedProject is a new project with its API keys, shown only once.
type CreatedProject struct {
	Project    payment.Project
	LiveKey    string
	SandboxKey string
}

// CreateProject creates a project with one live and one sandbox API key.
func (svc *Service) CreateProject(ctx context.Context, name string) (CreatedProject, error) {
	var probs payment.Problems
	if name == "" || len(name) > payment.MaxTitleLength {
		probs.Addf("name", "must be 1 to %d characters", payment.MaxTitleLength)
	}
	if err := probs.Err(); err != nil {
		return CreatedProject{}, err
	}
	now := svc.now()
	p := payment.Project{ID: payment.NewID(payment.PrefixProject, now), Name: name, CompleteOn: payment.TxFinalized,
		LatePaymentWindow: 24 * time.Hour, CreatedAt: now, UpdatedAt: now}
	live, liveKey := newAPIKey(true, now)
	test, testKey := newAPIKey(false, now)
	if err := svc.store.CreateProject(ctx, p, []store.APIKey{live, test}); err != nil {
		return CreatedProject{}, fmt.Errorf("create project: %w", err)
	}
	return CreatedProject{Project: p, LiveKey: liveKey, SandboxKey: testKey}, nil
}

// API key prefixes: the environment is part of the key.
const (
	LiveKeyPrefix    = "svc_live_"
	SandboxKeyPrefix = "svc_test_"
)

func newAPIKey(isLive bool, now time.Time) (store.APIKey, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	prefix := SandboxKeyPrefix
	if isLive {
		prefix = LiveKeyPrefix
	}
	secret := prefix + base64.RawURLEncoding.EncodeToString(b)
	return store.APIKey{ID: payment.NewID(payment.PrefixAPIKey, now), IsLive: isLive,
		Hash: payment.HashSecret(secret), Hint: secret[:len(prefix)+4] + "…" + secret[len(secret)-4:], CreatedAt: now}, secret
}

// AuthCacheTTL is how long a verified API key is trusted without asking
// the database again: the lookup would otherwise double the database work
// of every read. A revoked key keeps working for at most this long.
const AuthCacheTTL = 30 * time.Second

type cachedPrincipal struct {
	principal payment.Principal
	until     time.Time
}

// Authenticate resolves an API key to the principal it acts for.
func (svc *Service) Authenticate(ctx context.Context, key string) (payment.Principal, error) {
	hash := payment.HashSecret(key)
	if c, ok := svc.authCache.Load(hash); ok && time.Now().Before(c.(cachedPrincipal).until) {
		return c.(cachedPrincipal).principal, nil
	}
	k, err := svc.store.APIKeyByHash(ctx, hash)
	if errors.Is(err, payment.ErrNotFound) {
		return payment.Principal{}, payment.ErrUnauthorized
	}
	if err != nil {
		return payment.Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p := payment.Principal{ProjectID: k.ProjectID, IsLive: k.IsLive, KeyID: k.ID}
	// Its last use, for the key list, kept to the minute; a verification
	// happens at most once per AuthCacheTTL per process.
	if err := svc.store.TouchAPIKey(ctx, k.ID, svc.now()); err != nil {
		slog.WarnContext(ctx, "api key: last use not recorded", "key", k.ID, "err", err)
	}
	// Only verified keys are cached, so unknown keys cannot grow the cache.
	svc.authCache.Store(hash, cachedPrincipal{p, time.Now().Add(AuthCacheTTL)})
	return p, nil
}

// forgetKey drops a key from this process's cache of verified keys, so
// that its revocation takes effect here at once (elsewhere within
// AuthCacheTTL).
func (svc *Service) forgetKey(keyID string) {
	svc.authCache.Range(func(hash, c any) bool {
		if c.(cachedPrincipal).principal.KeyID == keyID {
			svc.authCache.Delete(hash)
		}
		return true
	})
}

// GetProject returns the principal's project; another project is not found.
func (svc *Service) GetProject(ctx context.Context, p payment.Principal, id string) (payment.Project, error) {
	if err := owns(p, id); err != nil {
		return payment.Project{}, err
	}
	return svc.store.GetProject(ctx, id)
}

// Assets lists the deployment's asset definitions.
func (svc *Service) Assets() []payment.Asset { return svc.catalog.Assets }

// ExplorerTxURL is a transaction's page on its network's block explorer,
// "" when the network has none.
func (svc *Service) ExplorerTxURL(network, hash string) string {
	if c, ok := svc.chains[network]; ok {
		return c.Network.TxURL(hash)
	}
	return ""
}

// Catalog returns the deployment's asset catalog.
func (svc *Service) Catalog() payment.Catalog { return svc.catalog }

// CreatePlan validates and records a payment plan.
func (svc *Service) CreatePlan(ctx context.Context, p payment.Principal, projectID string, in payment.PlanInput) (payment.Plan, error) {
	if err := owns(p, projectID); err != nil {
		return payment.Plan{}, err
	}
	now := svc.now()
	plan, err := payment.NewPlan(in, p.ProjectID, p.IsLive, svc.catalog, now)
	if err != nil {
		return plan, err
	}
	if plan.SharedRecipient() {
		if err := svc.ownsRecipient(ctx, plan, "recipientAddress"); err != nil {
			return plan, err
		}
	}
	plan.ID = payment.NewID(payment.PrefixPlan, now)
	plan.CreatedAt, plan.UpdatedAt = now, now
	if err := svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditPlanCreated, "payment_plan", plan.ID, map[string]any{"title": plan.Title},
		func(ctx context.Context) error { return svc.store.CreatePlan(ctx, plan, renderPlan) }); err != nil {
		return plan, fmt.Errorf("create plan: %w", err)
	}
	return plan, nil
}

// GetPlan returns one of the principal's plans.
func (svc *Service) GetPlan(ctx context.Context, p payment.Principal, projectID, id string) (payment.Plan, error) {
	if err := ownsID(p, projectID, payment.PrefixPlan, id, "Payment plan"); err != nil {
		return payment.Plan{}, err
	}
	plan, err := svc.store.GetPlan(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return plan, payment.NotFound("Payment plan")
	}
	return plan, err
}

// ListPlans lists the principal's plans.
func (svc *Service) ListPlans(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[payment.Plan], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.Plan]{}, err
	}
	items, total, err := svc.store.ListPlans(ctx, p, q)
	return Page[payment.Plan]{items, total, q}, err
}

// GetTransaction returns one of the principal's transactions.
func (svc *Service) GetTransaction(ctx context.Context, p payment.Principal, projectID, id string) (payment.Transaction, error) {
	if err := ownsID(p, projectID, payment.PrefixTx, id, "Transaction"); err != nil {
		return payment.Transaction{}, err
	}
	t, err := svc.store.GetTransaction(ctx, p, id)
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
func (svc *Service) AssignTransaction(ctx context.Context, p payment.Principal, projectID, id, sessionID string) (payment.Transaction, error) {
	t, err := svc.GetTransaction(ctx, p, projectID, id)
	if err != nil {
		return t, err
	}
	if sessionID == "" {
		var probs payment.Problems
		probs.Add("checkoutSessionId", "is required")
		return t, probs.Err()
	}
	v, err := svc.GetSession(ctx, p, projectID, sessionID)
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
	if err := svc.sessionWorkflow(ctx, sessionID); err != nil {
		return t, err
	}
	in := workflows.AssignInput{TransactionID: id, SessionID: sessionID, At: svc.now()}
	// The workflow records the assignment and this entry in one
	// transaction; its details name the session the transfer was sent to
	// once the record is read.
	entry := svc.auditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditTransactionAssigned, "transaction", id, map[string]any{
		"checkoutSessionId": sessionID, "addressSessionId": t.CheckoutSessionID})
	in.Audit = &entry
	h, err := svc.temporal.UpdateWorkflow(ctx, workflows.AssignTransferUpdateOptions(in))
	if err == nil {
		err = h.Get(ctx, &t)
	}
	var gone *serviceerror.NotFound
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &gone):
		project, err := svc.store.GetProject(ctx, p.ProjectID)
		if err != nil {
			return t, fmt.Errorf("load project: %w", err)
		}
		// The records alone change: with their audit entry, in one
		// transaction.
		err = svc.store.InTx(ctx, func(ctx context.Context) (err error) {
			t, err = svc.store.AssignTransaction(ctx, id, sessionID, in.At, views.TransactionEvent,
				func(s *payment.Session, txs []payment.Transaction) []payment.EventType {
					return s.Progress(endedSettlement(*s, txs, project))
				}, views.SessionEvent)
			if err != nil {
				return err
			}
			return svc.auditIn(ctx, p.ProjectID, p.IsLive, payment.AuditTransactionAssigned, "transaction", id, map[string]any{
				"checkoutSessionId": sessionID, "addressSessionId": t.CheckoutSessionID})
		})
		return t, err
	case auditRefused(err):
		return t, fmt.Errorf("assign transaction: %w", err)
	case errors.As(err, &app):
		return t, payment.Conflict(app.Message())
	case isUnknownUpdate(err):
		return t, payment.Conflict(olderWorkflow)
	case err != nil:
		return t, fmt.Errorf("assign transaction: %w", err)
	}
	return t, nil
}

// olderWorkflow answers a change that a session's workflow, started by an
// earlier release, does not take while it runs.
const olderWorkflow = "This checkout session's workflow was started by an earlier release and does not take this change while it runs; make it once the session has ended"

// auditRefused tells whether a session's workflow refused a change because
// the database refused its audit entry (the change is not made either).
func auditRefused(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == workflows.ErrorAuditRefused
}

// isUnknownUpdate tells whether a workflow refused an update it has no
// handler for.
func isUnknownUpdate(err error) bool {
	return err != nil && strings.Contains(err.Error(), "unknown update")
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
func (svc *Service) ListTransactions(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[payment.Transaction], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.Transaction]{}, err
	}
	items, total, err := svc.store.ListTransactions(ctx, p, q)
	return Page[payment.Transaction]{items, total, q}, err
}

// SessionView is a checkout session with its transactions and, when the
// caller holds it, its token.
type SessionView struct {
	Session      payment.Session
	Token        string
	Transactions []payment.Transaction
	// Plan is set for the customer's lookup by token: the hosted page
	// shows its title, merchant and redirect.
	Plan *payment.Plan
}

// CreateSession opens a checkout session for a plan. It needs no
// credentials: the plan decides the project and the environment. A
// merchant's server that sends its API key (key, else nil) may use only the
// plans of that key's project and environment; another's is "no payment
// plan has this ID", as an unknown one. The session row and its workflow
// are created together: the workflow records the row in its first
// activity, and this call returns once that is done.
func (svc *Service) CreateSession(ctx context.Context, key *payment.Principal, in payment.SessionInput) (SessionView, error) {
	metadata, err := payment.CheckSessionInput(in)
	if err != nil {
		return SessionView{}, err
	}
	plan, err := svc.store.PlanByID(ctx, *in.PaymentPlanID)
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
	project, err := svc.store.GetProject(ctx, plan.ProjectID)
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
func (svc *Service) quotedOptions(ctx context.Context, plan payment.Plan, due decimal.Decimal, s *payment.Session) error {
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
	// The derivation index is taken last, once nothing can refuse the
	// session: a refused request leaves no unused address behind, which a
	// wallet scanning up to a gap limit could stop at.
	if err := svc.depositAddress(ctx, s); err != nil {
		return err
	}
	for _, q := range quotes {
		o := payment.Quote(q.asset, due, q.rate, s.DepositAddress)
		o.WalletAccountOnly = svc.walletAccountOnly(q.asset)
		s.PaymentOptions = append(s.PaymentOptions, o)
	}
	return nil
}

// walletAccountOnly tells whether a payment in the asset is seen only when
// sent from a wallet account: the native coin of a network whose nodes do
// not trace internal transfers.
func (svc *Service) walletAccountOnly(a payment.Asset) bool {
	c := svc.chains[a.Network]
	return a.Native() && c != nil && !c.Network.TraceInternalTransfers
}

// OpenSession records a session with its workflow's pending start, in one
// database transaction, and starts the workflow in the background
// (package sessionstart; docs/decisions.md, "Opening a session"). Once it
// returns, the session is readable and its workflow will run: a start
// that fails is made by a worker's sweep, or by the first call that needs
// the workflow. Opening the same session again (a retry) records and
// starts nothing new.
func (svc *Service) OpenSession(ctx context.Context, s payment.Session, planTitle string, settings workflows.SessionSettings) error {
	return svc.starts.Open(ctx, workflows.CheckoutSessionInput{Session: s, Settings: settings}, planTitle)
}

// sessionWorkflow makes sure a session's workflow runs or ran before a
// call that needs it: a pending start is made now.
func (svc *Service) sessionWorkflow(ctx context.Context, id string) error {
	if err := svc.starts.Ensure(ctx, id); err != nil {
		return fmt.Errorf("%w (%v)", &payment.Error{Kind: payment.KindUnavailable,
			Message: "The checkout session's workflow could not be started; retry shortly"}, err)
	}
	return nil
}

// SessionByToken returns the session a token opens.
func (svc *Service) SessionByToken(ctx context.Context, token string) (SessionView, error) {
	if !payment.ValidSessionToken(token) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	s, err := svc.store.SessionByTokenHash(ctx, payment.HashSecret(token))
	if errors.Is(err, payment.ErrNotFound) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	if err != nil {
		return SessionView{}, fmt.Errorf("load session: %w", err)
	}
	plan, err := svc.store.PlanByID(ctx, s.PaymentPlanID)
	if err != nil {
		return SessionView{}, fmt.Errorf("load plan: %w", err)
	}
	return svc.withTransactions(ctx, SessionView{Session: s, Token: token, Plan: &plan})
}

// GetSession returns one of the principal's sessions.
func (svc *Service) GetSession(ctx context.Context, p payment.Principal, projectID, id string) (SessionView, error) {
	if err := ownsID(p, projectID, payment.PrefixSession, id, "Checkout session"); err != nil {
		return SessionView{}, err
	}
	s, err := svc.store.GetSession(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	if err != nil {
		return SessionView{}, err
	}
	return svc.withTransactions(ctx, SessionView{Session: s})
}

func (svc *Service) withTransactions(ctx context.Context, v SessionView) (SessionView, error) {
	txs, err := svc.store.SessionTransactions(ctx, v.Session.ID)
	if err != nil {
		return v, fmt.Errorf("load transactions: %w", err)
	}
	v.Transactions = txs
	return v, nil
}

// ListDepositAddresses lists the principal's used deposit addresses in
// derivation order, for the merchant's wallet to find every payment.
func (svc *Service) ListDepositAddresses(ctx context.Context, p payment.Principal, projectID string, q payment.DepositQuery) (Page[payment.DepositAddress], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.DepositAddress]{}, err
	}
	items, total, err := svc.store.ListDepositAddresses(ctx, p, q)
	return Page[payment.DepositAddress]{items, total, q.ListQuery}, err
}

// ListSessions lists the principal's sessions (without their transactions).
func (svc *Service) ListSessions(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[SessionView], error) {
	if err := owns(p, projectID); err != nil {
		return Page[SessionView]{}, err
	}
	items, total, err := svc.store.ListSessions(ctx, p, q)
	views := make([]SessionView, len(items))
	for i, s := range items {
		views[i] = SessionView{Session: s}
	}
	return Page[SessionView]{views, total, q}, err
}

func renderPlan(p payment.Plan, v int) ([]byte, error) { return views.Versioned(views.PlanOf(p), v) }

// UpdatePlan changes a plan's title, redirect URL, merchant info or expiry.
func (svc *Service) UpdatePlan(ctx context.Context, p payment.Principal, projectID, id string, in payment.PlanInput) (payment.Plan, error) {
	if _, err := svc.GetPlan(ctx, p, projectID, id); err != nil {
		return payment.Plan{}, err
	}
	now := svc.now()
	var plan payment.Plan
	err := svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditPlanUpdated, "payment_plan", id, map[string]any{"fields": planFields(in)},
		func(ctx context.Context) (err error) {
			plan, err = svc.store.UpdatePlan(ctx, p, id, now, func(plan *payment.Plan) (payment.EventType, error) {
				if plan.Status == payment.PlanArchived {
					return "", payment.Conflict("An archived payment plan cannot change")
				}
				return payment.EventPlanUpdated, payment.ChangePlan(plan, in, now)
			}, renderPlan)
			return err
		})
	return plan, err
}

// planFields names the fields a plan update sets, for its audit entry.
func planFields(in payment.PlanInput) []string {
	fields := []string{}
	for name, set := range map[string]bool{"title": in.Title != nil, "redirectUrl": in.RedirectURL != nil,
		"merchantInfo": in.MerchantInfo != nil, "expiresAt": in.ExpiresAt != nil, "amountUsd": in.AmountUSD != nil,
		"acceptedAssetPolicies": in.AcceptedAssetPolicies != nil} {
		if set {
			fields = append(fields, name)
		}
	}
	slices.Sort(fields)
	return fields
}

// ArchivePlan archives a plan: it starts no more sessions; open sessions
// go on.
func (svc *Service) ArchivePlan(ctx context.Context, p payment.Principal, projectID, id string) (payment.Plan, error) {
	if _, err := svc.GetPlan(ctx, p, projectID, id); err != nil {
		return payment.Plan{}, err
	}
	var plan payment.Plan
	err := svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditPlanArchived, "payment_plan", id, nil, func(ctx context.Context) (err error) {
		plan, err = svc.store.UpdatePlan(ctx, p, id, svc.now(), func(plan *payment.Plan) (payment.EventType, error) {
			if plan.Status == payment.PlanArchived {
				return "", payment.Conflict("The payment plan is archived already")
			}
			plan.Status = payment.PlanArchived
			return payment.EventPlanArchived, nil
		}, renderPlan)
		return err
	})
	return plan, err
}

// CancelSession cancels an open session: its workflow refuses unless the
// session is still open (no payment seen).
func (svc *Service) CancelSession(ctx context.Context, p payment.Principal, projectID, id string) (SessionView, error) {
	if _, err := svc.GetSession(ctx, p, projectID, id); err != nil {
		return SessionView{}, err
	}
	if err := svc.sessionWorkflow(ctx, id); err != nil {
		return SessionView{}, err
	}
	// The workflow records the cancelation and this entry in one
	// transaction.
	entry := svc.auditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditSessionCanceled, "checkout_session", id, nil)
	h, err := svc.temporal.UpdateWorkflow(ctx, workflows.CancelSessionUpdateOptions(id, workflows.CancelRequest{Audit: &entry}))
	if err == nil {
		err = h.Get(ctx, nil)
	}
	var gone *serviceerror.NotFound
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &gone):
		return SessionView{}, payment.Conflict("Only an open session can be canceled")
	case auditRefused(err):
		return SessionView{}, fmt.Errorf("cancel session: %w", err)
	case errors.As(err, &app):
		return SessionView{}, payment.Conflict(app.Message())
	case err != nil:
		return SessionView{}, fmt.Errorf("cancel session: %w", err)
	}
	return svc.GetSession(ctx, p, projectID, id)
}

// ResolveSession records a merchant's resolution of a session's exception
// (payment.Resolution). While the session's workflow runs, the workflow
// records it, so that it settles later payment changes around it; once the
// workflow has ended, the records alone change.
func (svc *Service) ResolveSession(ctx context.Context, p payment.Principal, projectID, id string, r payment.Resolution) (SessionView, error) {
	if _, err := svc.GetSession(ctx, p, projectID, id); err != nil {
		return SessionView{}, err
	}
	if !r.Valid() {
		var probs payment.Problems
		if r == "" {
			probs.Add("resolution", "is required: underpayment_accepted or overpayment_settled")
		} else {
			probs.Add("resolution", "must be underpayment_accepted or overpayment_settled")
		}
		return SessionView{}, probs.Err()
	}
	if err := svc.sessionWorkflow(ctx, id); err != nil {
		return SessionView{}, err
	}
	// While the workflow runs, it records the resolution and this entry in
	// one transaction.
	entry := svc.auditEntry(ctx, p.ProjectID, p.IsLive, payment.AuditSessionResolved, "checkout_session", id, map[string]any{"resolution": r})
	in := workflows.ResolveInput{SessionID: id, Resolution: r, At: svc.now(), Audit: &entry}
	h, err := svc.temporal.UpdateWorkflow(ctx, workflows.ResolveExceptionUpdateOptions(in))
	if err == nil {
		err = h.Get(ctx, nil)
	}
	var gone *serviceerror.NotFound
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &gone):
		// The workflow has ended: nothing else changes the session now.
		err = svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditSessionResolved, "checkout_session", id, map[string]any{"resolution": r},
			func(ctx context.Context) error {
				var refused error
				err := svc.store.UpdateSession(ctx, id, in.At, func(s *payment.Session) []payment.EventType {
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
	case auditRefused(err):
		return SessionView{}, fmt.Errorf("resolve session: %w", err)
	case errors.As(err, &app):
		return SessionView{}, payment.Conflict(app.Message())
	case isUnknownUpdate(err):
		return SessionView{}, payment.Conflict(olderWorkflow)
	case err != nil:
		return SessionView{}, fmt.Errorf("resolve session: %w", err)
	}
	return svc.GetSession(ctx, p, projectID, id)
}
