package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// counting is a project with a plan, for tests that write transactions and
// sessions and compare the lists' totals with the rows.
type counting struct {
	t       *testing.T
	s       *store.Store
	project string
	plan    string
	now     time.Time
	mu      sync.Mutex
	serial  int
}

func newCounting(t *testing.T, s *store.Store) *counting {
	t.Helper()
	ctx := context.Background()
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	amount := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pr.ProjectID, Title: "T",
		PricingModel: payment.PricingFixedUSD, AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := s.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	return &counting{t: t, s: s, project: pr.ProjectID, plan: plan.ID, now: now}
}

// next returns a number no other call returns, for unique hashes and
// addresses.
func (c *counting) next() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.serial++
	return c.serial
}

// session records a session of the environment in status, with a deposit
// address of its own.
func (c *counting) session(isLive bool, status payment.SessionStatus) (payment.Session, error) {
	n := c.next()
	at := c.now.Add(time.Duration(n) * time.Millisecond)
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, at), TokenHash: payment.HashSecret(fmt.Sprint("token", n)),
		ProjectID: c.project, PaymentPlanID: c.plan, IsLive: isLive, Status: status, AmountUSD: decimal.NewFromInt(10),
		DepositAddress: fmt.Sprintf("0x%040x", n), ExpiresAt: at.Add(time.Hour), QuoteExpiresAt: at.Add(time.Hour), CreatedAt: at}
	return cs, c.s.Checkout().InsertSession(context.Background(), cs, renderJSON[payment.Session])
}

func renderJSON[T any](_ T, version int) ([]byte, error) {
	return []byte(fmt.Sprintf(`{"version":%d}`, version)), nil
}

// transaction returns a pending transaction of a session, not recorded.
func (c *counting) transaction(cs payment.Session) payment.Transaction {
	n := c.next()
	at := c.now.Add(time.Duration(n) * time.Millisecond)
	return payment.Transaction{ID: payment.NewID(payment.PrefixTx, at), ProjectID: c.project, CheckoutSessionID: cs.ID,
		PaymentPlanID: c.plan, IsLive: cs.IsLive, Status: payment.TxPending, Network: "devnet", ChainID: 1337,
		TxHash: fmt.Sprintf("0x%064x", n), ToAddress: cs.DepositAddress, AssetDefinitionID: "usdc-devnet", Symbol: "USDC",
		Amount: "1", AmountBaseUnits: "1000000", AmountUSD: decimal.NewFromInt(1), Version: 1,
		StatusHistory: []payment.StatusChange{{Status: payment.TxPending, At: at}}, CreatedAt: at, UpdatedAt: at}
}

// sync records an observation of a transaction through SyncTransaction,
// deciding as chainwatch's activity does (payment.MatchTransfers).
func (c *counting) sync(obs payment.Observation, isLive bool) error {
	obs.Network, obs.ChainID, obs.At = "devnet", 1337, c.now
	_, err := c.s.Payments().SyncTransaction(context.Background(), obs.Network, obs.ChainID, obs.TxHash, obs.Transfers, isLive,
		func(rows []payment.Transaction, to payment.Recipients) []payment.TxChange {
			changes, _ := payment.MatchTransfers(rows, obs, to, func() string {
				return payment.NewID(payment.PrefixTx, c.now.Add(time.Duration(c.next())*time.Millisecond))
			})
			return changes
		}, renderJSON[payment.Transaction])
	return err
}

