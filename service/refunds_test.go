package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
)

// paidSession records a session of m's project (sandbox) and, to its
// deposit address, a USDC transfer per amount and status given.
func (e env) paidSession(t *testing.T, m member, transfers ...struct {
	amount string
	status payment.TransactionStatus
}) payment.Session {
	t.Helper()
	ctx := context.Background()
	now := e.clock.Now().Truncate(time.Microsecond)
	usd := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: m.principal.ProjectID, Title: "T",
		PricingModel: payment.PricingFixedUSD, AmountUSD: &usd, Status: payment.PlanActive, CreatedAt: now}
	if err := e.store.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	seq := time.Now().UnixNano()
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(fmt.Sprint("t", seq)),
		ProjectID: plan.ProjectID, PaymentPlanID: plan.ID, Status: payment.SessionCompleted, AmountUSD: usd,
		DepositAddress: payment.ChecksumAddress(fmt.Sprintf("0x%040x", seq)), ExpiresAt: now.Add(time.Hour),
		QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now}
	if err := e.store.Checkout().InsertSession(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	for i, tr := range transfers {
		base, msg := payment.ParseTokenAmount(tr.amount, 6)
		if msg != "" {
			t.Fatal(msg)
		}
		tx := payment.Transaction{ID: payment.NewID(payment.PrefixTx, now), ProjectID: cs.ProjectID, CheckoutSessionID: cs.ID,
			PaymentPlanID: plan.ID, Status: tr.status, Network: "devnet", ChainID: 1337, TxHash: fmt.Sprintf("0x%063x%d", seq, i),
			ToAddress: cs.DepositAddress, AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Amount: tr.amount,
			AmountBaseUnits: base, AmountUSD: decimal.RequireFromString(tr.amount), Version: 1, CreatedAt: now, UpdatedAt: now}
		if err := e.store.Payments().InsertTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	return cs
}

type transfer = struct {
	amount string
	status payment.TransactionStatus
}

// wantInvalid checks err is a validation error on field whose message
// holds want.
func wantInvalid(t *testing.T, err error, field, want string) {
	t.Helper()
	pe, ok := err.(*payment.Error)
	if !ok || pe.Kind != payment.KindValidation || len(pe.Details) == 0 || pe.Details[0].Field != field ||
		!strings.Contains(pe.Details[0].Message, want) {
		t.Fatalf("err = %v; want a validation error on %s: %q", err, field, want)
	}
}

// A refund gives back only what the session received in finalized
// transfers, less its refunds that hold: all of it by default, a token
// amount or a USD amount; more is a validation error (422) that says what
// remains, and a canceled refund frees what it held.
func TestRefundsNeverExceedWhatWasReceived(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := e.owner(t, "Refunds")
	cs := e.paidSession(t, m, transfer{"10", payment.TxFinalized}, transfer{"5", payment.TxConfirmed}, transfer{"3", payment.TxFailed})
	p, project := m.principal, m.principal.ProjectID

	full, token, err := e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{Reason: ptr("order canceled")})
	if err != nil {
		t.Fatal(err)
	}
	if full.Amount() != "10" || full.Status != payment.RefundAwaitingAddress || full.FromAddress != cs.DepositAddress || len(token) != 64 {
		t.Fatalf("full refund = %+v (token %q); want 10 USDC from %s awaiting the customer's address", full, token, cs.DepositAddress)
	}
	if claimed, err := e.svc.MoneyOut().RefundClaim(ctx, token); err != nil || claimed.ID != full.ID {
		t.Fatalf("the claim token finds %+v, %v", claimed, err)
	}
	_, _, err = e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{Amount: ptr("0.000001")})
	wantInvalid(t, err, "amount", "nothing remains to refund")

	if _, err := e.svc.MoneyOut().CancelRefund(ctx, p, project, full.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.MoneyOut().CancelRefund(ctx, p, project, full.ID); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("canceling twice: %v; want a conflict", err)
	}
	e.clock.Advance(time.Second)
	part, _, err := e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{AmountUSD: ptr("4.00"), Address: ptr(strings.ToLower("0x000000000000000000000000000000000000bEEF"))})
	if err != nil {
		t.Fatal(err)
	}
	if part.Amount() != "4" || part.AmountUSD == nil || !part.RateUSD.Equal(decimal.NewFromInt(1)) ||
		part.Status != payment.RefundAwaitingApproval || part.AddressSource != payment.AddressFromMerchant ||
		part.ToAddress != "0x000000000000000000000000000000000000bEEF" {
		t.Fatalf("partial refund = %+v; want 4 USDC at 1 USD to the merchant's address, awaiting an owner's approval", part)
	}
	_, _, err = e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{Amount: ptr("7")})
	wantInvalid(t, err, "amount", "is more than remains to refund: 6 USDC")
	_, _, err = e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{Amount: ptr("1"), AmountUSD: ptr("1")})
	wantInvalid(t, err, "amountUsd", "not allowed with amount")
	_, _, err = e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{AssetDefinitionID: ptr("eth-devnet")})
	wantInvalid(t, err, "assetDefinitionId", "received nothing final in this asset")
	_, _, err = e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{Address: ptr("0x1234")})
	wantInvalid(t, err, "address", "must be an EVM address")

	page, err := e.svc.MoneyOut().ListRefunds(ctx, p, project, cs.ID, payment.ListQuery{Page: 1, Limit: 10})
	if err != nil || page.Total != 2 || page.Items[0].ID != part.ID || page.Items[1].Status != payment.RefundCanceled {
		t.Fatalf("the session's refunds: %+v, %v; want the partial one and the canceled one", page, err)
	}
	entries := e.audit(t, m)
	if countAudit(entries, payment.AuditRefundCreated) != 2 || countAudit(entries, payment.AuditRefundCanceled) != 1 {
		t.Fatalf("audit log: %d refund.created, %d refund.canceled; want 2 and 1",
			countAudit(entries, payment.AuditRefundCreated), countAudit(entries, payment.AuditRefundCanceled))
	}

	// Nothing final received: nothing to refund.
	pending := e.paidSession(t, m, transfer{"10", payment.TxConfirmed})
	_, _, err = e.svc.MoneyOut().CreateRefund(ctx, p, project, pending.ID, payment.RefundInput{})
	wantInvalid(t, err, "checkoutSessionId", "received nothing final to refund")
}

