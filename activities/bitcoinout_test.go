package activities_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"go.temporal.io/sdk/testsuite"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/btcsweep"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// btcRegtest is bitcoin on regtest, priced by a feed of the dev chain
// (not read here).
var btcRegtest = payment.Asset{ID: "btc-regtest", Symbol: "BTC", Decimals: 8, Network: "bitcoin-regtest",
	Price: payment.PriceSource{Kind: payment.PriceChainlink, Network: "devnet", Aggregator: "0x00000000000000000000000000000000000000fe"}}

// bitcoinFixture is a regtest node (btcd), a store, and the activities
// over both, the network final at 3 confirmations; a project whose
// deposit address 0 (of the account key made from seed 0x61) is a
// session's.
type bitcoinFixture struct {
	node    *btcnode.Node
	store   *store.Store
	env     *testsuite.TestActivityEnvironment
	project string
	xprv    string
	deposit btcutil.Address
	cursor  workflows.ScanCursor
}

func newBitcoinFixture(t *testing.T) *bitcoinFixture {
	t.Helper()
	ctx := context.Background()
	n, _ := btcnodetest.Start(t)
	dev, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	chains, err := chainwatch.Connect(ctx, []chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{dev.URL}},
		{Key: btcRegtest.Network, Kind: chainwatch.KindBitcoin, Chain: "regtest", RPCURLs: []string{n.URL()},
			Finality: []chainwatch.Tier{{Confirmations: 3}}}}, payment.Catalog{Assets: []payment.Asset{btcRegtest}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, env := activityEnv(t, chains, time.Hour)
	now := time.Now().UTC().Truncate(time.Microsecond)
	f := &bitcoinFixture{node: n, store: st, env: env, project: recordProject(t, st, "Bitcoin out", now)}
	xprv, key, err := btcnode.Account(0x61)
	if err != nil {
		t.Fatal(err)
	}
	f.xprv = xprv
	if f.deposit, err = key.DeriveAddress(0, btcnode.Params); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `INSERT INTO bitcoin_deposit_addresses (address, session_id, project_id, is_live, derivation_index, created_at)
		VALUES ($1, $2, $3, false, 0, now())`, f.deposit.EncodeAddress(), payment.NewID(payment.PrefixSession, now), f.project); err != nil {
		t.Fatal(err)
	}
	head, err := n.Client.GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	hash, err := n.Client.GetBlockHash(head)
	if err != nil {
		t.Fatal(err)
	}
	f.cursor = workflows.ScanCursor{Number: uint64(head), Hash: chainwatch.BitcoinHash(*hash).Hex()}
	return f
}

// scan runs the network's scan from where the last one stopped.
func (f *bitcoinFixture) scan(t *testing.T) workflows.ScanOutput {
	t.Helper()
	v, err := f.env.ExecuteActivity(workflows.ActivityScanNetwork, workflows.ScanInput{Network: btcRegtest.Network, Cursor: f.cursor})
	if err != nil {
		t.Fatal(err)
	}
	var out workflows.ScanOutput
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	f.cursor = out.Cursor
	return out
}