// payments writes the records of a few payments to an open session
// through every write path the engine has: a payer's claim, chainwatch's
// transfers (one to a session that no longer takes payments: unexpected),
// a reorg back to pending, the transaction mined again at other log
// indexes and finalized or reverted, and the confirmation workflow's
// status changes of a transaction it recorded.
func (c *counting) payments(round int, isLive bool) error {
	ctx := context.Background()
	open, err := c.session(isLive, payment.SessionOpen)
	if err != nil {
		return err
	}
	expired, err := c.session(isLive, payment.SessionExpired)
	if err != nil {
		return err
	}
	hash := c.transaction(open).TxHash
	claim := payment.Claim(open, "devnet", 1337, hash, payment.NewID(payment.PrefixTx, c.now), c.now)
	for range 2 { // the second finds the first
		if _, err := c.s.Payments().RecordClaim(ctx, claim, renderJSON[payment.Transaction]); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
	}
	block := int64(100 + round)
	transfers := func(shift int) []payment.Transfer {
		return []payment.Transfer{
			{LogIndex: shift, From: "0xpayer", To: open.DepositAddress, AssetID: "usdc-devnet", AmountBaseUnits: "1000000"},
			{LogIndex: shift + 1, From: "0xpayer", To: expired.DepositAddress, AssetID: "usdc-devnet", AmountBaseUnits: "2000000"},
			{LogIndex: shift + 2, From: "0xpayer", To: open.DepositAddress, AssetID: "usdc-devnet", AmountBaseUnits: "3000000"},
		}
	}
	mined := payment.Observation{TxHash: hash, Status: payment.TxConfirmed, Mined: true, Succeeded: true,
		BlockNumber: &block, BlockHash: "0xaa", Confirmations: 1, RequiredConfirmations: 3, Transfers: transfers(0)}
	if err := c.sync(mined, isLive); err != nil {
		return fmt.Errorf("sync mined: %w", err)
	}
	reorg := payment.Observation{TxHash: hash, Status: payment.TxPending, Reason: "block left the chain"}
	if err := c.sync(reorg, isLive); err != nil {
		return fmt.Errorf("sync reorg: %w", err)
	}
	switch round % 3 {
	case 0: // mined again, elsewhere in the block, and final
		again := mined
		again.Status, again.Transfers, again.Confirmations = payment.TxFinalized, transfers(5), 3
		if err := c.sync(again, isLive); err != nil {
			return fmt.Errorf("sync finalized: %w", err)
		}
	case 1: // mined again, reverted
		again := payment.Observation{TxHash: hash, Status: payment.TxFailed, Reason: "reverted", Mined: true, BlockNumber: &block}
		if err := c.sync(again, isLive); err != nil {
			return fmt.Errorf("sync reverted: %w", err)
		}
	}

	// A transaction its workflow records and moves on, each change recorded
	// twice as a retried activity would.
	tx := c.transaction(open)
	if _, err := c.s.Payments().RecordTransaction(ctx, tx, renderJSON[payment.Transaction]); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	path := [][]payment.TransactionStatus{
		{payment.TxPending, payment.TxConfirmed, payment.TxPending, payment.TxConfirmed, payment.TxFinalized},
		{payment.TxPending, payment.TxFailed},
		{payment.TxPending, payment.TxConfirmed},
	}[round%3]
	for i := 1; i < len(path); i++ {
		change := store.TxChange{From: path[i-1], To: path[i], At: c.now, Version: i + 1, Reason: "test",
			EventType: payment.TransactionEvent(path[i-1], path[i])}
		for range 2 {
			if err := c.s.Payments().AdvanceTransaction(ctx, tx.ID, change, renderJSON[payment.Transaction]); err != nil {
				return fmt.Errorf("advance %s to %s: %w", path[i-1], path[i], err)
			}
		}
	}
	plain := c.transaction(open)
	for range 2 {
		if err := c.s.Payments().InsertTransaction(ctx, plain); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
	}

	// The open session moves on; another is canceled.
	progress := func(cs *payment.Session) []payment.EventType {
		return cs.Progress(payment.SessionProgress{Status: payment.SessionProcessing, PaidUSD: decimal.NewFromInt(1)})
	}
	if err := c.s.Checkout().UpdateSession(ctx, open.ID, c.now, progress, renderJSON[payment.Session]); err != nil {
		return err
	}
	if round%2 == 0 {
		done := func(cs *payment.Session) []payment.EventType {
			return cs.Progress(payment.SessionProgress{Status: payment.SessionCompleted, PaidUSD: decimal.NewFromInt(10), CompletedAt: &c.now})
		}
		if err := c.s.Checkout().UpdateSession(ctx, open.ID, c.now, done, renderJSON[payment.Session]); err != nil {
			return err
		}
	}
	other, err := c.session(isLive, payment.SessionOpen)
	if err != nil {
		return err
	}
	if round%3 == 0 {
		return c.s.Checkout().UpdateSession(ctx, other.ID, c.now, (*payment.Session).Cancel, renderJSON[payment.Session])
	}
	return nil
}