// Refunds racing for one session's remainder are taken one after the
// other: of eight asking 6 of 10 USDC at once, exactly one is recorded
// (in each of five sessions, for the race to be run for real).
func TestRefundsRacingForTheRemainderOneIsRecorded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := e.owner(t, "Race")
	for range 5 {
		cs := e.paidSession(t, m, transfer{"10", payment.TxFinalized})
		start := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		created, refused := 0, 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _, err := e.svc.MoneyOut().CreateRefund(ctx, m.principal, m.principal.ProjectID, cs.ID, payment.RefundInput{Amount: ptr("6")})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case payment.KindOf(err) == payment.KindValidation:
					refused++
				default:
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if created != 1 || refused != 7 {
			t.Fatalf("%d refunds recorded, %d refused; want 1 and 7", created, refused)
		}
		refunds, err := e.store.MoneyOut().SessionRefunds(ctx, cs.ID)
		if err != nil || len(refunds) != 1 || refunds[0].Amount() != "6" {
			t.Fatalf("recorded refunds: %+v, %v", refunds, err)
		}
	}
}

// The claim link takes one address while the refund waits for it; the
// merchant cannot replace it (only an address the merchant gave). Another
// project finds none of it.
func TestTheClaimLinkTakesOneAddress(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := e.owner(t, "Claims")
	other := e.owner(t, "Other")
	cs := e.paidSession(t, m, transfer{"2.5", payment.TxFinalized})
	r, token, err := e.svc.MoneyOut().CreateRefund(ctx, m.principal, m.principal.ProjectID, cs.ID, payment.RefundInput{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.MoneyOut().RefundClaim(ctx, strings.Repeat("0", 64)); payment.KindOf(err) != payment.KindNotFound {
		t.Fatalf("an unknown claim token: %v; want not found", err)
	}
	// Without a chain to ask, the address's code cannot be read: the
	// customer who accepts a contract skips that question.
	got, err := e.svc.MoneyOut().ClaimRefund(ctx, token, "0x00000000000000000000000000000000000000aa", true)
	if err != nil || got.Status != payment.RefundAwaitingSignature || got.AddressSource != payment.AddressFromCustomer {
		t.Fatalf("claim = %+v, %v; want the customer's address, awaiting the merchant's signature", got, err)
	}
	if _, err := e.svc.MoneyOut().ClaimRefund(ctx, token, "0x00000000000000000000000000000000000000bb", true); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("a second address through the link: %v; want a conflict", err)
	}
	if _, _, err := e.svc.MoneyOut().CreateRefund(ctx, other.principal, other.principal.ProjectID, cs.ID, payment.RefundInput{}); payment.KindOf(err) != payment.KindNotFound {
		t.Fatalf("another project refunding the session: %v; want not found", err)
	}
	if _, err := e.svc.MoneyOut().SetRefundAddress(ctx, other.principal, other.principal.ProjectID, r.ID, "0x00000000000000000000000000000000000000cc"); payment.KindOf(err) != payment.KindNotFound {
		t.Fatalf("another project setting the address: %v; want not found", err)
	}
	// The customer's word stands: the merchant cannot replace the
	// address the customer gave, only one the merchant gave.
	if _, err := e.svc.MoneyOut().SetRefundAddress(ctx, m.principal, m.principal.ProjectID, r.ID, "0x00000000000000000000000000000000000000cc"); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("the merchant replacing the customer's address: %v; want a conflict", err)
	}
	own, _, err := e.svc.MoneyOut().CreateRefund(ctx, m.principal, m.principal.ProjectID, e.paidSession(t, m, transfer{"1", payment.TxFinalized}).ID,
		payment.RefundInput{Address: ptr("0x00000000000000000000000000000000000000dd")})
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := e.svc.MoneyOut().SetRefundAddress(ctx, m.principal, m.principal.ProjectID, own.ID, "0x00000000000000000000000000000000000000cc")
	if err != nil || fixed.AddressSource != payment.AddressFromMerchant || !strings.EqualFold(fixed.ToAddress, "0x00000000000000000000000000000000000000cc") ||
		fixed.Status != payment.RefundAwaitingApproval {
		t.Fatalf("the merchant's correction of their own address: %+v, %v; want it awaiting an owner's approval", fixed, err)
	}
}

