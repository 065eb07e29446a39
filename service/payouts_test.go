package service_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
)

// provenTreasury is a new address the member's project has proven it
// controls (a verified recipient), to pay batches from.
func provenTreasury(t *testing.T, e env, m member) string {
	t.Helper()
	ctx := context.Background()
	w := newWallet(t)
	claim, err := e.svc.Checkout().ClaimRecipient(ctx, m.principal, m.principal.ProjectID, w.address, "pay.example.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Checkout().VerifyRecipient(ctx, m.principal, m.principal.ProjectID, w.address, w.sign(t, claim.Challenge)); err != nil {
		t.Fatal(err)
	}
	return w.address
}

func payoutLine(label, address, amount, ref string) payment.PayoutLine {
	return payment.PayoutLine{Label: label, Address: ptr(address), AssetDefinitionID: ptr("usdc-devnet"), Amount: ptr(amount), Reference: ptr(ref)}
}

// A batch with a bad line is refused whole (nothing recorded), a good one
// waits for an owner's approval: a developer, an API key and another
// project's owner are refused; approved, its payouts wait for their
// signatures; the whole is audited and has its events.
func TestPayoutBatchesAreApprovedByAnOwnerOnly(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := e.owner(t, "Payouts")
	dev := e.join(t, m, payment.RoleDeveloper)
	other := e.owner(t, "Another merchant")
	project := m.principal.ProjectID
	treasury := provenTreasury(t, e, m)

	// A batch pays only from an address its project proved it controls:
	// not another project's treasury, nor an address nobody proved.
	for _, from := range []string{provenTreasury(t, e, other), newWallet(t).address} {
		unproven := payment.PayoutBatchInput{FromAddress: ptr(from), Lines: []payment.PayoutLine{
			payoutLine("line 2", "0x00000000000000000000000000000000000000b1", "10", "inv-1")}}
		_, err := e.svc.MoneyOut().CreatePayoutBatch(ctx, dev.principal, project, unproven)
		wantInvalid(t, err, "fromAddress", "has not verified")
	}

	bad := payment.PayoutBatchInput{FromAddress: ptr(treasury), Lines: []payment.PayoutLine{
		payoutLine("line 2", "0x00000000000000000000000000000000000000b1", "10", "inv-1"),
		payoutLine("line 3", "0x00000000000000000000000000000000000000b2", "ten", "inv-2"),
	}}
	_, err := e.svc.MoneyOut().CreatePayoutBatch(ctx, dev.principal, project, bad)
	wantInvalid(t, err, "line 3.amount", "")
	if page, err := e.svc.MoneyOut().ListPayoutBatches(ctx, m.principal, project, payment.ListQuery{Page: 1, Limit: 10}); err != nil || page.Total != 0 {
		t.Fatalf("a refused batch left %d batches (%v)", page.Total, err)
	}

	good := payment.PayoutBatchInput{FromAddress: ptr(treasury), Reference: ptr("Suppliers"), Lines: []payment.PayoutLine{
		payoutLine("line 2", "0x00000000000000000000000000000000000000b1", "10", "inv-1"),
		payoutLine("line 3", "0x00000000000000000000000000000000000000b2", "2.5", "inv-2"),
	}}
	rec, err := e.svc.MoneyOut().CreatePayoutBatch(ctx, dev.principal, project, good)
	if err != nil {
		t.Fatal(err)
	}
	id := rec.Batch.ID
	if rec.Batch.Status != payment.BatchAwaitingApproval || len(rec.Payouts) != 2 || rec.Payouts[1].AmountBaseUnits != "2500000" {
		t.Fatalf("batch %+v", rec)
	}
	if _, err := e.svc.MoneyOut().PayoutBatch(ctx, other.principal, other.principal.ProjectID, id); payment.KindOf(err) != payment.KindNotFound {
		t.Errorf("another project's owner read the batch: %v", err)
	}
	if _, err := e.svc.MoneyOut().ApprovePayoutBatch(ctx, other.principal, project, id); payment.KindOf(err) != payment.KindForbidden &&
		payment.KindOf(err) != payment.KindNotFound {
		t.Errorf("another project's owner approved the batch: %v", err)
	}
	if _, err := e.svc.MoneyOut().ApprovePayoutBatch(ctx, other.principal, other.principal.ProjectID, id); payment.KindOf(err) != payment.KindNotFound {
		t.Errorf("another project's owner approved the batch through their project: %v", err)
	}
	if _, err := e.svc.MoneyOut().ApprovePayoutBatch(ctx, dev.principal, project, id); payment.KindOf(err) != payment.KindForbidden {
		t.Errorf("a developer approved the batch: %v", err)
	}
	key := payment.Principal{ProjectID: project, KeyID: "key_x"}
	if _, err := e.svc.MoneyOut().ApprovePayoutBatch(ctx, key, project, id); payment.KindOf(err) != payment.KindForbidden {
		t.Errorf("an API key approved the batch: %v", err)
	}
	if _, err := e.svc.MoneyOut().ReportPayoutSent(ctx, dev.principal, project, rec.Payouts[0].ID, "0x"+strings.Repeat("ab", 32)); payment.KindOf(err) != payment.KindConflict {
		t.Errorf("a payout of an unapproved batch took a transaction: %v", err)
	}
	rec, err = e.svc.MoneyOut().ApprovePayoutBatch(ctx, m.principal, project, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Batch.Status != payment.BatchApproved || rec.Batch.ApprovedBy != m.user.ID || rec.Payouts[0].Status != payment.RefundAwaitingSignature {
		t.Fatalf("approved batch %+v", rec)
	}
	if _, err := e.svc.MoneyOut().ReportPayoutSent(ctx, other.principal, other.principal.ProjectID, rec.Payouts[0].ID, "0x"+strings.Repeat("ab", 32)); payment.KindOf(err) != payment.KindNotFound {
		t.Errorf("another project's owner reported a payout's transaction: %v", err)
	}
	p, err := e.svc.MoneyOut().ReportPayoutSent(ctx, dev.principal, project, rec.Payouts[0].ID, "0x"+strings.Repeat("ab", 32))
	if err != nil || p.Status != payment.RefundSent {
		t.Fatalf("report: %v %+v", err, p)
	}
	if _, err := e.svc.MoneyOut().CancelPayoutBatch(ctx, m.principal, project, id); payment.KindOf(err) != payment.KindConflict {
		t.Errorf("a batch with a payout sent was canceled: %v", err)
	}
	entries := e.audit(t, m)
	for _, action := range []string{payment.AuditPayoutBatchCreated, payment.AuditPayoutBatchApproved, payment.AuditPayoutSent} {
		if countAudit(entries, action) != 1 {
			t.Errorf("%d audit entries %s, want 1", countAudit(entries, action), action)
		}
	}
	events, _, err := e.store.Webhooks().ListEvents(ctx, m.principal, payment.ListQuery{Page: 1, Limit: 50, ObjectID: id})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		types = append(types, string(ev.Type))
	}
	// Recorded at the same instant of the test's clock: in either order.
	slices.Sort(types)
	if strings.Join(types, " ") != "payout_batch.approved payout_batch.created" {
		t.Errorf("the batch's events: %v", types)
	}
}

