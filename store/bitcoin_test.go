package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// A Bitcoin network's payments followed from what its scans recorded and
// the node's chain, on a real node: pending in the mempool, mined with
// confirmations that grow, pending again when a reorg takes the block
// away, mined again in the block that now holds it; a payment replaced by
// fee fails naming its replacement, and one double-spent in a block names
// the block. The scans keep their blocks in the store, and look up the
// watched transactions' spends there.
func TestBitcoinPaymentsFollowed(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	n, node := btcnodetest.Start(t)
	deposit, stranger := btcnodetest.Address(t, 4, 0), btcnodetest.Address(t, 5, 0)
	const network = "bitcoin-regtest"
	scanner := btcscan.Scanner{Node: node, Params: btcnode.Params}
	p := &chainwatch.BitcoinPoller{Bitcoin: scanner, Poller: chainwatch.Poller{Blocks: st.Chains().ScannedBlocks(network),
		FreshDepth: 2, HeadWait: 10 * time.Millisecond, PollInterval: 5 * time.Millisecond}}
	watch := btcscan.Watch{
		Addresses: func(_ context.Context, addrs []string) (map[string]bool, error) {
			out := map[string]bool{}
			for _, a := range addrs {
				out[a] = a == deposit.EncodeAddress()
			}
			return out, nil
		},
		Spends: func(ctx context.Context, ops []wire.OutPoint) (map[wire.OutPoint]chainhash.Hash, error) {
			return st.Chains().BitcoinSpends(ctx, network, ops)
		},
	}
	var cursor chainwatch.Cursor
	var mempool map[chainhash.Hash]bool
	scan := func() {
		t.Helper()
		for range 20 {
			out, err := p.Poll(ctx, cursor, mempool, watch)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Chains().RecordBitcoinScan(ctx, network, out.Found, time.Now()); err != nil {
				t.Fatal(err)
			}
			if cursor = out.Cursor; out.CaughtUp {
				mempool = out.Mempool
				return
			}
		}
		t.Fatal("the scan did not catch up")
	}
	check := func(txid chainhash.Hash) chainwatch.TxState {
		t.Helper()
		seen, ok, err := st.Chains().BitcoinSeen(ctx, network, txid)
		if err != nil || !ok {
			t.Fatalf("%s seen: %v %v", txid, ok, err)
		}
		state, err := chainwatch.CheckBitcoin(ctx, scanner, seen)
		if err != nil {
			t.Fatal(err)
		}
		return state
	}
	scan()

	tx, err := n.Send(ctx, []btcnode.Out{{To: deposit, Sats: 60_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	scan()
	if s := check(tx.TxHash()); s.Mined || s.Conflict != "" {
		t.Fatalf("in the mempool: %+v; want pending", s)
	}
	seen, _, err := st.Chains().BitcoinSeen(ctx, network, tx.TxHash())
	if want := (chainwatch.BitcoinOutput{Vout: 0, Address: deposit.EncodeAddress(), Sats: 60_000}); err != nil ||
		len(seen.Outputs) != 1 || seen.Outputs[0] != want {
		t.Fatalf("its outputs recorded: %+v %v; want %+v", seen.Outputs, err, want)
	}
	mined, err := n.Mine(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	scan()
	if s := check(tx.TxHash()); !s.Mined || !s.Succeeded || s.Confirmations != 1 || s.BlockHash.Hex() != "0x"+mined[0].String() {
		t.Fatalf("mined in %s: %+v; want one confirmation there", mined[0], s)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if s := check(tx.TxHash()); s.Confirmations != 2 {
		t.Fatalf("a block later: %d confirmations, want 2", s.Confirmations)
	}

	if err := n.Client.InvalidateBlock(mined[0]); err != nil {
		t.Fatal(err)
	}
	if s := check(tx.TxHash()); s.Mined || s.Conflict != "" {
		t.Fatalf("its block taken away: %+v; want pending", s)
	}
	again, err := n.Mine(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	scan()
	if s := check(tx.TxHash()); !s.Mined || s.Confirmations != 1 || s.BlockHash.Hex() != "0x"+again[0].String() {
		t.Fatalf("mined again in %s: %+v", again[0], s)
	}

	paid, err := n.Send(ctx, []btcnode.Out{{To: deposit, Sats: 20_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	scan()
	bumped, err := n.Replace(ctx, paid, []btcnode.Out{{To: deposit, Sats: 20_000}}, 3_000)
	if err != nil {
		t.Fatal(err)
	}
	scan()
	if s := check(paid.TxHash()); s.Mined || !strings.Contains(s.Conflict, bumped.TxHash().String()+" (in the mempool)") {
		t.Fatalf("replaced by fee: %+v; want its replacement named", s)
	}
	if s := check(bumped.TxHash()); s.Mined || s.Conflict != "" {
		t.Fatalf("the replacement: %+v; want pending", s)
	}

	spent, err := n.Send(ctx, []btcnode.Out{{To: deposit, Sats: 30_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	scan()
	away, err := n.Replace(ctx, spent, []btcnode.Out{{To: stranger, Sats: 30_000}}, 5_000)
	if err != nil {
		t.Fatal(err)
	}
	scan()
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	scan()
	if s := check(spent.TxHash()); s.Mined || !strings.Contains(s.Conflict, away.TxHash().String()+" (in a block)") {
		t.Fatalf("double-spent: %+v; want the spend in a block named", s)
	}
	if s := check(bumped.TxHash()); !s.Mined {
		t.Fatalf("the replacement, a block later: %+v; want mined", s)
	}
}

// What a scan saw of a transaction: in a block, and in the mempool read
// after it (a node puts a reorged branch's transactions back in its
// mempool before it takes out the new branch's), the block stands; a
// later scan that sees it in the mempool only keeps the block; a later
// block replaces it.
func TestABlockSightingOutlastsTheMempool(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	const network = "bitcoin-regtest"
	txid := chainhash.Hash{7}
	block := func(height int64, b byte) btcscan.Block {
		return btcscan.Block{Height: height, Hash: chainhash.Hash{b}, Time: 1_700_000_000 + height}
	}
	seen := func(b btcscan.Block) btcscan.Output {
		return btcscan.Output{TxID: txid, Vout: 1, Address: "bcrt1qexample", Sats: 5_000, Block: b,
			Spends: []wire.OutPoint{{Hash: chainhash.Hash{1}, Index: 0}}}
	}
	record := func(outs ...btcscan.Output) chainwatch.BitcoinSeen {
		t.Helper()
		if err := st.Chains().RecordBitcoinScan(ctx, network, btcscan.Found{Outputs: outs}, time.Now()); err != nil {
			t.Fatal(err)
		}
		got, ok, err := st.Chains().BitcoinSeen(ctx, network, txid)
		if err != nil || !ok {
			t.Fatalf("seen: %v %v", ok, err)
		}
		return got
	}
	if got := record(seen(block(444, 0x44)), seen(btcscan.Block{})); got.Block != block(444, 0x44) || len(got.Outputs) != 1 {
		t.Fatalf("seen in block 444, then in the mempool, in one scan: recorded %+v", got)
	}
	if got := record(seen(btcscan.Block{})); got.Block != block(444, 0x44) {
		t.Fatalf("seen in the mempool by a later scan: recorded %+v; want block 444 kept", got)
	}
	if got := record(seen(btcscan.Block{}), seen(block(445, 0x45))); got.Block != block(445, 0x45) || len(got.Outputs) != 1 {
		t.Fatalf("seen in the mempool, then in block 445: recorded %+v", got)
	}
}
