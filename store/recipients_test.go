package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// ownRecipient makes a project the verified owner of an address.
func ownRecipient(t *testing.T, s *store.Store, projectID string, isLive bool, address string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	r, err := s.Checkout().ClaimRecipient(ctx, payment.Recipient{ProjectID: projectID, IsLive: isLive, Address: address,
		Challenge: "challenge " + address, ChallengeExpiresAt: now.Add(time.Minute), CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkout().VerifyRecipient(ctx, projectID, isLive, address, r.Challenge, "eip191", now); err != nil {
		t.Fatal(err)
	}
}

// One project owns a recipient per environment: another cannot claim or
// verify it, nor hold amounts on it; its holds opened before (none can be
// opened now) never take the owner's transfers; the owner's unmatched
// transfers are the owner's; a deposit address cannot be claimed; the
// holds of a plan are bounded in number and in the base units added.
func TestRecipientOwnership(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	a, b := newProject(t, s), newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	recipient := fmt.Sprintf("0x%040x", now.UnixNano()+7)
	claim := func(projectID string, isLive bool, address string) (payment.Recipient, error) {
		return s.Checkout().ClaimRecipient(ctx, payment.Recipient{ProjectID: projectID, IsLive: isLive, Address: address,
			Challenge: "c " + projectID, ChallengeExpiresAt: now.Add(time.Minute), CreatedAt: now})
	}
	// Both may claim before anyone verifies; the first to verify owns it.
	rb, err := claim(b.ProjectID, false, recipient)
	if err != nil {
		t.Fatal(err)
	}
	ownRecipient(t, s, a.ProjectID, false, recipient)
	if _, err := s.Checkout().VerifyRecipient(ctx, b.ProjectID, false, recipient, rb.Challenge, "eip191", now); !errors.Is(err, store.ErrRecipientOwned) {
		t.Fatalf("b verifies a's recipient: %v", err)
	}
	if _, err := claim(b.ProjectID, false, recipient); !errors.Is(err, store.ErrRecipientOwned) {
		t.Fatalf("b claims a's recipient: %v", err)
	}
	// Another environment is another owner's to claim.
	if _, err := claim(b.ProjectID, true, recipient); err != nil {
		t.Fatalf("b claims it in live: %v", err)
	}
	if yes, err := s.Checkout().IsVerifiedRecipient(ctx, recipient); err != nil || !yes {
		t.Fatalf("verified recipient: %v %v", yes, err)
	}

	plan := func(projectID string) payment.Plan {
		p := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: projectID, Title: "T", PricingModel: payment.PricingTokenAmount,
			RecipientAddress: recipient, Status: payment.PlanActive, CreatedAt: now}
		if err := s.Checkout().CreatePlan(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	render := func(payment.Session, int) ([]byte, error) { return []byte(`{}`), nil }
	session := func(p payment.Plan) payment.Session {
		at := now
		return payment.Session{ID: payment.NewID(payment.PrefixSession, at), TokenHash: payment.HashSecret(fmt.Sprint(time.Now().UnixNano())),
			ProjectID: p.ProjectID, PaymentPlanID: p.ID, Status: payment.SessionOpen, AmountUSD: decimal.RequireFromString("1"),
			DepositAddress: recipient, SharedRecipient: true, ExpiresAt: at.Add(15 * time.Minute), QuoteExpiresAt: at.Add(15 * time.Minute),
			LateUntil: at.Add(time.Hour), CreatedAt: at,
			PaymentOptions: []payment.PaymentOption{{AssetDefinitionID: "usdc-devnet", Network: "devnet", Decimals: 6, AmountBaseUnits: "1000000"}}}
	}
	reserve := func(cs payment.Session, maxOpen int) (string, error) {
		opts, err := s.Checkout().ReserveAmounts(ctx, cs, maxOpen)
		if err != nil {
			return "", err
		}
		cs.PaymentOptions = opts
		if err := s.Checkout().InsertSession(ctx, cs, render); err != nil {
			t.Fatal(err)
		}
		return opts[0].AmountBaseUnits, nil
	}
	planA, planB := plan(a.ProjectID), plan(b.ProjectID)
	if _, err := reserve(session(planB), 2); payment.KindOf(err) != payment.KindValidation {
		t.Fatalf("b holds an amount on a's recipient: %v", err)
	}
	// A hold of b's from before verification was required, on 1000000.
	legacy := session(planB)
	legacy.PaymentOptions[0].AmountBaseUnits = "1000000"
	if err := s.Checkout().InsertSession(ctx, legacy, render); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO amount_reservations (session_id, project_id, is_live, network, asset_id, recipient,
		amount_base_units, held_from, held_until, plan_id) VALUES ($1, $2, false, 'devnet', 'usdc-devnet', $3, 1000000, $4, $5, $6)`,
		legacy.ID, b.ProjectID, recipient, now, now.Add(time.Hour), planB.ID); err != nil {
		t.Fatal(err)
	}
	// a's holds: b's hold does not raise a's amounts.
	first := session(planA)
	x, err := reserve(first, 2)
	if err != nil || x != "1000000" {
		t.Fatalf("a's first hold: %s %v", x, err)
	}
	if y, err := reserve(session(planA), 2); err != nil || y != "1000001" {
		t.Fatalf("a's second hold: %s %v", y, err)
	}
	if _, err := reserve(session(planA), 2); !errors.Is(err, store.ErrTooManyHolds) || payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("a third open hold of a plan bounded at 2: %v", err)
	}
	// Another plan of a on the same amount: its first hold asks 2 units
	// more than the plan's amount, its second would ask 3, past the bound.
	other := plan(a.ProjectID)
	if z, err := reserve(session(other), 2); err != nil || z != "1000002" {
		t.Fatalf("another plan's first hold: %s %v", z, err)
	}
	if _, err := reserve(session(other), 2); !errors.Is(err, store.ErrTooManyHolds) {
		t.Fatalf("a hold past plan amount + bound: %v", err)
	}
	if err := s.Checkout().DeleteRecipient(ctx, a.ProjectID, false, recipient, now); !errors.Is(err, payment.ErrConflict) {
		t.Fatalf("removing a recipient with open holds: %v", err)
	}

	// Attribution: the amount both a's hold and b's legacy hold ask is
	// a's session's; an amount nobody holds is a's unmatched transfer.
	transfers := []payment.Transfer{{To: recipient, AssetID: "usdc-devnet", AmountBaseUnits: "1000000"},
		{To: recipient, AssetID: "usdc-devnet", AmountBaseUnits: "1000005"}}
	to, err := s.Checkout().Recipients(ctx, "devnet", false, transfers)
	if err != nil {
		t.Fatal(err)
	}
	if cs, ok := to.SessionOf(transfers[0], now.Add(time.Minute)); !ok || cs.ID != first.ID {
		t.Fatalf("a's amount: %+v %v", cs, ok)
	}
	if cs, ok := to.SessionOf(transfers[1], now.Add(time.Minute)); !ok || cs.ID != "" || cs.ProjectID != a.ProjectID {
		t.Fatalf("an unmatched amount on a's recipient: %+v %v", cs, ok)
	}

	// A session's own deposit address cannot be claimed, by anyone.
	deposit := fmt.Sprintf("0x%040x", now.UnixNano()+9)
	ds := session(planA)
	ds.SharedRecipient, ds.DepositAddress = false, deposit
	if err := s.Checkout().InsertSession(ctx, ds, render); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(b.ProjectID, false, deposit); !errors.Is(err, store.ErrRecipientIsDeposit) {
		t.Fatalf("a deposit address claimed: %v", err)
	}
}

// A recipient nobody has verified (plans from before verification was
// required): its holds still take their exact amounts, but its unmatched
// transfers are nobody's.
func TestUnownedRecipientRecordsNoUnmatchedTransfer(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	pr := newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	recipient := fmt.Sprintf("0x%040x", now.UnixNano()+3)
	if _, err := s.Pool().Exec(ctx, `INSERT INTO amount_reservations (session_id, project_id, is_live, network, asset_id, recipient,
		amount_base_units, held_from, held_until) VALUES ('cs_none', $1, false, 'devnet', 'usdc-devnet', $2, 5, $3, $4)`,
		pr.ProjectID, recipient, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	tr := payment.Transfer{To: recipient, AssetID: "usdc-devnet", AmountBaseUnits: "6"}
	to, err := s.Checkout().Recipients(ctx, "devnet", false, []payment.Transfer{tr})
	if err != nil {
		t.Fatal(err)
	}
	if cs, ok := to.SessionOf(tr, now.Add(time.Minute)); ok {
		t.Fatalf("an unmatched transfer to an unowned recipient recorded for %+v", cs)
	}
}

// A session's deposit address and a verified recipient exclude each other
// whichever comes second, under the address's lock: a session whose
// freshly derived address was verified in between (derivation checks, then
// the session is recorded) is not recorded; recording a session waits for
// the address's lock (which a verification holds while it checks and
// writes), and a verification after it is refused.
func TestDepositAddressAndRecipientAreSerialized(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	a, b := newProject(t, s), newProject(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: a.ProjectID, Title: "T", Status: payment.PlanActive, CreatedAt: now}
	if err := s.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	render := func(payment.Session, int) ([]byte, error) { return []byte(`{}`), nil }
	session := func(address string) payment.Session {
		return payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(fmt.Sprint(time.Now().UnixNano())),
			ProjectID: a.ProjectID, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: decimal.RequireFromString("1"),
			DepositAddress: address, ExpiresAt: now.Add(15 * time.Minute), QuoteExpiresAt: now.Add(15 * time.Minute),
			LateUntil: now.Add(time.Hour), CreatedAt: now}
	}

	// Verified after derivation, before the session is recorded.
	verified := fmt.Sprintf("0x%040x", now.UnixNano()+11)
	ownRecipient(t, s, b.ProjectID, false, verified)
	if err := s.Checkout().InsertSession(ctx, session(verified), render); !errors.Is(err, store.ErrDepositIsRecipient) || payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("a session on a verified recipient's address: %v", err)
	}

	// Recording a session waits for the address's lock.
	address := fmt.Sprintf("0x%040x", now.UnixNano()+13)
	r, err := s.Checkout().ClaimRecipient(ctx, payment.Recipient{ProjectID: b.ProjectID, Address: address,
		Challenge: "c " + address, ChallengeExpiresAt: now.Add(time.Minute), CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "recipient/"+address); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Checkout().InsertSession(ctx, session(address), render) }()
	select {
	case err := <-done:
		t.Fatalf("a session was recorded while its address's lock was held: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkout().VerifyRecipient(ctx, b.ProjectID, false, address, r.Challenge, "eip191", now); !errors.Is(err, store.ErrRecipientIsDeposit) {
		t.Fatalf("verifying a session's address: %v", err)
	}
}
