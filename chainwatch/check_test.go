package chainwatch

import (
	"encoding/json"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
)

// A native payment of a type go-ethereum knows, as each network's nodes
// write it, passes its check, and fails it once its value or its sender
// is changed: the transaction no longer hashes to its hash, or its
// signature is another's. A network's own types (the OP stack's and
// Arbitrum's deposits and redemptions) are taken as written.
func TestANativePaymentIsCheckedAgainstItsSignature(t *testing.T) {
	checked := 0
	for _, name := range stubNetworks {
		fx, err := loadStubFixture(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range fx.Expect {
			if e.LogIndex != -1 {
				continue
			}
			raw := fx.txs[e.TxHash]
			var tx rpcTx
			if err := json.Unmarshal(raw, &tx); err != nil {
				t.Fatal(err)
			}
			if err := checkSent(raw, tx); err != nil {
				t.Fatalf("%s %s: %v", name, e.TxHash, err)
			}
			if uint64(tx.Type) > types.SetCodeTxType {
				continue
			}
			checked++
			for field, check := range map[string]string{"value": "tx_hash", "from": "tx_sender"} {
				var fields map[string]json.RawMessage
				if err := json.Unmarshal(raw, &fields); err != nil {
					t.Fatal(err)
				}
				if field == "value" {
					fields["value"] = json.RawMessage(`"0xde0b6b3a7640000"`)
				}
				altered, _ := json.Marshal(fields)
				var lied rpcTx
				if err := json.Unmarshal(altered, &lied); err != nil {
					t.Fatal(err)
				}
				if field == "from" {
					lied.From = fx.Watched[0]
				}
				if got := nodetrust.CheckOf(checkSent(altered, lied)); got != check {
					t.Errorf("%s %s with another %s: check %q, want %q", name, e.TxHash, field, got, check)
				}
			}
		}
	}
	if checked < 4 {
		t.Fatalf("%d native payments of go-ethereum's types checked; the fixtures hold more", checked)
	}
}
