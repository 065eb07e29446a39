// Package btcnodetest starts the tests' Bitcoin node (btcd in regtest,
// package btcnode) and derives the addresses they pay.
package btcnodetest

import (
	"context"
	"testing"

	"github.com/btcsuite/btcd/btcutil"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/internal/btcrpc"
)

// Start starts a node for the test, stopped when the test ends, and the
// engine's client of it.
func Start(t testing.TB) (*btcnode.Node, *btcrpc.Failover) {
	t.Helper()
	ctx := context.Background()
	n, err := btcnode.Start(ctx, btcnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	f, err := btcrpc.Dial(ctx, []string{n.URL()}, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	return n, f
}

// Address is deposit address index of the merchant account made from
// seed (btcnode.Account), on regtest.
func Address(t testing.TB, seed byte, index uint32) btcutil.Address {
	t.Helper()
	_, key, err := btcnode.Account(seed)
	if err != nil {
		t.Fatal(err)
	}
	a, err := key.DeriveAddress(index, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
