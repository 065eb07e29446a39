// Package seed fills a database with one project's checkout sessions and
// transactions at scale, for the benchmarks of docs/performance.md ("Data
// at scale") and for whoever wants to look at a big project: the command
// is tests/bench/cmd/seed, the benchmarks call Seed directly.
//
// The rows are written with COPY, one statement per table, so the triggers
// that keep list_counts see them as the engine's own inserts would be seen,
// and every index is maintained as it is in production. What a row holds is
// what the engine writes: IDs of the engine's form, distinct created_at,
// unique (chain_id, tx_hash, log_index), a deposit address and derivation
// index per session, statuses cycling with their timestamps and history.
// Values that are random in production (IDs' entropy, deposit addresses,
// tokens, hashes) are derived from the row's number, so a benchmark can
// name any row without reading it back (Layout).
package seed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
)

// Asset is the asset the seeded plan accepts: a dev-network USDC pegged to
// the dollar, so sessions are quoted without a chain.
var Asset = payment.Asset{ID: "usdc-devnet", Symbol: "USDC", Name: "USD Coin", Decimals: 6, Network: "devnet",
	ChainID: 1337, TokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
	Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}

// Catalog is the catalog the service given to Seed must have.
var Catalog = payment.Catalog{Assets: []payment.Asset{Asset}}

// DefaultOpen is how many of the newest sessions are left open and unpaid.
const DefaultOpen = 1000

// Options says what to seed.
type Options struct {
	// Sessions and Transactions are the rows to write; with transactions
	// and no session, one session is written to hold them.
	Sessions, Transactions int
	// Open is how many of the newest sessions are open and unpaid
	// (DefaultOpen when negative), at most a tenth of the sessions: the
	// others are paid by one transaction each, the newest first, while
	// there are transactions, and expired or canceled after that; one in
	// a hundred was canceled before its transfer came, which is recorded
	// as unexpected.
	Open int
	// Events writes each session's and transaction's events as the
	// engine records them (a paid session has six), with the data it
	// renders; they are the largest part of a real database.
	Events bool
	// Now is the creation time of the newest session; zero: now.
	Now time.Time
	// Log, when set, reports progress.
	Log func(format string, args ...any)
}

// Result is what was seeded.
type Result struct {
	Layout
	ProjectID, PlanID string
	// SandboxKey is an API key of the project's sandbox, where every
	// seeded row is.
	SandboxKey string
	Events     int64
	Took       time.Duration
}

// Layout places the seeded rows: session i (0 is the newest) was created
// Base less i seconds; transaction k pays session Open+k (wrapping over the
// sessions not left open when there are more transactions), 20 seconds
// after it was created.
type Layout struct {
	Base                        time.Time
	Sessions, Transactions      int
	Open                        int
	LatePaymentWindow, Lifetime time.Duration
}

// SessionCreated is when session i was created.
func (l Layout) SessionCreated(i int) time.Time { return l.Base.Add(-time.Duration(i) * time.Second) }

// SessionID is session i's ID.
func (l Layout) SessionID(i int) string {
	return id(payment.PrefixSession, l.SessionCreated(i), "session", i)
}

// TxSession is the session transaction k pays.
func (l Layout) TxSession(k int) int {
	paid := max(1, l.Sessions-l.Open)
	return min(l.Open+k%paid, l.Sessions-1)
}

// Canceled tells whether session i was canceled: one in a hundred of
// those not left open. A transfer to its address is recorded as unexpected.
func (l Layout) Canceled(i int) bool { return i >= l.Open && i%100 == 50 }

// TxCreated is when transaction k was recorded: distinct for every k.
func (l Layout) TxCreated(k int) time.Time {
	round := k / max(1, l.Sessions-l.Open)
	return l.SessionCreated(l.TxSession(k)).Add(20*time.Second + time.Duration(round)*time.Millisecond)
}

// TransactionID is transaction k's ID.
func (l Layout) TransactionID(k int) string {
	return id(payment.PrefixTx, l.TxCreated(k), "transaction", k)
}

// DepositAddress is session i's deposit address: derived from i, spread
// over the address space as derived keys are.
func DepositAddress(i int) string { return common.BytesToAddress(digest("deposit", i)[:20]).Hex() }

// payerAddress is the address transaction k was sent from.
func payerAddress(k int) string { return common.BytesToAddress(digest("payer", k)[:20]).Hex() }

func digest(kind string, i int) []byte {
	h := sha256.New()
	h.Write([]byte(kind))
	_ = binary.Write(h, binary.BigEndian, int64(i))
	return h.Sum(nil)
}