// checkTotals compares every total the counts serve (each environment, each
// status and none) with a count of the rows, and returns the rows counted
// per table and status, both environments together.
func (c *counting) checkTotals() map[string]int {
	t := c.t
	t.Helper()
	ctx := context.Background()
	seen := map[string]int{}
	lists := []struct {
		table    string
		statuses []string
		list     func(payment.Principal, payment.ListQuery) (int, error)
	}{
		{"transactions", []string{"pending", "confirmed", "finalized", "failed"}, func(p payment.Principal, q payment.ListQuery) (int, error) {
			_, n, err := c.s.Payments().ListTransactions(ctx, p, q)
			return n, err
		}},
		{"checkout_sessions", []string{"open", "processing", "completed", "expired", "canceled"}, func(p payment.Principal, q payment.ListQuery) (int, error) {
			_, n, err := c.s.Checkout().ListSessions(ctx, p, q)
			return n, err
		}},
	}
	for _, l := range lists {
		for _, isLive := range []bool{false, true} {
			p := payment.Principal{ProjectID: c.project, IsLive: isLive}
			for _, status := range append([]string{""}, l.statuses...) {
				var want int
				err := c.s.Pool().QueryRow(ctx, `SELECT count(*) FROM `+l.table+`
					WHERE project_id = $1 AND is_live = $2 AND ($3 = '' OR status = $3)`, c.project, isLive, status).Scan(&want)
				if err != nil {
					t.Fatal(err)
				}
				got, err := l.list(p, payment.ListQuery{Page: 1, Limit: 1, Status: status})
				if err != nil || got != want {
					t.Errorf("%s of live=%v, status %q: total %d, %v; the rows number %d", l.table, isLive, status, got, err, want)
				}
				if status != "" {
					seen[l.table+"/"+status] += want
				}
				other := !isLive
				if n, err := l.list(p, payment.ListQuery{Page: 1, Limit: 1, Status: status, IsLive: &other}); err != nil || n != 0 {
					t.Errorf("%s of live=%v asking for live=%v: total %d, %v; want 0", l.table, isLive, other, n, err)
				}
				// A date range is counted, and counts the same rows.
				from := c.now.Add(-time.Hour)
				if n, err := l.list(p, payment.ListQuery{Page: 1, Limit: 1, Status: status, From: &from}); err != nil || n != want {
					t.Errorf("%s of live=%v, status %q, from an hour ago: total %d, %v; want %d", l.table, isLive, status, n, err, want)
				}
			}
		}
	}
	return seen
}

// The totals of the transaction and session lists come from counts the
// database keeps with the rows: they stay exact through every way the
// engine writes those rows, from concurrent writers, in both environments.
func TestListTotalsFollowEveryWrite(t *testing.T) {
	s := storetest.NewStore(t)
	c := newCounting(t, s)
	c.checkTotals()

	const writers, rounds = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				if err := c.payments(w*rounds+r, w%3 == 2); err != nil {
					errs <- fmt.Errorf("writer %d, round %d: %w", w, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := c.checkTotals()
	for _, k := range []string{"transactions/pending", "transactions/confirmed", "transactions/finalized", "transactions/failed",
		"checkout_sessions/open", "checkout_sessions/processing", "checkout_sessions/completed", "checkout_sessions/expired",
		"checkout_sessions/canceled"} {
		if seen[k] == 0 {
			t.Errorf("no rows in %s: the writes did not reach every status", k)
		}
	}
	var unexpected int
	if err := s.Pool().QueryRow(context.Background(), `SELECT count(*) FROM transactions WHERE unexpected`).Scan(&unexpected); err != nil || unexpected == 0 {
		t.Errorf("unexpected transfers recorded: %d, %v; want some", unexpected, err)
	}

	// Rows removed by hand (an operator's cleanup) leave the counts.
	ctx := context.Background()
	if _, err := s.Pool().Exec(ctx, `DELETE FROM transactions WHERE status = 'failed'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE checkout_sessions SET is_live = NOT is_live WHERE status = 'canceled'`); err != nil {
		t.Fatal(err)
	}
	if seen := c.checkTotals(); seen["transactions/failed"] != 0 {
		t.Fatalf("failed transactions left: %d", seen["transactions/failed"])
	}
	if _, err := s.Pool().Exec(ctx, `TRUNCATE transactions`); err != nil {
		t.Fatal(err)
	}
	c.checkTotals()
}

// Migration 00009 counts the rows recorded before it: a database upgraded
// with transactions and sessions in it lists them with the right totals,
// which then follow new writes; migrating down and up again recounts.
func TestCountsMigrationCountsExistingRows(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewEmptyDB(t)
	_, p := storetest.Migrations(t, url)
	if _, err := p.UpTo(ctx, 8); err != nil {
		t.Fatal(err)
	}
	// The migrations after 00009 add what today's code writes: they go
	// first, so that the rows 00009 finds are written as today's code
	// writes them.
	for _, src := range p.ListSources() {
		if src.Version > 9 {
			if _, err := p.ApplyVersion(ctx, src.Version, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newCounting(t, s)
	for r := range 3 {
		if err := c.payments(r, r == 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	before := c.checkTotals()
	if before["transactions/finalized"] == 0 || before["checkout_sessions/completed"] == 0 {
		t.Fatalf("rows before the migration: %v; want finalized transactions and completed sessions", before)
	}
	if err := c.payments(3, false); err != nil {
		t.Fatal(err)
	}
	c.checkTotals()

	if _, err := p.ApplyVersion(ctx, 9, false); err != nil {
		t.Fatal(err)
	}
	if err := c.payments(4, true); err != nil { // no counts kept meanwhile
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	c.checkTotals()
}
