package btcnode

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// A payment to a deposit address derived from a merchant's vpub: in the
// node's mempool first, then mined, its output paying the address the
// amount sent; the wallet pays again from its change.
func TestPayADepositAddress(t *testing.T) {
	ctx := context.Background()
	n, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)

	_, key, err := Account(1)
	if err != nil {
		t.Fatal(err)
	}
	deposit, err := key.DeriveAddress(0, Params)
	if err != nil {
		t.Fatal(err)
	}

	const sats = 12_345_678
	txid, err := n.Pay(ctx, deposit, sats, 2_000)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := n.Client.GetRawMempool()
	if err != nil || !slices.ContainsFunc(pool, func(h *chainhash.Hash) bool { return *h == *txid }) {
		t.Fatalf("the payment %s is not in the mempool (%v): %v", txid, err, pool)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	tx, err := n.Client.GetRawTransactionVerbose(txid)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Confirmations != 1 || len(tx.Vout) < 1 || tx.Vout[0].ScriptPubKey.Address != deposit.EncodeAddress() || tx.Vout[0].Value != 0.12345678 {
		t.Fatalf("the mined payment: %d confirmations, outputs %+v; want 0.12345678 BTC to %s", tx.Confirmations, tx.Vout, deposit)
	}
	if _, err := n.Pay(ctx, deposit, sats, 2_000); err != nil {
		t.Fatalf("a second payment, from the change: %v", err)
	}
}

// A merchant's node that follows the network (Peer): it takes the
// network's chain and the payments its mempool relays; restarted, it
// starts on an empty chain (btcd in regtest), takes the chain again from
// its peer, and has lost the payments its mempool held. An Independent
// wallet pays each payment from a coin of its own, never another
// payment's change.
func TestAPeerFollowsTheNetworkAndRestarts(t *testing.T) {
	ctx := context.Background()
	network, err := Start(ctx, Config{Independent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(network.Stop)
	merchant, err := Start(ctx, Config{Peer: network.P2PAddr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(merchant.Stop)
	if err := merchant.WaitSynced(ctx, network, time.Minute); err != nil {
		t.Fatal(err)
	}
	_, key, err := Account(2)
	if err != nil {
		t.Fatal(err)
	}
	deposit, err := key.DeriveAddress(0, Params)
	if err != nil {
		t.Fatal(err)
	}
	first, err := network.Send(ctx, []Out{{deposit, 10_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	second, err := network.Send(ctx, []Out{{deposit, 20_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	if in := second.TxIn[0].PreviousOutPoint; in.Hash == first.TxHash() {
		t.Fatalf("the second payment spends the first's change %v", in)
	}
	inPool := func(n *Node, h chainhash.Hash) bool {
		pool, err := n.Client.GetRawMempool()
		return err == nil && slices.ContainsFunc(pool, func(p *chainhash.Hash) bool { return *p == h })
	}
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		return inPool(merchant, second.TxHash()), "the network did not relay the payment to the merchant's node"
	})

	if err := merchant.Restart(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := merchant.WaitSynced(ctx, network, time.Minute); err != nil {
		t.Fatal(err)
	}
	if inPool(merchant, second.TxHash()) || !inPool(network, second.TxHash()) {
		t.Fatal("after the restart the merchant's mempool still holds the payment, or the network's lost it")
	}
	if _, err := network.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := merchant.WaitSynced(ctx, network, time.Minute); err != nil {
		t.Fatal(err)
	}
	id := second.TxHash()
	tx, err := merchant.Client.GetRawTransactionVerbose(&id)
	if err != nil || tx.Confirmations != 1 {
		t.Fatalf("the payment on the merchant's node after a block: %+v, %v", tx, err)
	}
}

// Build takes a folder relative to the caller's working folder, as a
// command's flag gives it, though the build runs in the tool's module.
func TestBuildIntoARelativeFolder(t *testing.T) {
	t.Chdir(t.TempDir())
	bin, err := Build(context.Background(), "out")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Abs(filepath.Join("out", "btcd"))
	if _, err := os.Stat(want); err != nil || bin != want {
		t.Fatalf("built %q (%v); want %q", bin, err, want)
	}
}
