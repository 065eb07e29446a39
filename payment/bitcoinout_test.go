package payment

import (
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
)

// A Bitcoin item takes an address of its network and a transaction ID as
// Bitcoin writes it; a transaction that does not pay it from the
// project's own coins is rejected (back to its signature), never an
// exception: the project's coins are one pool, not the item's.
func TestBitcoinAddressesTransactionIDsAndRejections(t *testing.T) {
	for _, c := range []struct {
		in     string
		params *chaincfg.Params
		out    string
		msg    string
	}{
		{"bcrt1qlw934x4zvxnwxv3t4h553u0yg6spvttnyu4yw2", &chaincfg.RegressionNetParams, "bcrt1qlw934x4zvxnwxv3t4h553u0yg6spvttnyu4yw2", ""},
		{"BCRT1QLW934X4ZVXNWXV3T4H553U0YG6SPVTTNYU4YW2", &chaincfg.RegressionNetParams, "bcrt1qlw934x4zvxnwxv3t4h553u0yg6spvttnyu4yw2", ""},
		{"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", &chaincfg.RegressionNetParams, "", "is a Bitcoin address of mainnet, not of regtest, the network this is paid on"},
		{"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", &chaincfg.MainNetParams, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", ""},
		{"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdx", nil, "", "is not a Bitcoin address"}, // checksum
		{"0xc0ffee000000000000000000000000000000beef", nil, "", "is not a Bitcoin address"},
		{"", nil, "", "is required"},
	} {
		out, msg := CheckBitcoinPayee(c.in, c.params)
		if out != c.out || msg != c.msg {
			t.Errorf("CheckBitcoinPayee(%q) = %q, %q; want %q, %q", c.in, out, msg, c.out, c.msg)
		}
	}

	now := time.Now()
	o := Outgoing{Status: RefundAwaitingSignature, Network: "bitcoin-regtest", AssetDefinitionID: "btc-regtest", Symbol: "BTC", Decimals: 8,
		AmountBaseUnits: "30000", FromAddress: "bcrt1qsource", ToAddress: "bcrt1qdest"}
	if _, err := o.report("refund", "0x"+strings.Repeat("ab", 31), now); err == nil || o.TxHash != "" {
		t.Fatalf("a short ID reported: %v", err)
	}
	txid := strings.Repeat("AB", 32)
	if changed, err := o.report("refund", "0x"+txid, now); !changed || err != nil || o.TxHash != strings.ToLower(txid) {
		t.Fatalf("a transaction ID with 0x: %v %v %q; want it recorded lowercase, without 0x", changed, err, o.TxHash)
	}
	wrong := SentLook{Mined: true, Succeeded: true, Confirmations: 1, Required: 1, Sender: "bcrt1qsource",
		Transfers: []Transfer{{LogIndex: 0, From: "bcrt1qsource", To: "bcrt1qdest", AssetID: "btc-regtest", AmountBaseUnits: "29000"}}}
	if move := o.follow(wrong); move != MoveRejected || o.Status != RefundAwaitingSignature || o.TxHash != "" ||
		!strings.Contains(o.FailureReason, "does not pay 0.0003 BTC to bcrt1qdest") {
		t.Fatalf("a transaction of the project's coins paying less: %q %+v", move, o)
	}
	if _, err := o.report("refund", txid, now); err != nil {
		t.Fatal(err)
	}
	right := wrong
	right.Transfers = []Transfer{{LogIndex: 1, From: "bcrt1qsource", To: "bcrt1qdest", AssetID: "btc-regtest", AmountBaseUnits: "30000"}}
	// The output counts for a payment (or another item) already: not taken.
	taken := right
	taken.Taken = map[int]string{1: "tx_01payment"}
	if move := o.follow(taken); move != MoveRejected || !strings.Contains(o.FailureReason, "is counted for tx_01payment already") {
		t.Fatalf("an output another record counts: %q %+v", move, o)
	}
	if _, err := o.report("refund", txid, now); err != nil {
		t.Fatal(err)
	}
	if move := o.follow(right); move != string(RefundFinalized) || *o.LogIndex != 1 {
		t.Fatalf("the transaction paying it: %q %+v", move, o)
	}
}
