package activities_test

import (
	"context"
	"testing"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// When the dev chain restarts as a new chain, chainwatch's cursor points
// at a block the new chain does not have: the scan starts again near the
// new head instead of waiting for a block that will never come.
func TestScanAfterTheChainWasReplaced(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	old, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		old.Commit()
	}
	acts := &activities.Activities{Store: st, Chains: connect(t, old)}
	out, err := acts.ScanNetwork(ctx, workflows.ScanInput{Network: "devnet"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Cursor.Number < 20 {
		t.Fatalf("first scan stopped at %d", out.Cursor.Number)
	}
	old.Close()

	fresh, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	fresh.Commit()
	acts.Chains = connect(t, fresh)
	next, err := acts.ScanNetwork(ctx, workflows.ScanInput{Network: "devnet", Cursor: out.Cursor})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := fresh.Client().BlockNumber(ctx)
	if next.Cursor.Number != head || next.Cursor.Hash == out.Cursor.Hash {
		t.Fatalf("scan after the new chain: cursor %d %s, head %d", next.Cursor.Number, next.Cursor.Hash, head)
	}
}

func connect(t *testing.T, c *devchain.Chain) chainwatch.Chains {
	chains, err := chainwatch.Connect(context.Background(), []chainwatch.Network{{Key: "devnet", ChainID: 1337,
		// A dead endpoint first: calls fail over to the live one.
		RPCURLs: []string{"http://127.0.0.1:1", c.URL}}},
		payment.Catalog{Assets: []payment.Asset{{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337,
			TokenAddress: c.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chains
}
