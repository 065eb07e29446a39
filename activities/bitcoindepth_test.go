package activities_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/workflows"
)

// A session asking $5 in bitcoin (10,000 sats at $50,000 a bitcoin) and
// paid 10 BTC, $500,000 at the rate it quoted, is not final after the one
// block a $5 payment waits: its transaction's looks ask the depth of what
// was received (4 blocks here), and the payment is final only there. A
// session paid what it asked, in the same blocks, is final after one.
func TestABitcoinOverpaymentWaitsTheDepthOfWhatWasReceived(t *testing.T) {
	ctx := context.Background()
	node, _ := btcnodetest.Start(t)
	hundred, tenThousand := decimal.NewFromInt(100), decimal.NewFromInt(10_000)
	chains, err := chainwatch.Connect(ctx, []chainwatch.Network{{Key: btcRegtest.Network, Kind: chainwatch.KindBitcoin, Chain: "regtest",
		RPCURLs: []string{node.URL()}, Finality: []chainwatch.Tier{{BelowUSD: &hundred, Confirmations: 1},
			{BelowUSD: &tenThousand, Confirmations: 2}, {Confirmations: 4}}}}, payment.Catalog{Assets: []payment.Asset{btcRegtest}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, env := activityEnv(t, chains, time.Hour)

	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := recordProject(t, st, "Bitcoin depth", now)
	five := decimal.NewFromInt(5)
	plan := recordPlan(t, st, pid, "T", five, now)
	session := func(i int) btcutil.Address {
		t.Helper()
		addr := btcnodetest.Address(t, 0x63, uint32(i))
		at := now.Add(time.Duration(i) * time.Millisecond)
		index := int64(i)
		option := payment.Quote(btcRegtest, five, decimal.NewFromInt(50_000), addr.EncodeAddress())
		if option.AmountBaseUnits != "10000" {
			t.Fatalf("$5 at $50,000 a bitcoin quoted %s sats", option.AmountBaseUnits)
		}
		cs := payment.Session{ID: payment.NewID(payment.PrefixSession, at), TokenHash: payment.HashSecret(fmt.Sprint("depth", i, now.UnixNano())),
			ProjectID: pid, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: five,
			PaymentOptions: []payment.PaymentOption{option}, ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour),
			CreatedAt: at, BitcoinAddress: addr.EncodeAddress(), BitcoinIndex: &index}
		if err := st.Checkout().InsertSession(ctx, cs, nil); err != nil {
			t.Fatal(err)
		}
		return addr
	}
	overpaid, exact := session(0), session(1)
	head, err := node.Client.GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	hash, err := node.Client.GetBlockHash(head)
	if err != nil {
		t.Fatal(err)
	}
	cursor := workflows.ScanCursor{Number: uint64(head), Hash: chainwatch.BitcoinHash(*hash).Hex()}
	big, err := node.Pay(ctx, overpaid, 10*btcutil.SatoshiPerBitcoin, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	small, err := node.Pay(ctx, exact, 10_000, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	scan := func() workflows.ScanOutput {
		t.Helper()
		v, err := env.ExecuteActivity(workflows.ActivityScanNetwork, workflows.ScanInput{Network: btcRegtest.Network, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		var out workflows.ScanOutput
		if err := v.Get(&out); err != nil {
			t.Fatal(err)
		}
		cursor = out.Cursor
		return out
	}
	look := func(txid string) workflows.CheckOutput {
		t.Helper()
		v, err := env.ExecuteActivity(workflows.ActivityCheckTransaction, workflows.CheckInput{Network: btcRegtest.Network, TxHash: txid})
		if err != nil {
			t.Fatal(err)
		}
		var out workflows.CheckOutput
		if err := v.Get(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// final is the follower's rule (workflows/follow.go): mined, and as
	// deep as the look asks.
	final := func(st workflows.CheckOutput) bool {
		return st.Mined && (st.Final || st.Confirmations >= st.RequiredConfirmations)
	}
	if out := scan(); len(out.Transfers) != 2 {
		t.Fatalf("the mempool scan handed over %+v; want both payments", out.Transfers)
	}
	if st := look(big.String()); st.Mined || st.RequiredConfirmations != 4 {
		t.Fatalf("10 BTC in the mempool: %+v; want 4 confirmations asked from the start", st)
	}

	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	scan()
	if st := look(small.String()); !final(st) || st.RequiredConfirmations != 1 {
		t.Fatalf("the $5 payment one block deep: %+v; want final at 1 confirmation", st)
	}
	if st := look(big.String()); final(st) || st.Confirmations != 1 || st.RequiredConfirmations != 4 {
		t.Fatalf("10 BTC to a $5 session one block deep: %+v; want not final, 1 of 4 confirmations", st)
	}
	if _, err := node.Mine(ctx, 2); err != nil {
		t.Fatal(err)
	}
	scan()
	if st := look(big.String()); final(st) || st.Confirmations != 3 {
		t.Fatalf("10 BTC three blocks deep: %+v; want not final yet", st)
	}
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	scan()
	if st := look(big.String()); !final(st) || st.Confirmations != 4 || st.RequiredConfirmations != 4 {
		t.Fatalf("10 BTC four blocks deep: %+v; want final at 4 confirmations", st)
	}
}
