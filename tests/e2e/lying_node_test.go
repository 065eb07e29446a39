package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/redact"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/tests/rpcproxy"
)

// The engine's only node of the dev chain lies about where a payment's
// logs are (each one said to be in the block before its own, by that
// block's real hash): the scan that reads the lie fails its check, is
// retried, and records nothing of the payment meanwhile; the rejected
// answers show in the metrics. Once the node tells the truth, the payment
// is recorded in its real block and the session completes.
func TestALyingNodeRecordsNoPaymentUntilItIsHonest(t *testing.T) {
	ctx := context.Background()
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "7", "usdc-devnet")
	head, err := chain.Client().BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.SetLie(rpcproxy.LogBlock, head+1)
	t.Cleanup(func() { node.SetLie(rpcproxy.Honest, 0) })

	hash := payToken(t, 2, str(cs["depositAddress"]), units("7000000"))
	receipt, err := chain.WaitMined(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	rejected := fmt.Sprintf(`paymentsd_rpc_answers_rejected_total{check="log_block",network="devnet",node=%q}`, redact.URL(node.URL))
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		m := metricsText(t, ts.URL)
		return strings.Contains(m, rejected), "while the node lies, /metrics shows:\n" + grepLines(m, "rejected")
	})
	s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"]), "").data()
	if txs := sessionTransactions(t, ts.URL, cs); len(txs) != 0 || s["amountPaidUsd"] != "0.00" {
		t.Fatalf("while the node lies about the payment's logs: session %v, transactions %v", s, txs)
	}

	node.SetLie(rpcproxy.Honest, 0)
	tx := waitTx(t, ts.URL, keys, hash, "finalized")
	if tx["blockHash"] != receipt.BlockHash.Hex() || tx["blockNumber"] != float64(receipt.BlockNumber.Uint64()) {
		t.Fatalf("the payment recorded in block %v %v; it is in %d %s", tx["blockNumber"], tx["blockHash"], receipt.BlockNumber,
			receipt.BlockHash)
	}
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "7.00" {
		t.Fatalf("the session after the node is honest again: %v", done)
	}
}

// The engine's only Bitcoin node lies about every transaction it is asked
// for (each paying twice what it does, which no longer hashes to its
// ID): a payment in the mempool is not recorded while it does; once the
// node is honest, the payment is recorded for what it pays, and
// completes its session when mined.
func TestALyingBitcoinNodeRecordsNoPaymentUntilItIsHonest(t *testing.T) {
	ctx := context.Background()
	keys, base := bitcoinProject(t, 0x4c)
	cs := openSession(t, base, keys, "30", devstack.BitcoinAsset)
	to, err := btcutil.DecodeAddress(str(option(t, cs, devstack.BitcoinAsset)["depositAddress"]), btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	bitcoinNode.SetLie(rpcproxy.TxID, 0)
	t.Cleanup(func() { bitcoinNode.SetLie(rpcproxy.Honest, 0) })
	tx, err := stack.Bitcoin.Send(ctx, []btcnode.Out{{To: to, Sats: 30_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	rejected := fmt.Sprintf(`check="txid",network=%q`, devstack.BitcoinNetwork)
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		m := metricsText(t, base)
		return strings.Contains(m, rejected), "while the node lies, /metrics shows:\n" + grepLines(m, "rejected")
	})
	if txs := sessionTransactions(t, base, cs); len(txs) != 0 {
		t.Fatalf("while the node lies about the payment: %v", txs)
	}

	bitcoinNode.SetLie(rpcproxy.Honest, 0)
	pending := sessionTx(t, base, str(cs["token"]), tx.TxHash().String(), "pending")
	if pending["amount"] != "0.0003" || pending["amountUsd"] != "30.00" {
		t.Fatalf("the payment once the node is honest: %v", pending)
	}
	if _, err := stack.Bitcoin.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := waitSession(t, base, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "30.00" {
		t.Fatalf("the session: %v", done)
	}
}

// /readyz names a network one of whose two nodes lies (every block's hash
// another): the liar is set aside, the network says degraded with the
// count of its nodes set aside (not their addresses), the honest node's
// head is shown, and the API stays ready to serve.
func TestReadinessNamesANetworkWhoseNodeLies(t *testing.T) {
	liar, err := rpcproxy.Start(chain.URL, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer liar.Close()
	honest, err := rpcproxy.Start(chain.URL, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer honest.Close()
	liar.SetLie(rpcproxy.BlockHash, 0)
	n := devnet("")
	n.RPCURLs = []string{liar.URL, honest.URL}
	chains, err := chainwatch.Connect(context.Background(), []chainwatch.Network{n}, catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := newAPI(t, apiOptions{chains: chains})
	r := get(t, ts.URL, "/readyz", "")
	mustStatus(t, r, http.StatusOK)
	dev, _ := r.data()["networks"].(map[string]any)["devnet"].(map[string]any)
	if r.data()["status"] != "degraded" || dev["status"] != "degraded" || dev["head"].(float64) < 1 || dev["nodes"] != float64(2) ||
		dev["nodesSetAside"] != float64(1) || strings.Contains(string(r.Raw), liar.URL) {
		t.Fatalf("ready with a lying node = %s", r.Raw)
	}
}
