package reconcile

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"

	"github.com/paymentsd/paymentsd/dev/btcnode"
)

// On a real node (btcd in regtest): the outputs to watched addresses are
// read from the best chain after a reorg, in the blocks that now hold
// them, and the node's address index agrees; records that miss an output,
// name the block a reorg took away, or count a payment no block holds are
// each found.
func TestReconcileBitcoinAgainstANode(t *testing.T) {
	ctx := context.Background()
	n, err := btcnode.Start(ctx, btcnode.Config{Independent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	_, key, err := btcnode.Account(0x51)
	if err != nil {
		t.Fatal(err)
	}
	addr := make([]btcutil.Address, 3)
	for i := range addr {
		if addr[i], err = key.DeriveAddress(uint32(i), btcnode.Params); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := addr[0].EncodeAddress(), addr[1].EncodeAddress(), addr[2].EncodeAddress()
	start, err := n.Client.GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}

	two, err := n.Send(ctx, []btcnode.Out{{To: addr[0], Sats: 3_000}, {To: addr[0], Sats: 2_000}}, 500)
	if err != nil {
		t.Fatal(err)
	}
	one, err := n.Send(ctx, []btcnode.Out{{To: addr[1], Sats: 5_000}}, 500)
	if err != nil {
		t.Fatal(err)
	}
	first, err := n.Mine(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// A reorg: the block is taken away, its transactions go back to the
	// mempool and are mined again in the new branch.
	if err := n.Client.InvalidateBlock(first[0]); err != nil {
		t.Fatal(err)
	}
	again, err := n.Mine(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	unmined, err := n.Send(ctx, []btcnode.Out{{To: addr[2], Sats: 4_000}}, 500)
	if err != nil {
		t.Fatal(err)
	}

	ch, err := ReadBitcoin(ctx, n.URL(), btcnode.Params, start, []string{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range ch.Outputs {
		if o.BlockHash != again[0].String() {
			t.Errorf("%s read in block %s, want the new branch's %s", o.Key(), o.BlockHash, again[0])
		}
		got = append(got, o.Key()+" "+o.Sats.String())
	}
	id := func(h interface{ String() string }) string { return h.String() }
	want := []string{id(two.TxHash()) + "/0 3000", id(two.TxHash()) + "/1 2000", id(one.TxHash()) + "/0 5000"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || ch.Head != start+2 {
		t.Fatalf("outputs read: %v (head %d)\nwant %v (head %d)", got, ch.Head, want, start+2)
	}
	if ch.Indexed[a].Int64() != 5_000 || ch.Indexed[b].Int64() != 5_000 || ch.Indexed[c].Sign() != 0 {
		t.Fatalf("the node's index: %v", ch.Indexed)
	}

	due := func(id, address, status string, sats int64) Session {
		return Session{ID: id, Status: status, BitcoinAddress: address, PaidUSD: new(big.Rat),
			Options:   []Option{{AssetID: "btc", Due: big.NewInt(sats)}},
			ExpiresAt: time.Now().Add(time.Hour), LateUntil: time.Now().Add(25 * time.Hour), Version: 1}
	}
	btcRow := func(id, session, txid string, vout int, sats int64, block string) Tx {
		return Tx{ID: id, SessionID: session, Status: "finalized", TxHash: txid, LogIndex: vout, AssetID: "btc",
			Amount: big.NewInt(sats), AmountUSD: new(big.Rat), BlockHash: "0x" + block, Version: 2,
			History: []string{"pending", "confirmed"}}
	}
	rec := &Records{CompleteOn: "finalized", Tolerance: new(big.Rat), PlanVersions: map[string]int{},
		Sessions: []Session{due("cs_a", a, "completed", 5_000), due("cs_b", b, "completed", 5_000), due("cs_c", c, "completed", 4_000)},
		Transactions: []Tx{
			// A's first output in the block the reorg took away; its second
			// not recorded.
			btcRow("tx_a", "cs_a", id(two.TxHash()), 0, 3_000, first[0].String()),
			btcRow("tx_b", "cs_b", id(one.TxHash()), 0, 5_000, again[0].String()),
			// C's payment counted, but no block holds it.
			btcRow("tx_c", "cs_c", id(unmined.TxHash()), 0, 4_000, again[1].String()),
		}}
	res := Reconcile(&Chain{Bitcoin: ch}, rec, Settings{Now: time.Now(), Margin: 5 * time.Second})
	var kinds []string
	for _, d := range res.Discrepancies {
		if d.Kind != KindEvents {
			kinds = append(kinds, d.Kind+" "+d.SessionID)
		}
	}
	slices.Sort(kinds)
	wantKinds := []string{
		KindMissing + " cs_a",    // its second output
		KindOutcome + " cs_c",    // nothing paid on the chain, shown completed
		KindPhantom + " cs_c",    // counted, in no block
		KindStaleBlock + " cs_a", // the block the reorg took away
		KindSum + " cs_a",        // 5,000 on the chain, 3,000 counted
		KindSum + " cs_c",        // none on the chain, 4,000 counted
	}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("discrepancies:\n%v\nwant:\n%v", res.Discrepancies, wantKinds)
	}
	if res.BitcoinOutputs != 3 || res.Expected["completed"] != 2 || res.Expected["open"] != 1 {
		t.Fatalf("counts: %+v", res)
	}

	// B's payment was mined after B expired. Seen by the engine in the
	// mempool before that, it was in time, and B completed; seen only
	// after, it was late.
	var mined time.Time
	for _, o := range ch.Outputs {
		if o.Address == b {
			mined = time.Unix(int64(o.Time), 0)
		}
	}
	rec.Sessions[1].ExpiresAt = mined.Add(-time.Minute)
	outcomeOfB := func() string {
		t.Helper()
		res := Reconcile(&Chain{Bitcoin: ch}, rec, Settings{Now: mined.Add(time.Minute), Margin: 5 * time.Second})
		for _, d := range res.Discrepancies {
			if d.Kind == KindOutcome && d.SessionID == "cs_b" {
				return d.Detail
			}
		}
		return ""
	}
	rec.FirstSeen = map[string]time.Time{id(one.TxHash()): mined.Add(-2 * time.Minute)}
	if d := outcomeOfB(); d != "" {
		t.Errorf("seen before its session expired, mined after: %s", d)
	}
	rec.FirstSeen = map[string]time.Time{id(one.TxHash()): mined}
	if d := outcomeOfB(); !strings.Contains(d, "want expired/paid_late") {
		t.Errorf("first seen in its block, after its session expired: %q; want it late", d)
	}
}