// A refund to an address the merchant gives is a payout: it waits for an
// owner's approval before it may be signed. A developer, an API key and
// an application never approve; the owner approves the address shown,
// audited with it and with its event; a change of the address after the
// approval asks for it again. A refund through the claim link needs none.
func TestARefundToTheMerchantsAddressWaitsForAnOwnersApproval(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := e.owner(t, "Approvals")
	dev := e.join(t, m, payment.RoleDeveloper)
	project := m.principal.ProjectID
	const first, second = "0x00000000000000000000000000000000000000d1", "0x00000000000000000000000000000000000000d2"
	r, _, err := e.svc.MoneyOut().CreateRefund(ctx, dev.principal, project, e.paidSession(t, m, transfer{"3", payment.TxFinalized}).ID,
		payment.RefundInput{Address: ptr(first)})
	if err != nil || r.Status != payment.RefundAwaitingApproval {
		t.Fatalf("a refund to the merchant's address = %+v, %v; want it awaiting approval", r, err)
	}
	hash := "0x" + strings.Repeat("ab", 32)
	if _, err := e.svc.MoneyOut().ReportRefundSent(ctx, dev.principal, project, r.ID, hash); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("a transaction reported before the approval: %v; want a conflict", err)
	}
	for name, p := range map[string]payment.Principal{
		"a developer":    dev.principal,
		"an API key":     {ProjectID: project, KeyID: "key_x"},
		"an application": {ProjectID: project, UserID: m.user.ID, Role: payment.RoleOwner, GrantID: "grant_x", ClientID: "oc_x"},
	} {
		if _, err := e.svc.MoneyOut().ApproveRefund(ctx, p, project, r.ID, ""); payment.KindOf(err) != payment.KindForbidden {
			t.Errorf("%s approved a refund: %v; want forbidden", name, err)
		}
	}
	if _, err := e.svc.MoneyOut().ApproveRefund(ctx, m.principal, project, r.ID, second); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("an approval of another address than the refund's: %v; want a conflict", err)
	}
	e.clock.Advance(time.Second)
	ok, err := e.svc.MoneyOut().ApproveRefund(ctx, m.principal, project, r.ID, first)
	if err != nil || ok.Status != payment.RefundAwaitingSignature || ok.ApprovedBy != m.user.ID || ok.ApprovedAt == nil {
		t.Fatalf("the owner's approval = %+v, %v; want it awaiting its signature, approved by the owner", ok, err)
	}
	if _, err := e.svc.MoneyOut().ApproveRefund(ctx, m.principal, project, r.ID, ""); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("approving twice: %v; want a conflict", err)
	}
	_, details := findAudit(t, e.audit(t, m), payment.AuditRefundApproved)
	if !strings.EqualFold(fmt.Sprint(details["address"]), first) || details["amount"] != "3" {
		t.Fatalf("the approval's audit entry: %v; want the address and amount approved", details)
	}
	// Changed after the approval, the address waits for another.
	moved, err := e.svc.MoneyOut().SetRefundAddress(ctx, dev.principal, project, r.ID, second)
	if err != nil || moved.Status != payment.RefundAwaitingApproval || moved.ApprovedBy != "" || moved.ApprovedAt != nil {
		t.Fatalf("an approved refund's address changed = %+v, %v; want it awaiting approval again", moved, err)
	}
	events, _, err := e.store.Webhooks().ListEvents(ctx, m.principal, payment.ListQuery{Page: 1, Limit: 50, ObjectID: r.ID})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		types = append(types, string(ev.Type))
	}
	slices.Sort(types)
	if strings.Join(types, " ") != "refund.address_provided refund.approved refund.created" {
		t.Errorf("the refund's events: %v", types)
	}

	// The customer's word through the claim link needs no approval.
	claimed, token, err := e.svc.MoneyOut().CreateRefund(ctx, dev.principal, project, e.paidSession(t, m, transfer{"1", payment.TxFinalized}).ID,
		payment.RefundInput{})
	if err != nil {
		t.Fatal(err)
	}
	if claimed, err = e.svc.MoneyOut().ClaimRefund(ctx, token, first, true); err != nil || claimed.Status != payment.RefundAwaitingSignature {
		t.Fatalf("the customer's address = %+v, %v; want it awaiting its signature", claimed, err)
	}
	if _, err := e.svc.MoneyOut().ApproveRefund(ctx, m.principal, project, claimed.ID, ""); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("approving a refund to the customer's address: %v; want a conflict (nothing to approve)", err)
	}
}

