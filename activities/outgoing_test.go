package activities_test

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/testsuite"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// outgoingFixture is a dev chain, a store and the activities over both,
// with a short bound for a transaction to be mined.
type outgoingFixture struct {
	chain *devchain.Chain
	store *store.Store
	env   *testsuite.TestActivityEnvironment
}

func newOutgoingFixture(t *testing.T) outgoingFixture {
	t.Helper()
	ctx := context.Background()
	c, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	st, env := activityEnv(t, connect(t, c), time.Minute)
	return outgoingFixture{chain: c, store: st, env: env}
}

// activityEnv registers the activities over a new test store and chains
// in an activity environment.
func activityEnv(t *testing.T, chains chainwatch.Chains, staleAfter time.Duration) (*store.Store, *testsuite.TestActivityEnvironment) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	st := storetest.NewStore(t)
	(&activities.Activities{Store: st, Chains: chains, StaleAfter: staleAfter}).Register(env)
	return st, env
}

// recordProject records a project named name, created at now, and
// returns its id.
func recordProject(t *testing.T, st *store.Store, name string, now time.Time) string {
	t.Helper()
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(context.Background(), payment.Project{ID: pid, Name: name, CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	return pid
}

// recordPlan records a plan of the project pid asking amount USD, created
// at now.
func recordPlan(t *testing.T, st *store.Store, pid, title string, amount decimal.Decimal, now time.Time) payment.Plan {
	t.Helper()
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: pid, Title: title,
		PricingModel: payment.PricingFixedUSD, AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := st.Checkout().CreatePlan(context.Background(), plan, nil); err != nil {
		t.Fatal(err)
	}
	return plan
}

// approvedPayout records a project with an approved batch of one payout
// of amount USDC base units from `from` to `to`, and returns the payout.
func (f outgoingFixture) approvedPayout(t *testing.T, name string, from, to common.Address, amount int64) payment.Payout {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := recordProject(t, f.store, name, now)
	units := payment.UnitsToAmount(big.NewInt(amount).String(), 6)
	b, payouts, err := payment.NewPayoutBatch(payment.PayoutBatchInput{FromAddress: ptr(from.Hex()), Lines: []payment.PayoutLine{{
		Label: "line 2", Address: ptr(to.Hex()), AssetDefinitionID: ptr("usdc-devnet"), Amount: ptr(units)}}},
		payment.Catalog{Assets: []payment.Asset{usdc}}, false, "usr_test", now)
	if err != nil {
		t.Fatal(err)
	}
	b.ID, b.ProjectID = payment.NewID(payment.PrefixPayoutBatch, now), pid
	payouts[0].ID, payouts[0].BatchID, payouts[0].ProjectID = payment.NewID(payment.PrefixPayout, now), b.ID, pid
	if err := f.store.MoneyOut().CreatePayoutBatch(ctx, payment.BatchRecord{Batch: b, Payouts: payouts}, views.BatchEvent); err != nil {
		t.Fatal(err)
	}
	rec, err := f.store.MoneyOut().UpdatePayoutBatch(ctx, payment.Principal{ProjectID: pid}, b.ID,
		func(b *payment.PayoutBatch, ps []payment.Payout) (payment.EventType, error) {
			return payment.EventPayoutBatchApproved, payment.ApprovePayoutBatch(b, ps, "usr_test", now)
		}, views.BatchEvent)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Payouts[0]
}

// report records hash as the payout's transaction, as the API does.
func (f outgoingFixture) report(t *testing.T, p payment.Payout, hash common.Hash) {
	t.Helper()
	_, err := f.store.MoneyOut().UpdatePayout(context.Background(), &payment.Principal{ProjectID: p.ProjectID}, p.ID,
		func(po *payment.Payout) (payment.EventType, error) {
			return payment.ReportPayoutSent(po, hash.Hex(), time.Now().UTC())
		},
		views.PayoutEvent, views.BatchEvent)
	if err != nil {
		t.Fatal(err)
	}
}

// transfer sends amount USDC base units from `from` to `to` and mines it.
func (f outgoingFixture) transfer(t *testing.T, from devchain.Account, to common.Address, amount int64) common.Hash {
	t.Helper()
	ctx := context.Background()
	h, err := f.chain.TransferToken(ctx, from, to, big.NewInt(amount))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.chain.Mine(ctx, h); err != nil {
		t.Fatal(err)
	}
	return h
}

// follow runs one look of the payout's workflow.
func (f outgoingFixture) follow(t *testing.T, id string) workflows.FollowOutgoingOutput {
	t.Helper()
	return followOnce(t, f.env, id)
}

// followOnce runs one look of an outgoing item's workflow in env.
func followOnce(t *testing.T, env *testsuite.TestActivityEnvironment, id string) workflows.FollowOutgoingOutput {
	t.Helper()
	v, err := env.ExecuteActivity(workflows.ActivityFollowOutgoing, workflows.FollowOutgoingInput{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out workflows.FollowOutgoingOutput
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f outgoingFixture) payout(t *testing.T, id string) payment.Payout {
	t.Helper()
	p, err := f.store.MoneyOut().PayoutByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ptr[T any](v T) *T { return &v }

// One on-chain transfer pays one outgoing item, whichever project's: a
// second project's payout alike (same source, payee and amount) reported
// with the same hash is rejected, says which item the transfer counts
// for, and waits for its signature again; a transaction its source did
// not send is rejected too.
func TestOneTransferPaysOneOutgoingItemWhateverTheProject(t *testing.T) {
	f := newOutgoingFixture(t)
	treasury, payee := f.chain.Accounts[1], common.HexToAddress("0x00000000000000000000000000000000000b0b01")
	mine := f.approvedPayout(t, "Treasury's own", treasury.Address, payee, 1_500_000)
	theirs := f.approvedPayout(t, "Second merchant", treasury.Address, payee, 1_500_000)

	h := f.transfer(t, treasury, payee, 1_500_000)
	f.report(t, mine, h)
	f.report(t, theirs, h)
	if out := f.follow(t, mine.ID); out.Status != payment.RefundFinalized && out.Status != payment.RefundConfirmed {
		t.Fatalf("the first payout of the transfer: %+v", out)
	}
	out := f.follow(t, theirs.ID)
	got := f.payout(t, theirs.ID)
	if out.Ended || out.Wait < time.Hour || got.Status != payment.RefundAwaitingSignature || got.TxHash != "" ||
		!strings.Contains(got.FailureReason, "counted for "+mine.ID) {
		t.Fatalf("a second project's payout took the same transfer: %+v %+v", out, got)
	}
	if n := events(t, f.store, theirs.ProjectID)[payment.EventPayoutRejected]; n != 1 {
		t.Fatalf("%d payout.transaction_rejected events, want 1", n)
	}

	// A transaction another address sent (the payee's amount, from
	// someone else) is not the payout's.
	stranger := f.approvedPayout(t, "Stranger", treasury.Address, common.HexToAddress("0x00000000000000000000000000000000000b0b02"), 7)
	other := f.transfer(t, f.chain.Accounts[2], common.HexToAddress("0x00000000000000000000000000000000000b0b02"), 7)
	f.report(t, stranger, other)
	f.follow(t, stranger.ID)
	if got := f.payout(t, stranger.ID); got.Status != payment.RefundAwaitingSignature || !strings.Contains(got.FailureReason, "was not sent from") {
		t.Fatalf("a transaction its source did not send: %+v", got)
	}
}

// A payout's workflow starts at its batch's approval and waits for its
// transaction, looking a day apart (a report, the scan's spotting and a
// cancel wake it): the approval records the pending start the worker's
// sweep makes. A payout canceled before it was sent ends its workflow.
func TestAnApprovedPayoutIsFollowedFromItsApproval(t *testing.T) {
	f := newOutgoingFixture(t)
	ctx := context.Background()
	treasury, payee := f.chain.Accounts[1], common.HexToAddress("0x00000000000000000000000000000000000b0b05")
	p := f.approvedPayout(t, "Waiting", treasury.Address, payee, 1_000_000)
	var pending int
	if err := f.store.Pool().QueryRow(ctx, `SELECT count(*) FROM outgoing_follows WHERE item_id = $1`, p.ID).Scan(&pending); err != nil ||
		pending != 1 {
		t.Fatalf("the approval recorded %d pending starts of the payout's workflow (%v), want 1", pending, err)
	}
	if out := f.follow(t, p.ID); out.Ended || out.Status != payment.RefundAwaitingSignature || out.Wait < time.Hour {
		t.Fatalf("an approved payout not sent yet: %+v; want its workflow waiting for its transaction", out)
	}
	if _, err := f.store.MoneyOut().UpdatePayout(ctx, &payment.Principal{ProjectID: p.ProjectID}, p.ID,
		func(po *payment.Payout) (payment.EventType, error) {
			return payment.EventPayoutCanceled, payment.CancelPayout(po, time.Now().UTC())
		}, views.PayoutEvent, views.BatchEvent); err != nil {
		t.Fatal(err)
	}
	if out := f.follow(t, p.ID); !out.Ended || out.Status != payment.RefundCanceled {
		t.Fatalf("a payout canceled before it was sent: %+v; want its workflow ended", out)
	}
}

// A reported hash that is never mined makes its payout stale once the
// bound passes, with its event; the workflow keeps looking, slowly. A
// replacement reported then is followed.
func TestAHashNeverMinedGoesStale(t *testing.T) {
	f := newOutgoingFixture(t)
	ctx := context.Background()
	treasury, payee := f.chain.Accounts[1], common.HexToAddress("0x00000000000000000000000000000000000b0b03")
	p := f.approvedPayout(t, "Stuck", treasury.Address, payee, 2_000_000)
	f.report(t, p, common.HexToHash("0x"+strings.Repeat("5e", 32)))
	if out := f.follow(t, p.ID); out.Status != payment.RefundSent || out.Ended {
		t.Fatalf("a fresh unmined hash: %+v", out)
	}
	// Sent longer ago than the bound.
	if _, err := f.store.Pool().Exec(ctx, `UPDATE payouts SET sent_at = now() - interval '2 minutes' WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	out := f.follow(t, p.ID)
	if out.Status != payment.RefundStale || out.Ended || out.Wait < time.Minute {
		t.Fatalf("past the bound: %+v", out)
	}
	if n := events(t, f.store, p.ProjectID)[payment.EventPayoutStale]; n != 1 {
		t.Fatalf("%d payout.stale events, want 1", n)
	}
	h := f.transfer(t, treasury, payee, 2_000_000)
	f.report(t, f.payout(t, p.ID), h)
	if out := f.follow(t, p.ID); out.Status != payment.RefundConfirmed && out.Status != payment.RefundFinalized {
		t.Fatalf("the replacement: %+v", out)
	}
}

// A payout whose reported transaction is never mined (a wallet replaced
// it at the same nonce, at a higher fee) is followed through the
// replacement the scan sees paying the same transfer from the treasury,
// unreported: it takes the replacement's hash and is followed to the end.
func TestAReplacementSeenByTheScanIsFollowed(t *testing.T) {
	f := newOutgoingFixture(t)
	ctx := context.Background()
	treasury, payee := f.chain.Accounts[1], common.HexToAddress("0x00000000000000000000000000000000000b0b04")
	p := f.approvedPayout(t, "Sped up", treasury.Address, payee, 3_000_000)
	f.report(t, p, common.HexToHash("0x"+strings.Repeat("7a", 32))) // never mined
	before, err := f.chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := f.transfer(t, treasury, payee, 3_000_000)
	in := workflows.ScanInput{Network: "devnet", Cursor: workflows.ScanCursor{Number: before.Number.Uint64(), Hash: before.Hash().Hex()}}
	if _, err := f.env.ExecuteActivity(workflows.ActivityScanNetwork, in); err != nil {
		t.Fatal(err)
	}
	got := f.payout(t, p.ID)
	if got.Status != payment.RefundSent || !strings.EqualFold(got.TxHash, h.Hex()) {
		t.Fatalf("the payout after the scan saw its replacement: %+v", got.Outgoing)
	}
	if out := f.follow(t, p.ID); out.Status != payment.RefundConfirmed && out.Status != payment.RefundFinalized {
		t.Fatalf("the replacement followed: %+v", out)
	}
}

// A stale payout's own transaction mined after all (held by a node, then
// broadcast) is seen by the scan, which has the payout's workflow woken
// at once (a pending follow due now) rather than at its next slow look;
// the look then moves it on.
func TestAStaleItemsTransactionSeenMinedWakesItsWorkflow(t *testing.T) {
	f := newOutgoingFixture(t)
	ctx := context.Background()
	treasury, payee := f.chain.Accounts[1], common.HexToAddress("0x00000000000000000000000000000000000b0b06")
	p := f.approvedPayout(t, "Held, then mined", treasury.Address, payee, 2_500_000)
	held, err := f.chain.SignTransact(ctx, treasury, f.chain.Token, nil, bindings.NewDevUSDC().PackTransfer(payee, big.NewInt(2_500_000)))
	if err != nil {
		t.Fatal(err)
	}
	f.report(t, p, held.Hash())
	if _, err := f.store.Pool().Exec(ctx, `UPDATE payouts SET sent_at = now() - interval '2 minutes' WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if out := f.follow(t, p.ID); out.Status != payment.RefundStale || out.Wait < time.Minute {
		t.Fatalf("past the bound: %+v", out)
	}
	if _, err := f.store.Pool().Exec(ctx, `DELETE FROM outgoing_follows WHERE item_id = $1`, p.ID); err != nil { // its workflow runs
		t.Fatal(err)
	}

	before, err := f.chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.chain.SendSigned(ctx, held); err != nil {
		t.Fatal(err)
	}
	if _, err := f.chain.Mine(ctx, held.Hash()); err != nil {
		t.Fatal(err)
	}
	in := workflows.ScanInput{Network: "devnet", Cursor: workflows.ScanCursor{Number: before.Number.Uint64(), Hash: before.Hash().Hex()}}
	if _, err := f.env.ExecuteActivity(workflows.ActivityScanNetwork, in); err != nil {
		t.Fatal(err)
	}
	var due int
	if err := f.store.Pool().QueryRow(ctx, `SELECT count(*) FROM outgoing_follows WHERE item_id = $1 AND due_at <= now()`, p.ID).Scan(&due); err != nil ||
		due != 1 {
		t.Fatalf("the scan saw the stale payout's transaction mined: %d follows due now (%v), want 1 to wake its workflow", due, err)
	}
	if out := f.follow(t, p.ID); out.Status != payment.RefundConfirmed && out.Status != payment.RefundFinalized {
		t.Fatalf("the look the wake makes: %+v", out)
	}
}
