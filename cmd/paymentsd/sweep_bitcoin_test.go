package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/internal/btcsweep"
)

// estimatingNode stands in front of a btcd node in regtest, which has no
// fee estimator (estimatesmartfee), and answers that call as Bitcoin
// Core's does, with the rate set (sat/vB); every other call reaches the
// node.
func estimatingNode(t *testing.T, n *btcnode.Node, rate *atomic.Int64) string {
	t.Helper()
	node, err := url.Parse(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(node)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var call struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &call) == nil && call.Method == "estimatesmartfee" {
			feerate := float64(rate.Load()) * 1000 / 1e8 // BTC per kvB
			_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"feerate": feerate, "blocks": 6}, "error": nil, "id": call.ID})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	u.User = node.User
	return u.String()
}

// A sweep pays the node's estimate up to the ceiling (--max-fee-rate) and
// no more: an estimate above it is capped to it, a --fee-rate above it is
// refused. Coins worth no more than what spending them costs at the rate
// are left where they are, and the output says so; at a rate low enough
// they are swept like the others.
func TestBitcoinSweepCapsTheFeeRateAndLeavesDust(t *testing.T) {
	ctx := context.Background()
	n, _ := btcnodetest.Start(t)
	const seed = 0x51
	xprv, key, err := btcnode.Account(seed)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "bitcoin.xprv")
	if err := os.WriteFile(keyFile, []byte(xprv+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A payment of 0.002 BTC, and two of 2,000 and 3,000 sats: dust at 50
	// sat/vB (an input costs 68 vB × 50 = 3,400 sats), not at 10.
	var funded []btcsweep.Funded
	var outs []btcnode.Out
	for i, sats := range []int64{200_000, 2_000, 3_000} {
		a, err := key.DeriveAddress(uint32(i), btcnode.Params)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, btcnode.Out{To: a, Sats: sats})
	}
	tx, err := n.Send(ctx, outs, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		funded = append(funded, btcsweep.Funded{Index: uint32(i), Address: o.To.EncodeAddress(),
			Outputs: []btcsweep.Paid{{Out: wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}, Sats: o.Sats, Final: true}}})
	}
	_, other, _ := btcnode.Account(0x52)
	dest, err := other.DeriveAddress(0, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	var estimate atomic.Int64
	rpcURL := estimatingNode(t, n, &estimate)
	sweep := func(o bitcoinSweep) (string, error) {
		t.Helper()
		o.rpcURL, o.to, o.keyFile, o.journal = rpcURL, dest.EncodeAddress(), keyFile, filepath.Join(dir, "sweep.journal.json")
		var out bytes.Buffer
		err := sweepBitcoin(ctx, &out, nil, funded, o)
		return out.String(), err
	}
	contains := func(what, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Fatalf("%s lacks %q:\n%s", what, w, out)
			}
		}
	}

	estimate.Store(10)
	low, err := sweep(bitcoinSweep{maxFeeRate: 50})
	if err != nil {
		t.Fatal(err)
	}
	contains("the dry run at the node's estimate under the ceiling", low, "Fee rate: 10 sat/vB, the node's estimate (ceiling 50 sat/vB)",
		"Sweep 3 outputs holding 0.00205 BTC")
	if strings.Contains(low, "dust") {
		t.Fatalf("dust at 10 sat/vB:\n%s", low)
	}

	if _, err := sweep(bitcoinSweep{feeRate: 80, maxFeeRate: 50, execute: true}); err == nil ||
		!strings.Contains(err.Error(), "the fee rate 80 sat/vB is above the ceiling of 50 sat/vB") {
		t.Fatalf("a --fee-rate above the ceiling: %v", err)
	}

	estimate.Store(500)
	capped, err := sweep(bitcoinSweep{maxFeeRate: 50, execute: true})
	if err != nil {
		t.Fatal(err)
	}
	contains("the sweep at an estimate above the ceiling", capped,
		"Fee rate: 50 sat/vB, the ceiling: the node estimates 500 sat/vB, above the ceiling of 50 sat/vB",
		"Left as dust: 2 outputs holding 0.00005 BTC, each worth no more than the 3400 sats spending it costs at 50 sat/vB",
		fmt.Sprintf("Sweep 1 outputs holding 0.002 BTC: 0.001939 BTC to %s, 6100 sats of fee (50 sat/vB)", dest))
	j, err := btcsweep.ReadJournal(filepath.Join(dir, "sweep.journal.json"))
	if err != nil || j == nil {
		t.Fatalf("the journal: %v %v", j, err)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	node := n.Client
	swept, err := node.GetRawTransactionVerbose(mustHash(t, j.TxID))
	if err != nil || swept.Confirmations != 1 || len(swept.Vin) != 1 || swept.Vin[0].Vout != 0 {
		t.Fatalf("the sweep on the node: %+v %v; want the 0.002 BTC coin alone spent, mined", swept, err)
	}
	h := tx.TxHash()
	for i := uint32(1); i <= 2; i++ {
		if left, err := node.GetTxOut(&h, i, false); err != nil || left == nil {
			t.Errorf("the dust coin %d was spent: %+v %v", i, left, err)
		}
	}
}

func mustHash(t *testing.T, txid string) *chainhash.Hash {
	t.Helper()
	h, err := chainhash.NewHashFromStr(txid)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
