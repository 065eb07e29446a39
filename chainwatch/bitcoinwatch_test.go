package chainwatch_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/payment"
)

// On a real node, a Bitcoin network is followed as an EVM chain is: a
// payment is found in the mempool, then in the block that mines it; a
// reorg rewinds the scan to the newest kept block still on the chain and
// finds the payment again in the block that now holds it; a replacement
// by fee conflicts with the payment it replaces. The kept blocks' hashes
// are the ones the node shows.
func TestABitcoinNetworkFollowed(t *testing.T) {
	ctx := context.Background()
	n, node := btcnodetest.Start(t)
	deposit := btcnodetest.Address(t, 3, 0)
	blocks := &memBlocks{}
	p := &chainwatch.BitcoinPoller{Bitcoin: btcscan.Scanner{Node: node, Params: btcnode.Params},
		Poller: chainwatch.Poller{Blocks: blocks, MaxRange: 4, FreshDepth: 3, HeadWait: 20 * time.Millisecond,
			PollInterval: 5 * time.Millisecond}}
	var cursor chainwatch.Cursor
	var seen map[chainhash.Hash]bool
	var watchedTxs []*wire.MsgTx
	watch := btcscan.Watch{
		Addresses: func(_ context.Context, addrs []string) (map[string]bool, error) {
			return map[string]bool{deposit.EncodeAddress(): slices.Contains(addrs, deposit.EncodeAddress())}, nil
		},
		Spends: func(_ context.Context, ops []wire.OutPoint) (map[wire.OutPoint]chainhash.Hash, error) {
			out := map[wire.OutPoint]chainhash.Hash{}
			for _, tx := range watchedTxs {
				for _, in := range tx.TxIn {
					if slices.Contains(ops, in.PreviousOutPoint) {
						out[in.PreviousOutPoint] = tx.TxHash()
					}
				}
			}
			return out, nil
		},
	}
	// catchUp polls until the scan reaches the head, and returns what the
	// polls found.
	catchUp := func() btcscan.Found {
		t.Helper()
		var all btcscan.Found
		for range 50 {
			out, err := p.Poll(ctx, cursor, seen, watch)
			if err != nil {
				t.Fatal(err)
			}
			cursor = out.Cursor
			all.Outputs = append(all.Outputs, out.Found.Outputs...)
			all.Conflicts = append(all.Conflicts, out.Found.Conflicts...)
			if out.CaughtUp {
				if out.Mempool == nil {
					t.Fatal("a poll at the head left the mempool unread")
				}
				seen = out.Mempool
				return all
			}
			if out.Mempool != nil {
				t.Fatal("a poll short of the head read the mempool")
			}
		}
		t.Fatal("the scan did not reach the head")
		return all
	}
	head, err := node.BlockCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if found := catchUp(); len(found.Outputs) != 0 || cursor.Number != uint64(head) {
		t.Fatalf("a first scan: cursor %d, found %v; want the head %d and nothing", cursor.Number, found.Outputs, head)
	}
	if want, err := node.BlockHash(ctx, head); err != nil || cursor.Hash.Hex() != "0x"+want.String() {
		t.Fatalf("the cursor's hash %s, the node's %v (%v)", cursor.Hash.Hex(), want, err)
	}

	tx, err := n.Send(ctx, []btcnode.Out{{To: deposit, Sats: 50_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	watchedTxs = append(watchedTxs, tx)
	found := catchUp()
	if len(found.Outputs) != 1 || found.Outputs[0].TxID != tx.TxHash() || found.Outputs[0].Block.Height != 0 {
		t.Fatalf("the payment in the mempool: %+v", found.Outputs)
	}
	if found := catchUp(); len(found.Outputs) != 0 {
		t.Fatalf("the mempool read again: %+v; want nothing new", found.Outputs)
	}

	mined, err := n.Mine(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	found = catchUp()
	if len(found.Outputs) != 1 || found.Outputs[0].Block.Hash != *mined[0] || found.Outputs[0].Block.Height != head+1 {
		t.Fatalf("the payment mined in %v: %+v", mined[0], found.Outputs)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	catchUp()

	// A reorg two blocks deep: the payment's block and the next leave
	// the chain, three others take their place, the first mining the
	// payment again.
	if err := n.Client.InvalidateBlock(mined[0]); err != nil {
		t.Fatal(err)
	}
	again, err := n.Mine(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	rewound := len(blocks.starts)
	found = catchUp()
	if blocks.starts[rewound] != uint64(head+1) {
		t.Errorf("after the reorg the scan went on from block %d, want %d", blocks.starts[rewound], head+1)
	}
	var inBlock []btcscan.Output
	for _, o := range found.Outputs {
		if o.Block.Height > 0 {
			inBlock = append(inBlock, o)
		}
	}
	if len(inBlock) != 1 || inBlock[0].Block.Hash != *again[0] || cursor.Number != uint64(head+3) {
		t.Fatalf("after the reorg: %+v at cursor %d; want the payment in %v, the cursor at %d", found.Outputs, cursor.Number,
			again[0], head+3)
	}

	// Replaced by fee: the replacement conflicts with the payment.
	paid, err := n.Send(ctx, []btcnode.Out{{To: deposit, Sats: 20_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	watchedTxs = append(watchedTxs, paid)
	catchUp()
	bumped, err := n.Replace(ctx, paid, []btcnode.Out{{To: deposit, Sats: 20_000}}, 3_000)
	if err != nil {
		t.Fatal(err)
	}
	found = catchUp()
	if want := []btcscan.Conflict{{TxID: paid.TxHash(), By: bumped.TxHash()}}; !slices.Equal(found.Conflicts, want) ||
		len(found.Outputs) != 1 || found.Outputs[0].TxID != bumped.TxHash() {
		t.Fatalf("the replacement: %+v, conflicts %v; want the replacement found, conflicting with the payment", found.Outputs,
			found.Conflicts)
	}
}

// A Bitcoin network is dialed as its node answers, with bitcoin priced by
// a feed on an EVM network; an asset that cannot be bitcoin, a price it
// cannot have, and two networks of one chain are refused, by name.
func TestABitcoinNetworkConnected(t *testing.T) {
	ctx := context.Background()
	n, _ := btcnodetest.Start(t)
	network := chainwatch.Network{Key: "btc", Kind: chainwatch.KindBitcoin, Chain: "regtest", RPCURLs: []string{n.URL()}}
	btc := payment.Asset{ID: "btc", Symbol: "BTC", Decimals: 8, Network: "btc", Price: payment.PriceSource{
		Kind: payment.PriceChainlink, Aggregator: "0x0000000000000000000000000000000000000001", Network: "ethereum"}}
	chains, err := chainwatch.Connect(ctx, []chainwatch.Network{network}, payment.Catalog{Assets: []payment.Asset{btc}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := chains["btc"]
	if c.Family().Kind() != chainwatch.KindBitcoin || c.Client != nil || len(c.Assets) != 1 || c.Network.Confirmations != 1 || c.Params != btcnode.Params {
		t.Fatalf("the network served: %s, assets %v, depth %d", c.Family().Kind(), c.Assets, c.Network.Confirmations)
	}
	if head, err := c.BitcoinScanner().Head(ctx); err != nil || head < btcnode.SegWitActive {
		t.Fatalf("its head: %d %v", head, err)
	}
	token, pegged, decimals := btc, btc, btc
	token.TokenAddress = "0x0000000000000000000000000000000000000002"
	pegged.Price = payment.PriceSource{Kind: payment.PriceUSDPegged}
	decimals.Decimals = 18
	for name, a := range map[string]payment.Asset{"a token": token, "a pegged price": pegged, "18 decimals": decimals} {
		if _, err := chainwatch.Connect(ctx, []chainwatch.Network{network}, payment.Catalog{Assets: []payment.Asset{a}}, nil); err == nil ||
			!strings.Contains(err.Error(), `asset "btc"`) {
			t.Errorf("bitcoin with %s: %v; want it refused", name, err)
		}
	}
	again := network
	again.Key = "btc-2"
	if _, err := chainwatch.Connect(ctx, []chainwatch.Network{network, again}, payment.Catalog{}, nil); err == nil ||
		!strings.Contains(err.Error(), `networks "btc" and "btc-2" are both Bitcoin's regtest`) {
		t.Errorf("two networks of one chain: %v", err)
	}
	again.Chain = "signet" // its node is regtest's, but the environment is checked first
	if _, err := chainwatch.Connect(ctx, []chainwatch.Network{network, again}, payment.Catalog{}, nil); err == nil ||
		!strings.Contains(err.Error(), `networks "btc" and "btc-2" are both Bitcoin networks of one environment`) {
		t.Errorf("two sandbox Bitcoin networks: %v", err)
	}
}