// id is an ID of the engine's form (payment.NewID) whose entropy is
// derived from the row's kind and number.
func id(prefix string, at time.Time, kind string, i int) string {
	var u ulid.ULID
	if err := u.SetTime(ulid.Timestamp(at)); err != nil {
		panic(err)
	}
	copy(u[6:], digest(kind, i))
	return prefix + strings.ToLower(u.String())
}

// Seed creates a project with a plan and a sandbox deposit key in the
// database st opens, and writes o's sessions and transactions to it, then
// vacuums and analyzes the tables as autovacuum leaves them. The database
// must hold no session and no transaction: a second run is refused, so
// that no figure is ever read from a database seeded twice. svc must be a
// service over st with Catalog.
func Seed(ctx context.Context, svc *service.Service, st *store.Store, o Options) (Result, error) {
	started := time.Now()
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	pool := st.Pool()
	var sessions, transactions int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM (SELECT 1 FROM checkout_sessions LIMIT 1) s),
		(SELECT count(*) FROM (SELECT 1 FROM transactions LIMIT 1) t)`).Scan(&sessions, &transactions); err != nil {
		return Result{}, err
	}
	if sessions > 0 || transactions > 0 {
		return Result{}, fmt.Errorf("the database already holds checkout sessions or transactions: " +
			"seed a fresh, empty one (createdb, then pass its URL)")
	}
	if o.Sessions < 0 || o.Transactions < 0 {
		return Result{}, fmt.Errorf("negative counts: %d sessions, %d transactions", o.Sessions, o.Transactions)
	}
	if o.Sessions == 0 && o.Transactions > 0 {
		o.Sessions = 1
	}
	if o.Open < 0 {
		o.Open = DefaultOpen
	}
	o.Open = min(o.Open, o.Sessions/10)
	if o.Now.IsZero() {
		o.Now = time.Now()
	}

	p, err := svc.Checkout().CreateProject(ctx, "Scale")
	if err != nil {
		return Result{}, fmt.Errorf("create project: %w", err)
	}
	pr := payment.Principal{ProjectID: p.Project.ID, IsLive: false}
	title, usd, policy := "Scale", "10", "asset_definition"
	plan, err := svc.Checkout().CreatePlan(ctx, pr, p.Project.ID, payment.PlanInput{Title: &title, AmountUSD: &usd,
		AcceptedAssetPolicies: []payment.PolicyInput{{PolicyType: &policy, AssetDefinitionID: &Asset.ID}}})
	if err != nil {
		return Result{}, fmt.Errorf("create plan: %w", err)
	}
	_, xpub, err := keys.NewDevKey([]byte("paymentsd scale seed deposit key"))
	if err != nil {
		return Result{}, err
	}
	if err := svc.Checkout().SetDepositKey(ctx, p.Project.ID, false, xpub); err != nil {
		return Result{}, fmt.Errorf("set deposit key: %w", err)
	}
	l := Layout{Base: o.Now.UTC().Truncate(time.Second), Sessions: o.Sessions, Transactions: o.Transactions, Open: o.Open,
		LatePaymentWindow: p.Project.LatePaymentWindow, Lifetime: payment.DefaultSessionLifetime}
	res := Result{Layout: l, ProjectID: p.Project.ID, PlanID: plan.ID, SandboxKey: p.SandboxKey}
	w := writer{l: l, projectID: p.Project.ID, planID: plan.ID}

	n, err := pool.CopyFrom(ctx, pgx.Identifier{"checkout_sessions"}, sessionCopyColumns, &rows{n: l.Sessions, row: w.sessionRow})
	if err != nil {
		return res, fmt.Errorf("copy sessions: %w", err)
	}
	logf("%d sessions copied (%s)", n, time.Since(started).Round(time.Second))
	// The next session the API opens takes the next derivation index.
	if _, err := pool.Exec(ctx, `UPDATE project_deposit_keys SET next_index = $3 WHERE project_id = $1 AND is_live = $2`,
		p.Project.ID, false, l.Sessions); err != nil {
		return res, err
	}
	n, err = pool.CopyFrom(ctx, pgx.Identifier{"transactions"}, txCopyColumns, &rows{n: l.Transactions, row: w.txRow})
	if err != nil {
		return res, fmt.Errorf("copy transactions: %w", err)
	}
	logf("%d transactions copied (%s)", n, time.Since(started).Round(time.Second))
	tables := "checkout_sessions, transactions, list_counts, project_deposit_keys"
	if o.Events {
		ev := &eventRows{w: &w}
		if res.Events, err = pool.CopyFrom(ctx, pgx.Identifier{"events"}, eventCopyColumns, ev); err != nil {
			return res, fmt.Errorf("copy events: %w", err)
		}
		logf("%d events copied (%s)", res.Events, time.Since(started).Round(time.Second))
		tables += ", events"
	}
	// Tables that have settled: statistics for the planner and a
	// visibility map, as autovacuum leaves them in production.
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+tables); err != nil {
		return res, fmt.Errorf("vacuum: %w", err)
	}
	logf("vacuumed and analyzed (%s)", time.Since(started).Round(time.Second))
	if err := check(ctx, pool, res); err != nil {
		return res, err
	}
	res.Took = time.Since(started)
	return res, nil
}

// check compares the totals the API reads (list_counts) with what was
// written.
func check(ctx context.Context, pool *pgxpool.Pool, r Result) error {
	for kind, want := range map[string]int{"checkout_sessions": r.Sessions, "transactions": r.Transactions} {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT coalesce(sum(n), 0)::bigint FROM list_counts WHERE kind = $1 AND project_id = $2 AND NOT is_live`,
			kind, r.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n != int64(want) {
			return fmt.Errorf("list_counts holds %d %s, %d were written", n, kind, want)
		}
	}
	return nil
}

