package btcsweep

import (
	"context"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/internal/btckeys"
)

// account makes a merchant's account key: its private key (the key file)
// and the engine's public key.
func account(t *testing.T, seed byte) (string, btckeys.Key) {
	t.Helper()
	xprv, key, err := btcnode.Account(seed)
	if err != nil {
		t.Fatal(err)
	}
	return xprv, key
}

// Three deposit addresses paid on a real node are swept in one
// transaction: the PSBT, passed as base64 to the signer as it would be to
// another machine, is refused by another account's key, signed by the
// merchant's, accepted by the node and mined, paying the destination all
// but a fee at the rate asked.
func TestSweepDepositAddresses(t *testing.T) {
	ctx := context.Background()
	n, node := btcnodetest.Start(t)
	xprv, key := account(t, 7)
	var paid []btcnode.Out
	for _, i := range []uint32{0, 1, 5} {
		a, err := key.DeriveAddress(i, btcnode.Params)
		if err != nil {
			t.Fatal(err)
		}
		paid = append(paid, btcnode.Out{To: a, Sats: 100_000 * int64(i+1)})
		if _, err := n.Send(ctx, paid[len(paid)-1:], 1_000); err != nil {
			t.Fatal(err)
		}
	}
	hashes, err := n.Mine(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	head, err := n.Client.GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]uint32{paid[0].To.EncodeAddress(): 0, paid[1].To.EncodeAddress(): 1, paid[2].To.EncodeAddress(): 5}
	_, found, err := btcscan.Scanner{Node: node, Params: btcnode.Params}.Scan(ctx, head, head, chainhash.Hash{}, btcscan.Watch{
		Addresses: func(_ context.Context, addrs []string) (map[string]bool, error) {
			w := map[string]bool{}
			for _, a := range addrs {
				_, w[a] = index[a]
			}
			return w, nil
		}})
	outs := found.Outputs
	if err != nil || len(outs) != 3 || outs[0].Block.Hash != *hashes[0] {
		t.Fatalf("the deposits found: %+v %v", outs, err)
	}
	var coins []Coin
	var total int64
	for _, o := range outs {
		coins = append(coins, Coin{Out: wireOut(o), Sats: o.Sats, Index: index[o.Address]})
		total += o.Sats
	}

	_, other := account(t, 9)
	dest, err := other.DeriveAddress(0, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	const rate = 5
	p, fee, err := Build(key, btcnode.Params, coins, dest, rate)
	if err != nil {
		t.Fatal(err)
	}
	b64, err := p.B64Encode()
	if err != nil {
		t.Fatal(err)
	}
	received := func() *psbt.Packet {
		p, err := psbt.NewFromRawBytes(strings.NewReader(b64), true)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	otherXprv, _ := account(t, 9)
	if _, err := Sign(received(), otherXprv); err == nil || !strings.Contains(err.Error(), "not a deposit address of this account key") {
		t.Fatalf("signed with another account's key: %v", err)
	}
	tx, err := Sign(received(), xprv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Client.SendRawTransaction(tx, false); err != nil {
		t.Fatalf("the node refused the sweep: %v", err)
	}
	if _, err := n.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	mined, err := n.Client.GetRawTransactionVerbose(ptr(tx.TxHash()))
	if err != nil || mined.Confirmations != 1 {
		t.Fatalf("the sweep mined: %+v %v", mined, err)
	}
	vsize := (blockchain.GetTransactionWeight(btcutil.NewTx(tx)) + 3) / 4
	if len(tx.TxOut) != 1 || tx.TxOut[0].Value != total-fee || fee < rate*vsize || fee > 2*rate*vsize {
		t.Fatalf("the sweep pays %d of %d sats with a fee of %d for %d vbytes; want all but a fee at about %d sat/vB",
			tx.TxOut[0].Value, total, fee, vsize, rate)
	}

	if _, _, err := Build(key, btcnode.Params, coins[:1], dest, 2_000); err == nil || !strings.Contains(err.Error(), "do not cover the fee") {
		t.Errorf("a sweep eaten by its fee: %v", err)
	}
}

func wireOut(o btcscan.Output) (out wire.OutPoint) {
	out.Hash, out.Index = o.TxID, o.Vout
	return out
}

func ptr[T any](v T) *T { return &v }

// A BIP84 wallet's export of the account's private key (vprv on the test
// networks, zprv on mainnet) is the same account as its tprv (xprv).
func TestAccountReadsABIP84WalletsExport(t *testing.T) {
	tprv, key := account(t, 7)
	payload, version, err := base58.CheckDecode(tprv)
	if err != nil {
		t.Fatal(err)
	}
	vprv := base58.CheckEncode(append([]byte{0x5f, 0x18, 0xbc}, payload[3:]...), version)
	if !strings.HasPrefix(vprv, "vprv") {
		t.Fatalf("re-encoded as %s", vprv)
	}
	for _, s := range []string{tprv, vprv} {
		_, got, err := Account(s)
		if err != nil || got.Identity() != key.Identity() {
			t.Fatalf("%s.. read as %v, %v; want the account %s", s[:8], got.Identity(), err, key.Identity())
		}
	}
	if _, _, err := Account(key.Canonical()); err == nil {
		t.Fatal("a public key was taken for the private one")
	}
}