// A project's transactions reported and not mined are bounded: past
// payment.MaxInFlight a report is refused with a 429 that says why, and
// another project reports as before.
func TestReportsInFlightAreBoundedPerProject(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m, other := e.owner(t, "Busy"), e.owner(t, "Another merchant")
	approved := func(m member) payment.Payout {
		t.Helper()
		rec, err := e.svc.MoneyOut().CreatePayoutBatch(ctx, m.principal, m.principal.ProjectID, payment.PayoutBatchInput{FromAddress: ptr(provenTreasury(t, e, m)),
			Lines: []payment.PayoutLine{payoutLine("line 2", "0x00000000000000000000000000000000000000b1", "1", "x")}})
		if err != nil {
			t.Fatal(err)
		}
		if rec, err = e.svc.MoneyOut().ApprovePayoutBatch(ctx, m.principal, m.principal.ProjectID, rec.Batch.ID); err != nil {
			t.Fatal(err)
		}
		return rec.Payouts[0]
	}
	mine, theirs := approved(m), approved(other)
	// The project's earlier payouts, sent and never mined.
	if _, err := e.store.Pool().Exec(ctx, `INSERT INTO payouts (id, batch_id, project_id, is_live, line, status, network, chain_id,
		asset_definition_id, symbol, decimals, amount_base_units, from_address, to_address, tx_hash, version, created_at, updated_at)
		SELECT 'po_stuck' || g, batch_id, project_id, false, 1000 + g, 'sent', network, chain_id, asset_definition_id, symbol, decimals,
			1, from_address, to_address, '0x' || lpad(to_hex(g), 64, '0'), 2, now(), now()
		FROM payouts, generate_series(1, $2) g WHERE id = $1`, mine.ID, payment.MaxInFlight); err != nil {
		t.Fatal(err)
	}
	hash := "0x" + strings.Repeat("ab", 32)
	_, err := e.svc.MoneyOut().ReportPayoutSent(ctx, m.principal, m.principal.ProjectID, mine.ID, hash)
	if payment.KindOf(err) != payment.KindRateLimited || !strings.Contains(err.Error(), "not mined yet") {
		t.Fatalf("a report past the project's bound: %v; want rate limited", err)
	}
	if _, err := e.svc.MoneyOut().ReportPayoutSent(ctx, other.principal, other.principal.ProjectID, theirs.ID, hash); err != nil {
		t.Fatalf("another project's report: %v", err)
	}
}