// rows is a pgx.CopyFromSource of n rows made one at a time: nothing of
// the table is held in memory.
type rows struct {
	n, i int
	row  func(i int) ([]any, error)
	cur  []any
	err  error
}

func (r *rows) Next() bool {
	if r.err != nil || r.i >= r.n {
		return false
	}
	r.cur, r.err = r.row(r.i)
	r.i++
	return r.err == nil
}
func (r *rows) Values() ([]any, error) { return r.cur, r.err }
func (r *rows) Err() error             { return r.err }

// writer makes the rows of one seeded project.
type writer struct {
	l                 Layout
	projectID, planID string
}

var sessionCopyColumns = []string{"id", "token_hash", "project_id", "payment_plan_id", "is_live", "status", "email",
	"metadata", "amount_usd", "amount_paid_usd", "deposit_address", "payment_options", "quote_expires_at", "expires_at",
	"completed_at", "exception", "created_at", "updated_at", "deposit_index", "late_until", "version", "resolution",
	"shared_recipient"}

// txStatusOf is the status a session's one transaction leaves it in.
var sessionStatusOf = map[payment.TransactionStatus]payment.SessionStatus{
	payment.TxPending: payment.SessionProcessing, payment.TxConfirmed: payment.SessionProcessing,
	payment.TxFinalized: payment.SessionCompleted, payment.TxFailed: payment.SessionExpired,
}

// session is session i as the engine leaves it, with the event types of
// its changes after its creation.
func (w *writer) session(i int) (payment.Session, []payment.EventType) {
	l := w.l
	at := l.SessionCreated(i)
	index := int64(l.Sessions - 1 - i) // derivation indexes follow creation
	amount := decimal.NewFromInt(10)
	address := DepositAddress(i)
	s := payment.Session{
		ID: l.SessionID(i), TokenHash: payment.HashSecret(fmt.Sprintf("seed session token %d", i)),
		ProjectID: w.projectID, PaymentPlanID: w.planID, Status: payment.SessionOpen,
		Metadata:  json.RawMessage(fmt.Sprintf(`{"orderId":"order-%d"}`, i)),
		AmountUSD: amount, AmountPaidUSD: decimal.Zero, DepositAddress: address,
		PaymentOptions: []payment.PaymentOption{payment.Quote(Asset, amount, decimal.NewFromInt(1), address)},
		QuoteExpiresAt: at.Add(l.Lifetime), ExpiresAt: at.Add(l.Lifetime), DepositIndex: &index,
		CreatedAt: at, UpdatedAt: at, Version: 1,
	}
	s.LateUntil = s.ExpiresAt.Add(l.LatePaymentWindow)
	if i%3 == 0 {
		s.Email = fmt.Sprintf("buyer%d@example.com", i)
	}
	var events []payment.EventType
	k := i - l.Open // the transaction that pays it
	switch {
	case i < l.Open:
	case l.Canceled(i):
		s.Status, s.UpdatedAt = payment.SessionCanceled, at.Add(time.Minute)
		events = []payment.EventType{payment.EventSessionCanceled}
	case k < l.Transactions:
		tx := w.tx(k)
		s.Status = sessionStatusOf[tx.Status]
		s.UpdatedAt = tx.UpdatedAt
		switch s.Status {
		case payment.SessionProcessing:
			events = []payment.EventType{payment.EventSessionProcessing}
		case payment.SessionCompleted:
			s.AmountPaidUSD, s.CompletedAt = amount, tx.FinalizedAt
			events = []payment.EventType{payment.EventSessionProcessing, payment.EventSessionCompleted}
		case payment.SessionExpired:
			s.UpdatedAt = s.ExpiresAt
			events = []payment.EventType{payment.EventSessionProcessing, payment.EventSessionExpired}
		}
	case i%2 == 0:
		s.Status, s.UpdatedAt = payment.SessionExpired, s.ExpiresAt
		events = []payment.EventType{payment.EventSessionExpired}
	default:
		s.Status, s.UpdatedAt = payment.SessionCanceled, at.Add(time.Minute)
		events = []payment.EventType{payment.EventSessionCanceled}
	}
	s.Version += len(events)
	return s, events
}