// Money out never goes where it would come back as money in, or nowhere:
// a session's deposit address (its own or another project's), a
// project's verified recipient, or the transfer's own source, given by
// the merchant, by the customer's link or as a payout's payee.
func TestMoneyOutRefusesDestinationsThatReceivePayments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m, other := e.owner(t, "Refunds"), e.owner(t, "Another merchant")
	cs := e.paidSession(t, m, transfer{"10", payment.TxFinalized})
	elsewhere := e.paidSession(t, other, transfer{"1", payment.TxFinalized})
	recipient := provenTreasury(t, e, other)
	p, project := m.principal, m.principal.ProjectID

	for _, to := range []string{cs.DepositAddress, elsewhere.DepositAddress, recipient} {
		_, _, err := e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{Address: ptr(to)})
		wantInvalid(t, err, "address", "")
	}
	r, token, err := e.svc.MoneyOut().CreateRefund(ctx, p, project, cs.ID, payment.RefundInput{Amount: ptr("1")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.MoneyOut().SetRefundAddress(ctx, p, project, r.ID, elsewhere.DepositAddress)
	wantInvalid(t, err, "address", "deposit address")
	_, err = e.svc.MoneyOut().ClaimRefund(ctx, token, cs.DepositAddress, true)
	wantInvalid(t, err, "address", "")

	treasury := provenTreasury(t, e, m)
	batch := payment.PayoutBatchInput{FromAddress: ptr(treasury), Lines: []payment.PayoutLine{
		payoutLine("line 2", "0x00000000000000000000000000000000000000b1", "1", "fine"),
		payoutLine("line 3", elsewhere.DepositAddress, "1", "a deposit address"),
		payoutLine("line 4", recipient, "1", "a recipient"),
	}}
	_, err = e.svc.MoneyOut().CreatePayoutBatch(ctx, p, project, batch)
	pe, ok := err.(*payment.Error)
	if !ok || pe.Kind != payment.KindValidation || len(pe.Details) != 2 || pe.Details[0].Field != "line 3.address" ||
		pe.Details[1].Field != "line 4.address" {
		t.Fatalf("a batch paying a deposit address and a recipient: %v", err)
	}
}