// One payout of an approved batch is canceled on its own while it awaits
// its signature or is stale, never once sent or before its batch is
// approved; audited, with its event. A stale payout canceled keeps its
// transaction, still followed; the batch completes when every payout is
// done.
func TestAPayoutIsCanceledAloneWhileUnsentOrStale(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := e.owner(t, "Payout cancel")
	dev := e.join(t, m, payment.RoleDeveloper)
	project := m.principal.ProjectID
	in := payment.PayoutBatchInput{FromAddress: ptr(provenTreasury(t, e, m)), Lines: []payment.PayoutLine{
		payoutLine("line 2", "0x00000000000000000000000000000000000000b1", "1", ""),
		payoutLine("line 3", "0x00000000000000000000000000000000000000b2", "2", ""),
		payoutLine("line 4", "0x00000000000000000000000000000000000000b3", "3", ""),
	}}
	rec, err := e.svc.MoneyOut().CreatePayoutBatch(ctx, dev.principal, project, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.MoneyOut().CancelPayout(ctx, dev.principal, project, rec.Payouts[0].ID); payment.KindOf(err) != payment.KindConflict ||
		!strings.Contains(err.Error(), "cancel the batch") {
		t.Fatalf("a payout of a batch awaiting approval canceled alone: %v; want a conflict naming the batch", err)
	}
	if rec, err = e.svc.MoneyOut().ApprovePayoutBatch(ctx, m.principal, project, rec.Batch.ID); err != nil {
		t.Fatal(err)
	}
	other := e.owner(t, "Another merchant")
	if _, err := e.svc.MoneyOut().CancelPayout(ctx, other.principal, other.principal.ProjectID, rec.Payouts[0].ID); payment.KindOf(err) != payment.KindNotFound {
		t.Fatalf("another project canceled the payout: %v; want not found", err)
	}
	unsent, err := e.svc.MoneyOut().CancelPayout(ctx, dev.principal, project, rec.Payouts[0].ID)
	if err != nil || unsent.Status != payment.RefundCanceled {
		t.Fatalf("an unsent payout canceled = %+v, %v", unsent, err)
	}
	hash := "0x" + strings.Repeat("cd", 32)
	if _, err := e.svc.MoneyOut().ReportPayoutSent(ctx, dev.principal, project, rec.Payouts[1].ID, hash); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.MoneyOut().CancelPayout(ctx, dev.principal, project, rec.Payouts[1].ID); payment.KindOf(err) != payment.KindConflict ||
		!strings.Contains(err.Error(), "it is sent") {
		t.Fatalf("a sent payout canceled: %v; want a conflict saying it is sent", err)
	}
	// Its transaction not mined within the bound: stale (as its workflow
	// records it).
	if _, err := e.store.Pool().Exec(ctx, `UPDATE payouts SET status = 'stale' WHERE id = $1`, rec.Payouts[1].ID); err != nil {
		t.Fatal(err)
	}
	stale, err := e.svc.MoneyOut().CancelPayout(ctx, dev.principal, project, rec.Payouts[1].ID)
	if err != nil || stale.Status != payment.RefundCanceled || stale.TxHash != hash || !stale.Followed() {
		t.Fatalf("a stale payout canceled = %+v, %v; want canceled, its transaction kept and still followed", stale, err)
	}
	if _, err := e.svc.MoneyOut().ReportPayoutSent(ctx, dev.principal, project, rec.Payouts[1].ID, "0x"+strings.Repeat("ef", 32)); payment.KindOf(err) != payment.KindConflict {
		t.Fatalf("a canceled payout took another transaction: %v; want a conflict", err)
	}
	if _, err := e.svc.MoneyOut().CancelPayout(ctx, dev.principal, project, rec.Payouts[2].ID); err != nil {
		t.Fatal(err)
	}
	if got, err := e.svc.MoneyOut().PayoutBatch(ctx, m.principal, project, rec.Batch.ID); err != nil || got.Batch.Status != payment.BatchCompleted {
		t.Fatalf("the batch with every payout canceled: %+v, %v; want completed", got.Batch, err)
	}
	if n := countAudit(e.audit(t, m), payment.AuditPayoutCanceled); n != 3 {
		t.Errorf("%d payout.canceled audit entries; want 3", n)
	}
	events, _, err := e.store.Webhooks().ListEvents(ctx, m.principal, payment.ListQuery{Page: 1, Limit: 50, ObjectID: rec.Payouts[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	// Recorded at the same instant of the test's clock: the last by version.
	var last payment.Event
	for _, ev := range events {
		if ev.Version > last.Version {
			last = ev
		}
	}
	if last.Type != payment.EventPayoutCanceled {
		t.Errorf("the stale payout's last event: %s (version %d); want payout.canceled", last.Type, last.Version)
	}
}
