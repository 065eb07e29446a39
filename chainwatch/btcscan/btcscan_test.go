package btcscan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
)

// deposits derives n deposit addresses of a merchant's vpub.
func deposits(t *testing.T, n int) []btcutil.Address {
	t.Helper()
	_, key, err := btcnode.Account(1)
	if err != nil {
		t.Fatal(err)
	}
	var out []btcutil.Address
	for i := range n {
		a, err := key.DeriveAddress(uint32(i), btcnode.Params)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// watching watches the given addresses, and the spends of the
// transactions in txs.
func watching(addrs []btcutil.Address, txs ...*wire.MsgTx) Watch {
	set := map[string]bool{}
	for _, a := range addrs {
		set[a.EncodeAddress()] = true
	}
	spentBy := map[wire.OutPoint]chainhash.Hash{}
	for _, tx := range txs {
		for _, in := range tx.TxIn {
			spentBy[in.PreviousOutPoint] = tx.TxHash()
		}
	}
	return Watch{
		Addresses: func(_ context.Context, in []string) (map[string]bool, error) {
			out := map[string]bool{}
			for _, a := range in {
				out[a] = set[a]
			}
			return out, nil
		},
		Spends: func(_ context.Context, in []wire.OutPoint) (map[wire.OutPoint]chainhash.Hash, error) {
			out := map[wire.OutPoint]chainhash.Hash{}
			for _, op := range in {
				if id, ok := spentBy[op]; ok {
					out[op] = id
				}
			}
			return out, nil
		},
	}
}

func describe(outs []Output) []string {
	var s []string
	for _, o := range outs {
		s = append(s, fmt.Sprintf("%s:%d %s %d h%d", o.TxID.String()[:8], o.Vout, o.Address, o.Sats, o.Block.Height))
	}
	slices.Sort(s)
	return s
}

// On a real node: a transaction paying two watched addresses and one
// unwatched is seen in the mempool as two payments, then mined; a payment
// replaced by fee shows its replacement and leaves the mempool; a block
// taken off the chain ends its block's canonical standing and returns its
// payment to the mempool. The calls a block range costs do not grow with
// the addresses watched.
func TestScanANode(t *testing.T) {
	ctx := context.Background()
	n, node := btcnodetest.Start(t)
	s := Scanner{Node: node, Params: btcnode.Params}
	addrs := deposits(t, 1003)
	watched, stranger := addrs[:2], addrs[1002]
	watch := watching(watched)

	tx, err := n.Send(ctx, []btcnode.Out{{To: watched[0], Sats: 40_000}, {To: stranger, Sats: 7_000}, {To: watched[1], Sats: 25_000}}, 2_000)
	if err != nil {
		t.Fatal(err)
	}
	found, seen, err := s.Mempool(ctx, nil, watch)
	if err != nil {
		t.Fatal(err)
	}
	outs := found.Outputs
	want := []string{
		fmt.Sprintf("%s:0 %s 40000 h0", tx.TxHash().String()[:8], watched[0]),
		fmt.Sprintf("%s:2 %s 25000 h0", tx.TxHash().String()[:8], watched[1]),
	}
	if got := describe(outs); !slices.Equal(got, want) || !outs[0].Replaceable || !seen[tx.TxHash()] {
		t.Fatalf("the mempool: %v (replaceable %v); want %v, replaceable", got, outs[0].Replaceable, want)
	}
	if len(outs[0].Spends) != 1 || outs[0].Spends[0] != tx.TxIn[0].PreviousOutPoint || len(found.Conflicts) != 0 {
		t.Fatalf("the payment spends %v and conflicts with %v; want %v and nothing", outs[0].Spends, found.Conflicts,
			tx.TxIn[0].PreviousOutPoint)
	}
	if again, _, err := s.Mempool(ctx, seen, watch); err != nil || len(again.Outputs) != 0 {
		t.Fatalf("the mempool read again: %v %v; want nothing new", describe(again.Outputs), err)
	}

	// Mined.
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parent, err := n.Client.GetBlockHash(head)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	before := node.Calls.Load()
	blocks, found, err := s.Scan(ctx, head+1, head+1, *parent, watching(watched, tx))
	if err != nil {
		t.Fatal(err)
	}
	few := node.Calls.Load() - before
	for i := range want {
		want[i] = want[i][:len(want[i])-2] + fmt.Sprintf("h%d", head+1)
	}
	if got := describe(found.Outputs); len(blocks) != 1 || !slices.Equal(got, want) || found.Outputs[0].Block.Hash != blocks[0].Hash {
		t.Fatalf("the mined block: %v %v; want %v", blocks, got, want)
	}
	if len(found.Conflicts) != 0 {
		t.Errorf("a watched transaction mined conflicts with itself: %v", found.Conflicts)
	}
	before = node.Calls.Load()
	if _, many, err := s.Scan(ctx, head+1, head+1, *parent, watching(addrs)); err != nil || len(many.Outputs) != 3 {
		t.Fatalf("watching 1,003 addresses: %v %v", describe(many.Outputs), err)
	}
	if more := node.Calls.Load() - before; more != few {
		t.Errorf("a block's scan cost %d calls watching 2 addresses and %d watching 1,003", few, more)
	}
	if _, _, err := s.Scan(ctx, head+1, head+1, chainhash.Hash{1}, watch); err != ErrReorged {
		t.Errorf("a block not chaining onto the cursor: %v, want ErrReorged", err)
	}
	if _, _, err := s.Scan(ctx, head+2, head+2, blocks[0].Hash, watch); !errors.Is(err, ErrReorged) {
		t.Errorf("a block above the head: %v, want ErrReorged", err)
	}

	// Replaced by fee: the replacement pays the first address more, and
	// conflicts with the payment it replaces.
	paid, err := n.Send(ctx, []btcnode.Out{{To: watched[0], Sats: 10_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	found, seen, err = s.Mempool(ctx, nil, watch)
	if err != nil || len(found.Outputs) != 1 || found.Outputs[0].TxID != paid.TxHash() {
		t.Fatalf("the payment to replace: %v %v", describe(found.Outputs), err)
	}
	bumped, err := n.Replace(ctx, paid, []btcnode.Out{{To: watched[0], Sats: 11_000}}, 5_000)
	if err != nil {
		t.Fatal(err)
	}
	found, now, err := s.Mempool(ctx, seen, watching(watched, paid))
	outs = found.Outputs
	if err != nil || len(outs) != 1 || outs[0].TxID != bumped.TxHash() || outs[0].Sats != 11_000 || now[paid.TxHash()] {
		t.Fatalf("after the replacement: %v %v, the replaced one still in the mempool: %v", describe(outs), err, now[paid.TxHash()])
	}
	if want := []Conflict{{TxID: paid.TxHash(), By: bumped.TxHash()}}; !slices.Equal(found.Conflicts, want) {
		t.Errorf("the replacement's conflicts: %v, want %v", found.Conflicts, want)
	}

	// Double-spent: a payment replaced by one paying someone else,
	// mined; the block's read tells the conflict.
	spent, err := n.Send(ctx, []btcnode.Out{{To: watched[1], Sats: 30_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	away, err := n.Replace(ctx, spent, []btcnode.Out{{To: stranger, Sats: 30_000}}, 4_000)
	if err != nil {
		t.Fatal(err)
	}
	tip, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	mined, found, err := s.Scan(ctx, tip+1, tip+1, chainhash.Hash{}, watching(watched, spent))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Conflict{{TxID: spent.TxHash(), By: away.TxHash(), Block: mined[0]}}; !slices.Equal(found.Conflicts, want) {
		t.Errorf("the double spend's conflicts: %v, want %v", found.Conflicts, want)
	}

	// A reorg: the block of the first payment leaves the chain.
	ok, err := s.Canonical(ctx, blocks[0])
	if err != nil || !ok {
		t.Fatalf("the mined block canonical: %v %v", ok, err)
	}
	if err := n.Client.InvalidateBlock(&blocks[0].Hash); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Canonical(ctx, blocks[0]); err != nil || ok {
		t.Fatalf("the invalidated block canonical: %v %v; want false", ok, err)
	}
	found, _, err = s.Mempool(ctx, now, watch)
	if err != nil || !slices.ContainsFunc(found.Outputs, func(o Output) bool { return o.TxID == tx.TxHash() }) {
		t.Fatalf("after the reorg, the payment back in the mempool: %v %v", describe(found.Outputs), err)
	}
}