func (w *writer) sessionRow(i int) ([]any, error) {
	s, _ := w.session(i)
	options, err := json.Marshal(s.PaymentOptions)
	if err != nil {
		return nil, err
	}
	return []any{s.ID, s.TokenHash, s.ProjectID, s.PaymentPlanID, s.IsLive, string(s.Status), s.Email,
		string(s.Metadata), s.AmountUSD.String(), s.AmountPaidUSD.String(), s.DepositAddress, string(options),
		s.QuoteExpiresAt, s.ExpiresAt, s.CompletedAt, s.Exception, s.CreatedAt, s.UpdatedAt, *s.DepositIndex,
		s.LateUntil, int32(s.Version), string(s.Resolution), s.SharedRecipient}, nil
}

var txCopyColumns = []string{"id", "project_id", "checkout_session_id", "payment_plan_id", "is_live", "status", "network",
	"chain_id", "tx_hash", "log_index", "from_address", "to_address", "asset_definition_id", "symbol", "amount",
	"amount_base_units", "amount_usd", "block_number", "block_hash", "confirmations", "required_confirmations",
	"failure_reason", "status_history", "created_at", "updated_at", "confirmed_at", "finalized_at", "failed_at",
	"version", "unexpected"}

// tx is transaction k as the engine leaves it: its status cycles through
// pending, confirmed, finalized and failed.
func (w *writer) tx(k int) payment.Transaction {
	l := w.l
	at := l.TxCreated(k)
	session := l.TxSession(k)
	// Blocks of 2 seconds, numbered up to the newest transaction's.
	block := int64(50_000_000) - int64(l.Base.Sub(at)/(2*time.Second))
	t := payment.Transaction{
		ID: l.TransactionID(k), ProjectID: w.projectID, CheckoutSessionID: l.SessionID(session), PaymentPlanID: w.planID,
		Status: payment.TransactionStatuses[k%4], Network: Asset.Network, ChainID: Asset.ChainID,
		TxHash: "0x" + hex.EncodeToString(digest("tx", k)), LogIndex: k % 7, FromAddress: payerAddress(k),
		ToAddress: DepositAddress(session), AssetDefinitionID: Asset.ID, Symbol: Asset.Symbol, Amount: "10",
		AmountBaseUnits: "10000000", AmountUSD: decimal.NewFromInt(10), BlockNumber: &block, RequiredConfirmations: 12,
		StatusHistory: []payment.StatusChange{{Status: payment.TxPending, At: at}}, Version: 1,
		CreatedAt: at, UpdatedAt: at, Unexpected: l.Canceled(session),
	}
	switch t.Status {
	case payment.TxConfirmed, payment.TxFinalized:
		c := at.Add(12 * time.Second)
		t.ConfirmedAt, t.Confirmations, t.UpdatedAt, t.Version = &c, 3, c, 2
		t.BlockHash = "0x" + hex.EncodeToString(digest("block", int(block)))
		t.StatusHistory = append(t.StatusHistory, payment.StatusChange{Status: payment.TxConfirmed, At: c})
		if t.Status == payment.TxFinalized {
			f := at.Add(time.Minute)
			t.FinalizedAt, t.Confirmations, t.UpdatedAt, t.Version = &f, 12, f, 3
			t.StatusHistory = append(t.StatusHistory, payment.StatusChange{Status: payment.TxFinalized, At: f})
		}
	case payment.TxFailed:
		f := at.Add(30 * time.Second)
		t.FailedAt, t.FailureReason, t.UpdatedAt, t.Version = &f, "reverted", f, 2
		t.StatusHistory = append(t.StatusHistory, payment.StatusChange{Status: payment.TxFailed, At: f, Reason: t.FailureReason})
	}
	return t
}

