package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// A session paid in bitcoin is refunded as an EVM one is: created by the
// merchant, claimed by the customer with a Bitcoin address of the
// session's network (another network's, an EVM account, the session's
// own address refused), signed offline by `paymentsd refund send` from
// the project's own coins with the change back to its deposit address,
// reported, mined and followed to finalized, the session's books saying
// refunded. A transaction that pays the wrong amount, or the right amount
// from coins that are not the project's, is not taken, with the reason.
// A batch of bitcoin payouts, approved by an owner, is paid in one
// transaction by `paymentsd payout send` and completed. `paymentsd admin
// reconcile`, run as the operator runs it, then finds nothing, twice.
func TestBitcoinRefundsAndPayoutsAreSignedOfflineAndFollowed(t *testing.T) {
	ctx := context.Background()
	const seed = 0x4a
	ts, e := newAPI(t, apiOptions{})
	base := ts.URL
	owner, keys := ownedProject(t, base, "Bitcoin refunds")
	xprv, key, err := btcnode.Account(seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Checkout().SetBitcoinKey(ctx, keys.id, false, key.Canonical(), ""); err != nil {
		t.Fatal(err)
	}
	proj := "/api/v1/projects/" + keys.id
	node := stack.Bitcoin
	mine := func() {
		t.Helper()
		if _, err := node.Mine(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	addrOf := func(cs map[string]any) btcutil.Address {
		t.Helper()
		a, err := btcutil.DecodeAddress(str(option(t, cs, devstack.BitcoinAsset)["depositAddress"]), btcnode.Params)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	_, customers, _ := btcnode.Account(0x4b)
	customer := func(i uint32, params *chaincfg.Params) btcutil.Address {
		t.Helper()
		a, err := customers.DeriveAddress(i, params)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	received := func(txid string, vout uint32) (string, int64) {
		t.Helper()
		h, _ := chainhash.NewHashFromStr(txid)
		out, err := node.Client.GetTxOut(h, vout, false)
		if err != nil || out == nil {
			t.Fatalf("output %s:%d on the node: %v %v", txid, vout, out, err)
		}
		return out.ScriptPubKey.Address, int64(out.Value*1e8 + 0.5)
	}

	cs := openSession(t, base, keys, "50", devstack.BitcoinAsset) // 50,000 sats
	paid, err := node.Send(ctx, []btcnode.Out{{To: addrOf(cs), Sats: 50_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	mine()
	sessionTx(t, base, str(cs["token"]), paid.TxHash().String(), "finalized")
	sessionID, deposit := str(cs["id"]), addrOf(cs).EncodeAddress()

	created := post(t, base, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": sessionID, "amount": "0.0002", "reason": "one item returned"})
	mustStatus(t, created, http.StatusCreated)
	refund := created.data()
	id, claimURL := str(refund["id"]), str(refund["claimUrl"])
	if refund["status"] != "awaiting_address" || refund["amountBaseUnits"] != "20000" || refund["fromAddress"] != deposit ||
		refund["network"] != devstack.BitcoinNetwork || refund["transfer"] != nil || claimURL == "" {
		t.Fatalf("the bitcoin refund created: %s", created.Raw)
	}
	token := claimURL[strings.LastIndex(claimURL, "/")+1:]
	claim := func(address string) response {
		t.Helper()
		return post(t, base, "/api/v1/refund-claims/"+token+"/address", "", map[string]any{"address": address})
	}
	for address, want := range map[string]string{
		"0xc0ffee000000000000000000000000000000beef":          "is not a Bitcoin address",
		customer(0, &chaincfg.TestNet3Params).EncodeAddress(): "is a Bitcoin address of testnet3, not of regtest",
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq":          "is a Bitcoin address of mainnet, not of regtest",
		deposit: "is the address the transfer is paid from",
	} {
		r := claim(address)
		if r.Status != http.StatusUnprocessableEntity || !slices.Contains(r.detailFields(), "address") || !strings.Contains(string(r.Raw), want) {
			t.Errorf("the claim of %s: %d %s; want 422 saying %q", address, r.Status, r.Raw, want)
		}
	}
	to := customer(0, btcnode.Params).EncodeAddress()
	given := claim(to)
	mustStatus(t, given, http.StatusOK)
	if given.data()["status"] != "awaiting_signature" || given.data()["toAddress"] != to {
		t.Fatalf("the address given: %s", given.Raw)
	}

	// The merchant signs offline, with the key file the sweep takes.
	m := merchantMachine{dir: t.TempDir(), t: t}
	bin := m.bin()
	keyFile := filepath.Join(m.dir, "bitcoin.xprv")
	if err := os.WriteFile(keyFile, []byte(xprv+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	send := func(refundID string, extra ...string) string {
		t.Helper()
		args := append([]string{"refund", "send", "--api", base, "--project", keys.id, "--rpc", node.URL(), "--key-file", keyFile,
			"--fee-rate", "2"}, extra...)
		out := m.run(bin, keys.key, append(args, refundID)...)
		if strings.Contains(out, xprv) {
			t.Fatalf("refund send printed the private key:\n%s", out)
		}
		return out
	}
	plan := send(id)
	// One input (the payment), the refund and the change: 11+68+2×43 vB at 2 sat/vB.
	for _, want := range []string{"Refund " + id + ": 0.0002 BTC to " + to, "Inputs (1), the project's own coins:",
		paid.TxHash().String() + ":0  0.0005 BTC  deposit address 0 (" + deposit + ")", "0  0.0002 BTC to " + to,
		"1  0.0002967 BTC change to " + deposit + " (deposit address 0)", "Fee: 330 sats (2 sat/vB)", "Dry run"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("the dry run lacks %q:\n%s", want, plan)
		}
	}
	done := send(id, "--execute", "--plan", planDigestOf(t, plan))
	txid := regexp.MustCompile(`sent in ([0-9a-f]{64}) and reported`).FindStringSubmatch(done)
	if txid == nil {
		t.Fatalf("refund send --execute:\n%s", done)
	}
	mine()
	final := waitRefund(t, base, keys, id, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	if final["txHash"] != txid[1] {
		t.Fatalf("the refund finalized: %v; want transaction %s", final, txid[1])
	}
	if got := eventTypes(t, id); !slices.Equal(got, []string{"refund.created", "refund.address_provided", "refund.sent", "refund.confirmed", "refund.finalized"}) &&
		!slices.Equal(got, []string{"refund.created", "refund.address_provided", "refund.sent", "refund.finalized"}) {
		t.Fatalf("the refund's events: %v", got)
	}
	if addr, sats := received(txid[1], 0); addr != to || sats != 20_000 {
		t.Fatalf("the refund's output pays %d sats to %s", sats, addr)
	}
	books := func() (map[string]any, map[string]any) {
		b := get(t, base, proj+"/checkout-sessions/"+sessionID, keys.key).data()["refunds"].(map[string]any)
		return b, b["assets"].([]any)[0].(map[string]any)
	}
	if b, balance := books(); b["status"] != "partially_refunded" || balance["received"] != "0.0005" || balance["refunded"] != "0.0002" ||
		balance["remaining"] != "0.0003" {
		t.Fatalf("the session's books after the refund: %v", b)
	}
	// The change back at the session's address is the merchant's, not a payment.
	if txs := get(t, base, proj+"/transactions", keys.key).list(); len(txs) != 1 {
		t.Fatalf("the project's transactions after the refund: %v; want the payment alone", txs)
	}
	funded := get(t, base, proj+"/deposit-addresses?chain=bitcoin&funded=true", keys.key).list()
	if outs := funded[0].(map[string]any)["outputs"].([]any); len(outs) != 2 || outs[1].(map[string]any)["status"] != "change" &&
		outs[0].(map[string]any)["status"] != "change" {
		t.Fatalf("the session's address lists %v; want its payment and the refund's change", outs)
	}

	// The rest, to an address the merchant gives. A second session's
	// payment funds it with the change.
	second := openSession(t, base, keys, "100", devstack.BitcoinAsset)
	if _, err := node.Send(ctx, []btcnode.Out{{To: addrOf(second), Sats: 100_000}}, 1_000); err != nil {
		t.Fatal(err)
	}
	mine()
	waitSession(t, base, str(second["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	restTo := customer(1, btcnode.Params).EncodeAddress()
	rest := post(t, base, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": sessionID, "address": restTo})
	mustStatus(t, rest, http.StatusCreated)
	restID := str(rest.data()["id"])
	if rest.data()["amountBaseUnits"] != "30000" || rest.data()["status"] != "awaiting_approval" {
		t.Fatalf("the rest: %s", rest.Raw)
	}
	// To the merchant's address: an owner approves it first.
	approved := owner.call(t, base, http.MethodPost, proj+"/refunds/"+restID+"/approve", nil)
	mustStatus(t, approved, http.StatusOK)
	if approved.data()["status"] != "awaiting_signature" {
		t.Fatalf("the rest approved: %s", approved.Raw)
	}
	rejected := func(sent, want string) {
		t.Helper()
		r := post(t, base, proj+"/refunds/"+restID+"/transaction", keys.key, map[string]any{"txHash": sent})
		if r.Status == http.StatusUnprocessableEntity {
			if !strings.Contains(string(r.Raw), want) {
				t.Fatalf("the report of %s refused: %s; want it saying %q", sent, r.Raw, want)
			}
			return
		}
		mustStatus(t, r, http.StatusOK) // not seen yet: its workflow judges it
		back := waitRefund(t, base, keys, restID, "rejected", func(r map[string]any) bool {
			return r["status"] == "awaiting_signature" && strings.Contains(str(r["failureReason"]), want)
		})
		if back["txHash"] != nil {
			t.Fatalf("the rejected refund keeps its transaction: %v", back)
		}
	}
	wrong, err := node.Send(ctx, []btcnode.Out{{To: customer(1, btcnode.Params), Sats: 29_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := node.Send(ctx, []btcnode.Out{{To: customer(1, btcnode.Params), Sats: 30_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	mine()
	rejected(wrong.TxHash().String(), "does not pay 0.0003 BTC to "+restTo)
	rejected(exact.TxHash().String(), "from the project's own coins")
	if r := waitRefund(t, base, keys, restID, "awaiting its signature", func(r map[string]any) bool { return r["status"] == "awaiting_signature" }); r["txHash"] != nil {
		t.Fatalf("the rest after the rejections: %v", r)
	}
	restPlan := send(restID)
	if !strings.Contains(restPlan, "Inputs (2)") || !strings.Contains(restPlan, txid[1]+":1  0.0002967 BTC  deposit address 0") {
		t.Fatalf("the rest's plan spends the change first, then the second payment:\n%s", restPlan)
	}
	restSent := regexp.MustCompile(`sent in ([0-9a-f]{64}) and reported`).FindStringSubmatch(send(restID, "--execute", "--plan",
		planDigestOf(t, restPlan)))
	if restSent == nil {
		t.Fatal("the rest was not sent")
	}
	mine()
	waitRefund(t, base, keys, restID, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	if b, balance := books(); b["status"] != "refunded" || balance["refunded"] != "0.0005" || balance["remaining"] != "0" {
		t.Fatalf("the session's books after the whole refund: %v", b)
	}
	if got := eventTypes(t, restID); !slices.Contains(got, "refund.finalized") {
		t.Fatalf("the rest's events: %v", got)
	}

	// A batch of bitcoin payouts: no treasury to name, another network's
	// address refused.
	p1, p2 := customer(2, btcnode.Params).EncodeAddress(), customer(3, btcnode.Params).EncodeAddress()
	bad := post(t, base, proj+"/payout-batches", keys.key, map[string]any{"payouts": []any{
		map[string]any{"address": customer(2, &chaincfg.TestNet3Params).EncodeAddress(), "asset": devstack.BitcoinAsset, "amount": "0.0001"}}})
	if bad.Status != http.StatusUnprocessableEntity || !slices.Contains(bad.detailFields(), "payouts[0].address") {
		t.Fatalf("a payout to a testnet address: %s", bad.Raw)
	}
	batch := post(t, base, proj+"/payout-batches", keys.key, map[string]any{"reference": "affiliates", "payouts": []any{
		map[string]any{"address": p1, "asset": devstack.BitcoinAsset, "amount": "0.0001", "reference": "a-1"},
		map[string]any{"address": p2, "asset": devstack.BitcoinAsset, "amount": "0.00005", "reference": "a-2"}}})
	mustStatus(t, batch, http.StatusCreated)
	batchID := str(batch.data()["id"])
	mustStatus(t, owner.call(t, base, http.MethodPost, proj+"/payout-batches/"+batchID+"/approve", nil), http.StatusOK)
	payout := func(extra ...string) string {
		t.Helper()
		args := append([]string{"payout", "send", "--api", base, "--project", keys.id, "--rpc", node.URL(), "--key-file", keyFile,
			"--fee-rate", "2", "--journal-dir", m.dir}, extra...)
		return m.run(bin, keys.key, append(args, batchID)...)
	}
	dry := payout()
	if !strings.Contains(dry, "2 bitcoin payouts in one transaction") || !strings.Contains(dry, "0  0.0001 BTC to "+p1) ||
		!strings.Contains(dry, "1  0.00005 BTC to "+p2) || !strings.Contains(dry, "Dry run") {
		t.Fatalf("the payouts' dry run:\n%s", dry)
	}
	if paidOut := payout("--execute", "--plan", planDigestOf(t, dry)); strings.Count(paidOut, "sent in") != 2 || !strings.Contains(paidOut, "2 sent and reported") {
		t.Fatalf("payout send --execute:\n%s", paidOut)
	}
	mine()
	completed := waitBatch(t, base, keys, batchID, "completed", func(b map[string]any) bool { return b["status"] == "completed" })
	ps := payoutsOf(completed)
	if ps[0]["status"] != "finalized" || ps[1]["status"] != "finalized" || ps[0]["txHash"] != ps[1]["txHash"] {
		t.Fatalf("the payouts: %v", ps)
	}
	for vout, want := range []struct {
		to   string
		sats int64
	}{{p1, 10_000}, {p2, 5_000}} {
		if addr, sats := received(str(ps[0]["txHash"]), uint32(vout)); addr != want.to || sats != want.sats {
			t.Fatalf("payout output %d pays %d sats to %s; want %d to %s", vout, sats, addr, want.sats, want.to)
		}
	}
	if again := payout("--execute"); !strings.Contains(again, "is completed: nothing to send") {
		t.Fatalf("a second run:\n%s", again)
	}

	// The reconciliation checks them on the chain: from the service, and
	// as the operator runs it.
	for _, run := range []string{"first", "second"} {
		found, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: keys.id})
		if err != nil || len(found) != 0 {
			t.Fatalf("the %s reconciliation after bitcoin refunds and payouts: %v %+v", run, err, found)
		}
		cmd := exec.Command(bin, "admin", "reconcile", "--project", keys.id)
		var stdout, stderr bytes.Buffer
		cmd.Env, cmd.Stdout, cmd.Stderr = operatorEnvOf(t, "devnet", devstack.BitcoinNetwork), &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != "0 findings, 0 repaired, 0 left\n" {
			t.Fatalf("the %s `paymentsd admin reconcile`: %v\n%s\n%s", run, err, stdout.String(), stderr.String())
		}
	}
}

// operatorEnvOf is operatorEnv with the networks named and their assets.
func operatorEnvOf(t *testing.T, networks ...string) []string {
	t.Helper()
	var ns []chainwatch.Network
	var as []payment.Asset
	for _, n := range networks {
		network := chains[n].Network
		if network.Kind == chainwatch.KindBitcoin {
			network.Confirmations = 0 // a Bitcoin network's depth is its finality tiers, filled in again
		}
		ns = append(ns, network)
		for _, a := range catalog.Assets {
			if a.Network == n {
				as = append(as, a)
			}
		}
	}
	nj, err := json.Marshal(ns)
	if err != nil {
		t.Fatal(err)
	}
	aj, err := json.Marshal(as)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, v := range operatorEnv(t) {
		if !strings.HasPrefix(v, "NETWORKS=") && !strings.HasPrefix(v, "ASSETS=") {
			env = append(env, v)
		}
	}
	return append(env, "NETWORKS="+string(nj), "ASSETS="+string(aj))
}