func (f *bitcoinFixture) mine(t *testing.T, blocks int) []*chainhash.Hash {
	t.Helper()
	h, err := f.node.Mine(context.Background(), blocks)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// payout records an approved batch of one bitcoin payout of sats to to.
func (f *bitcoinFixture) payout(t *testing.T, to btcutil.Address, sats int64) payment.Payout {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	b, payouts, err := payment.NewPayoutBatch(payment.PayoutBatchInput{Lines: []payment.PayoutLine{{Label: "payouts[0]",
		Address: ptr(to.EncodeAddress()), AssetDefinitionID: ptr(btcRegtest.ID), Amount: ptr(payment.UnitsToAmount(strconv.FormatInt(sats, 10), 8))}}},
		payment.Catalog{Assets: []payment.Asset{btcRegtest}}, false, "usr_test", now)
	if err != nil {
		t.Fatal(err)
	}
	if b.FromAddress != "" || payouts[0].FromAddress != "" || payouts[0].Network != btcRegtest.Network {
		t.Fatalf("a batch of bitcoin: %+v %+v", b, payouts[0])
	}
	b.ID, b.ProjectID = payment.NewID(payment.PrefixPayoutBatch, now), f.project
	payouts[0].ID, payouts[0].BatchID, payouts[0].ProjectID = payment.NewID(payment.PrefixPayout, now), b.ID, f.project
	if err := f.store.MoneyOut().CreatePayoutBatch(ctx, payment.BatchRecord{Batch: b, Payouts: payouts}, views.BatchEvent); err != nil {
		t.Fatal(err)
	}
	rec, err := f.store.MoneyOut().UpdatePayoutBatch(ctx, payment.Principal{ProjectID: f.project}, b.ID,
		func(b *payment.PayoutBatch, ps []payment.Payout) (payment.EventType, error) {
			return payment.EventPayoutBatchApproved, payment.ApprovePayoutBatch(b, ps, "usr_test", now)
		}, views.BatchEvent)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Payouts[0]
}

func (f *bitcoinFixture) follow(t *testing.T, id string) workflows.FollowOutgoingOutput {
	t.Helper()
	return followOnce(t, f.env, id)
}

// A bitcoin payout paid from the project's own coin, unreported: the scan
// records it sent (and keeps its change, back at the session's deposit
// address, from the session); its workflow's looks take it confirmed,
// back to sent when its block leaves the chain, then finalized at the
// network's depth with the output that pays it. A payout paid exactly by
// coins that are not the project's is neither spotted nor taken when
// reported: it waits for its signature again, with the reason.
func TestABitcoinPayoutIsFollowedFromTheProjectsOwnCoins(t *testing.T) {
	ctx := context.Background()
	f := newBitcoinFixture(t)
	paid, err := f.node.Send(ctx, []btcnode.Out{{To: f.deposit, Sats: 100_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	f.mine(t, 1)
	if out := f.scan(t); len(out.Transfers) != 1 || out.Transfers[0].To != f.deposit.EncodeAddress() || out.Transfers[0].AmountBaseUnits != "100000" {
		t.Fatalf("the payment scanned: %+v", out.Transfers)
	}
	var vout uint32
	for i, o := range paid.TxOut {
		if o.Value == 100_000 {
			vout = uint32(i)
		}
	}
	_, other, _ := btcnode.Account(0x62)
	dest, _ := other.DeriveAddress(0, btcnode.Params)
	p := f.payout(t, dest, 30_000)

	_, key, _ := btcsweep.Account(f.xprv)
	plan, err := btcsweep.PlanPayment(key, btcnode.Params, []btcsweep.Coin{{Out: wire.OutPoint{Hash: paid.TxHash(), Index: vout}, Sats: 100_000}},
		nil, []btcsweep.Payment{{To: dest, Sats: 30_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if plan.ChangeTo.EncodeAddress() != f.deposit.EncodeAddress() || plan.Change != 100_000-30_000-plan.Fee || plan.Fee != 2*btcsweep.VSize(1, 2) {
		t.Fatalf("the plan: %+v", plan)
	}
	psbt, err := plan.PSBT(key, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := btcsweep.Sign(psbt, f.xprv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.node.Client.SendRawTransaction(tx, false); err != nil {
		t.Fatal(err)
	}
	txid := tx.TxHash().String()
	if out := f.scan(t); len(out.Transfers) != 0 {
		t.Fatalf("the payout's change was handed to the session as a payment: %+v", out.Transfers)
	}
	spotted, err := f.store.MoneyOut().PayoutByID(ctx, p.ID)
	if err != nil || spotted.Status != payment.RefundSent || spotted.TxHash != txid {
		t.Fatalf("the payout seen unreported: %+v %v; want sent in %s", spotted.Outgoing, err, txid)
	}
	if out := f.follow(t, p.ID); out.Status != payment.RefundSent || out.Ended {
		t.Fatalf("a look while in the mempool: %+v", out)
	}

	block := f.mine(t, 1)
	f.scan(t)
	if out := f.follow(t, p.ID); out.Status != payment.RefundConfirmed || out.Detail != "mined · 1 of 3 confirmations" {
		t.Fatalf("a look once mined: %+v", out)
	}
	// Its block leaves the chain: back to sent.
	if err := f.node.Client.InvalidateBlock(block[0]); err != nil {
		t.Fatal(err)
	}
	if out := f.follow(t, p.ID); out.Status != payment.RefundSent {
		t.Fatalf("a look after its block left the chain: %+v", out)
	}
	_, _ = f.node.Client.SendRawTransaction(tx, false) // back in the mempool, if the node did not put it there
	f.mine(t, 3)
	f.scan(t)
	if out := f.follow(t, p.ID); out.Status != payment.RefundFinalized || !out.Ended {
		t.Fatalf("a look 3 blocks deep: %+v", out)
	}
	final, err := f.store.MoneyOut().PayoutByID(ctx, p.ID)
	if err != nil || final.LogIndex == nil || *final.LogIndex != 0 {
		t.Fatalf("the payout finalized: %+v %v; want paid by output 0", final.Outgoing, err)
	}
	if taken, err := f.store.MoneyOut().TakenTransfers(ctx, 0, txid, ""); err != nil || taken[0] != p.ID {
		t.Fatalf("the transaction's outputs taken: %v %v", taken, err)
	}

	// The right amount, from coins that are not the project's.
	dest2, _ := other.DeriveAddress(1, btcnode.Params)
	q := f.payout(t, dest2, 20_000)
	foreign, err := f.node.Send(ctx, []btcnode.Out{{To: dest2, Sats: 20_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	f.mine(t, 1)
	f.scan(t)
	if got, _ := f.store.MoneyOut().PayoutByID(ctx, q.ID); got.Status != payment.RefundAwaitingSignature {
		t.Fatalf("a transfer from others' coins was taken for the payout: %+v", got.Outgoing)
	}
	if _, err := f.store.MoneyOut().UpdatePayout(ctx, &payment.Principal{ProjectID: f.project}, q.ID, func(p *payment.Payout) (payment.EventType, error) {
		return payment.ReportPayoutSent(p, foreign.TxHash().String(), time.Now())
	}, views.PayoutEvent, views.BatchEvent); err != nil {
		t.Fatal(err)
	}
	if out := f.follow(t, q.ID); out.Status != payment.RefundAwaitingSignature {
		t.Fatalf("a look at a transaction of others' coins: %+v", out)
	}
	back, _ := f.store.MoneyOut().PayoutByID(ctx, q.ID)
	if back.TxHash != "" || !strings.Contains(back.FailureReason, "from the project's own coins") {
		t.Fatalf("the payout after the rejection: %+v", back.Outgoing)
	}
}