func (w *writer) txRow(k int) ([]any, error) {
	t := w.tx(k)
	history, err := json.Marshal(t.StatusHistory)
	if err != nil {
		return nil, err
	}
	return []any{t.ID, t.ProjectID, t.CheckoutSessionID, t.PaymentPlanID, t.IsLive, string(t.Status), t.Network,
		t.ChainID, t.TxHash, int32(t.LogIndex), t.FromAddress, t.ToAddress, t.AssetDefinitionID, t.Symbol, t.Amount,
		t.AmountBaseUnits, t.AmountUSD.String(), *t.BlockNumber, t.BlockHash, int32(t.Confirmations),
		int32(t.RequiredConfirmations), t.FailureReason, string(history), t.CreatedAt, t.UpdatedAt, t.ConfirmedAt,
		t.FinalizedAt, t.FailedAt, int32(t.Version), t.Unexpected}, nil
}

var eventCopyColumns = []string{"id", "project_id", "is_live", "type", "object_id", "version", "data", "created_at",
	"dispatched_at"}

// eventRows are the events of every session, then of every transaction:
// one per version, each with the record's data as the engine renders it,
// dispatched.
type eventRows struct {
	w       *writer
	next    int // the next session, then transaction (past the sessions)
	pending [][]any
	cur     []any
	err     error
}

func (e *eventRows) Next() bool {
	for len(e.pending) == 0 {
		l := e.w.l
		if e.err != nil || e.next >= l.Sessions+l.Transactions {
			return false
		}
		if e.next < l.Sessions {
			e.pending, e.err = e.w.sessionEvents(e.next)
		} else {
			e.pending, e.err = e.w.txEvents(e.next - l.Sessions)
		}
		e.next++
	}
	e.cur, e.pending = e.pending[0], e.pending[1:]
	return true
}
func (e *eventRows) Values() ([]any, error) { return e.cur, e.err }
func (e *eventRows) Err() error             { return e.err }

func (w *writer) event(typ payment.EventType, objectID string, version int, data []byte, at time.Time) []any {
	return []any{id(payment.PrefixEvent, at, "event "+objectID, version), w.projectID, false, string(typ), objectID,
		int32(version), string(data), at, at}
}

func (w *writer) sessionEvents(i int) ([][]any, error) {
	s, changes := w.session(i)
	types := append([]payment.EventType{payment.EventSessionCreated}, changes...)
	out := make([][]any, len(types))
	for v, typ := range types {
		data, err := views.SessionEvent(s, v+1)
		if err != nil {
			return nil, err
		}
		at := s.CreatedAt
		if v > 0 {
			at = s.UpdatedAt
		}
		out[v] = w.event(typ, s.ID, v+1, data, at)
	}
	return out, nil
}

var txEventTypes = map[payment.TransactionStatus]payment.EventType{payment.TxPending: payment.EventTxPending,
	payment.TxConfirmed: payment.EventTxConfirmed, payment.TxFinalized: payment.EventTxFinalized, payment.TxFailed: payment.EventTxFailed}

func (w *writer) txEvents(k int) ([][]any, error) {
	t := w.tx(k)
	out := make([][]any, len(t.StatusHistory))
	for v, change := range t.StatusHistory {
		data, err := views.TransactionEvent(t, v+1)
		if err != nil {
			return nil, err
		}
		out[v] = w.event(txEventTypes[change.Status], t.ID, v+1, data, change.At)
	}
	return out, nil
}

// TableSize is the space a table takes with its indexes and TOAST.
type TableSize struct {
	Table string
	Bytes int64
}

// Tables are the tables Sizes reports: those a payment writes to.
var Tables = []string{"checkout_sessions", "transactions", "events", "list_counts", "session_starts"}

// Sizes returns the size of each of Tables (pg_total_relation_size) and,
// last, of the whole database ("database").
func Sizes(ctx context.Context, pool *pgxpool.Pool) ([]TableSize, error) {
	var out []TableSize
	for _, t := range Tables {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, t).Scan(&n); err != nil {
			return nil, fmt.Errorf("size of %s: %w", t, err)
		}
		out = append(out, TableSize{t, n})
	}
	var n int64
	if err := pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		return nil, err
	}
	return append(out, TableSize{"database", n}), nil
}
