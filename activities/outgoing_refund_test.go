package activities_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/stacktest"
	"github.com/paymentsd/paymentsd/workflows"
)

// A refund waiting for its signature, paid unreported from the treasury
// its project proved it controls (where a merchant refunds from once the
// deposit address is swept), is seen by the scan by its destination,
// recorded sent with that transaction, and followed to the end: as a
// reported one from there would be.
func TestARefundPaidUnreportedFromTheTreasuryIsFound(t *testing.T) {
	f := newOutgoingFixture(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	treasury, customer := f.chain.Accounts[1], common.HexToAddress("0x00000000000000000000000000000000000c0c01")
	deposit := "0x00000000000000000000000000000000000d0d01"
	pid := recordProject(t, f.store, "Refunds from the treasury", now)
	usd := decimal.RequireFromString("10")
	plan := recordPlan(t, f.store, pid, "T", usd, now)
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(fmt.Sprint("t", now.UnixNano())),
		ProjectID: pid, PaymentPlanID: plan.ID, Status: payment.SessionCompleted, AmountUSD: usd,
		DepositAddress: deposit, ExpiresAt: now, QuoteExpiresAt: now, CreatedAt: now}
	if err := f.store.Checkout().InsertSession(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Payments().InsertTransaction(ctx, payment.Transaction{ID: payment.NewID(payment.PrefixTx, now), ProjectID: pid,
		CheckoutSessionID: cs.ID, PaymentPlanID: plan.ID, Status: payment.TxFinalized, Network: "devnet", ChainID: 1337,
		TxHash: fmt.Sprintf("0x%064x", now.UnixNano()), ToAddress: deposit, AssetDefinitionID: "usdc-devnet", Symbol: "USDC",
		Amount: "10", AmountBaseUnits: "10000000", AmountUSD: usd, Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	r, err := f.store.MoneyOut().CreateRefund(ctx, payment.Principal{ProjectID: pid}, cs.ID,
		func(payment.Session, []payment.Transaction, []payment.Refund) (payment.Refund, error) {
			return payment.Refund{ID: payment.NewID(payment.PrefixRefund, now), ProjectID: pid, CheckoutSessionID: cs.ID,
				Outgoing: payment.Outgoing{Status: payment.RefundAwaitingSignature, Network: "devnet", ChainID: 1337,
					AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Decimals: 6, TokenAddress: f.chain.Token.Hex(),
					AmountBaseUnits: "4000000", FromAddress: deposit, ToAddress: customer.Hex()},
				AddressSource: payment.AddressFromMerchant, Version: 1, CreatedAt: now, UpdatedAt: now}, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := stacktest.ProveAddress(f.store, pid, treasury.Address.Hex()); err != nil {
		t.Fatal(err)
	}

	// An address the project did not prove pays the same: not taken.
	before, err := f.chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.transfer(t, f.chain.Accounts[2], customer, 4_000_000)
	h := f.transfer(t, treasury, customer, 4_000_000)
	in := workflows.ScanInput{Network: "devnet", Cursor: workflows.ScanCursor{Number: before.Number.Uint64(), Hash: before.Hash().Hex()}}
	if _, err := f.env.ExecuteActivity(workflows.ActivityScanNetwork, in); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.MoneyOut().RefundByID(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.RefundSent || !strings.EqualFold(got.TxHash, h.Hex()) {
		t.Fatalf("the refund after the scan saw the treasury pay it: %+v; want sent by %s", got.Outgoing, h.Hex())
	}
	if out := f.follow(t, r.ID); out.Status != payment.RefundConfirmed && out.Status != payment.RefundFinalized {
		t.Fatalf("the refund followed: %+v", out)
	}
}
