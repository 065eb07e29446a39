package activities

import (
	"testing"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/workflows"
)

// A scan's transfer carries its transaction's transfers only when that
// transaction pays its session alone and its block was traced: then they
// are every transfer of it the session's records could hold.
func TestATransferCarriesItsTransactionsTransfersOnlyWhenThoseAreAll(t *testing.T) {
	transfer := func(tx string, logIndex int, session string) workflows.SessionTransfer {
		return workflows.SessionTransfer{SessionID: session, ChainID: 1337, TxHash: tx, LogIndex: logIndex, From: "0xf",
			To: "0x" + session, AssetID: "usdc-devnet", AmountBaseUnits: "1"}
	}
	ts := []workflows.SessionTransfer{
		transfer("0xa", 0, "s1"), transfer("0xa", -1, "s1"), // pays s1 alone, twice
		transfer("0xb", 0, "s1"), transfer("0xb", 1, "s2"), // pays two sessions
		transfer("0xc", 0, "s3"), // pays s3 alone, in a block not traced
		transfer("0xd", 0, ""),   // pays a shared recipient no session holds
	}
	workflows.MarkPaysSessionAlone(ts)
	attachTxTransfers(ts, map[string]bool{"0xc": true})
	want := []payment.Transfer{{LogIndex: 0, From: "0xf", To: "0xs1", AssetID: "usdc-devnet", AmountBaseUnits: "1"},
		{LogIndex: -1, From: "0xf", To: "0xs1", AssetID: "usdc-devnet", AmountBaseUnits: "1"}}
	for i, p := range ts {
		switch {
		case p.TxHash == "0xa":
			if !p.PaysSessionAlone || len(p.TxTransfers) != 2 || p.TxTransfers[0] != want[0] || p.TxTransfers[1] != want[1] {
				t.Errorf("transfer %d of 0xa: pays its session alone %v, %+v", i, p.PaysSessionAlone, p.TxTransfers)
			}
		case p.TxTransfers != nil:
			t.Errorf("transfer %d of %s carries %+v", i, p.TxHash, p.TxTransfers)
		}
	}
}
