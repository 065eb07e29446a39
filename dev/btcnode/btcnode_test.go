package btcnode

import (
	"context"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
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
