package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/btcsweep"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// bitcoinProject is a project with a Bitcoin account key for its sandbox,
// made from seed.
func bitcoinProject(t *testing.T, seed byte) (projectKeys, string) {
	t.Helper()
	ts, e, keys := sandboxAPI(t, apiOptions{})
	_, key, err := btcnode.Account(seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Checkout().SetBitcoinKey(context.Background(), keys.id, false, key.Canonical(), ""); err != nil {
		t.Fatal(err)
	}
	return keys, ts.URL
}

// sessionTx waits until the session lists a transaction of txid whose
// status is status, and returns it.
func sessionTx(t *testing.T, base, token, txid, status string) map[string]any {
	t.Helper()
	var found map[string]any
	waitSession(t, base, token, "paid by "+txid+" ("+status+")", func(s map[string]any) bool {
		for _, it := range s["transactions"].([]any) {
			if tx := it.(map[string]any); tx["txHash"] == txid && tx["status"] == status {
				found = tx
				return true
			}
		}
		return false
	})
	return found
}

// A session paid in bitcoin on a real node (btcd in regtest), as a
// customer's wallet pays it: its option gives a regtest address of the
// project's key and a BIP21 URI for the amount at the feed's price; the
// payment is pending from the mempool on, confirmed when mined, finalized
// at the network's depth, and the session completes, with the webhooks a
// merchant gets for an EVM payment. A payment the customer replaces by
// fee fails naming its replacement, and the replacement pays the session
// once. A plan's shared recipient cannot take bitcoin, and says why.
func TestABitcoinSessionPaidOnARealNode(t *testing.T) {
	ctx := context.Background()
	keys, base := bitcoinProject(t, 0x42)
	rcv := newReceiver(t)
	hook := post(t, base, "/api/v1/projects/"+keys.id+"/webhooks", keys.key, map[string]any{"url": rcv.URL + "/hooks",
		"enabledEvents": []string{"*"}})
	mustStatus(t, hook, http.StatusCreated)
	rcv.setSecrets(str(hook.data()["secret"]))
	node := stack.Bitcoin

	cs := openSession(t, base, keys, "50", devstack.BitcoinAsset, "usdc-devnet")
	btc := option(t, cs, devstack.BitcoinAsset)
	addr := str(btc["depositAddress"])
	_, key, _ := btcnode.Account(0x42)
	first, err := key.DeriveAddress(0, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	if addr != first.EncodeAddress() || !strings.HasPrefix(addr, "bcrt1q") || addr == str(cs["depositAddress"]) {
		t.Fatalf("the bitcoin option pays %q (the session's EVM address %q); want the key's first address %s", addr,
			cs["depositAddress"], first)
	}
	// 50 USD at 100,000 USD a bitcoin.
	if btc["amount"] != "0.0005" || btc["amountBaseUnits"] != "50000" || btc["decimals"] != float64(8) ||
		btc["paymentUri"] != "bitcoin:"+addr+"?amount=0.0005&label=Order" || btc["walletAccountOnly"] != nil {
		t.Fatalf("the bitcoin option: %v", btc)
	}
	if option(t, cs, "usdc-devnet")["depositAddress"] != nil {
		t.Errorf("the USDC option names an address of its own: %v", option(t, cs, "usdc-devnet"))
	}
	to, err := btcutil.DecodeAddress(addr, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}

	tx, err := node.Send(ctx, []btcnode.Out{{To: to, Sats: 50_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	txid := tx.TxHash().String()
	pending := sessionTx(t, base, str(cs["token"]), txid, "pending")
	if pending["amount"] != "0.0005" || pending["amountUsd"] != "50.00" || pending["confirmations"] != float64(0) {
		t.Fatalf("the payment in the mempool: %v", pending)
	}
	rcv.waitFor(t, "transaction.pending", str(pending["id"]))
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := waitSession(t, base, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	final := sessionTx(t, base, str(cs["token"]), txid, "finalized")
	if final["id"] != pending["id"] || done["amountPaidUsd"] != "50.00" || final["confirmations"] != float64(1) {
		t.Fatalf("the payment finalized: %v; the session: %v", final, done)
	}
	for _, typ := range []string{"transaction.confirmed", "transaction.finalized"} {
		rcv.waitFor(t, typ, str(final["id"]))
	}
	rcv.waitFor(t, "checkout.session.completed", str(cs["id"]))

	// Replaced by fee before it is mined.
	cs = openSession(t, base, keys, "20", devstack.BitcoinAsset)
	addr = str(option(t, cs, devstack.BitcoinAsset)["depositAddress"])
	if to, err = btcutil.DecodeAddress(addr, btcnode.Params); err != nil {
		t.Fatal(err)
	}
	paid, err := node.Send(ctx, []btcnode.Out{{To: to, Sats: 20_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	sessionTx(t, base, str(cs["token"]), paid.TxHash().String(), "pending")
	bumped, err := node.Replace(ctx, paid, []btcnode.Out{{To: to, Sats: 20_000}}, 4_000)
	if err != nil {
		t.Fatal(err)
	}
	sessionTx(t, base, str(cs["token"]), paid.TxHash().String(), "failed")
	replaced := merchantTx(t, base, keys, paid.TxHash().String())
	if reason := str(replaced["failureReason"]); replaced["status"] != "failed" || !strings.Contains(reason, bumped.TxHash().String()) {
		t.Errorf("the replaced payment failed for %q; want its replacement named", reason)
	}
	sessionTx(t, base, str(cs["token"]), bumped.TxHash().String(), "pending")
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done = waitSession(t, base, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "20.00" {
		t.Errorf("paid by the replacement alone: %v USD, want 20", done["amountPaidUsd"])
	}

	// A shared recipient is an EVM address.
	second, _ := newAPI(t, apiOptions{shape: api.ShapeSecond})
	plan := post(t, second.URL, "/api/v1/projects/"+keys.id+"/payment-plans", keys.key, map[string]any{"name": "Shared",
		"recipientAddress": "0x00000000000000000000000000000000000B0B00", "paymentOptions": []any{
			map[string]any{"networkId": devstack.BitcoinNetwork, "amount": "0.001"}}})
	if plan.Status != http.StatusUnprocessableEntity || !slices.Contains(plan.detailFields(), "paymentOptions[0].networkId") ||
		!strings.Contains(string(plan.Raw), "Bitcoin network") {
		t.Errorf("a shared-recipient plan in bitcoin: %s", plan.Raw)
	}
}

// merchantTx is the merchant's view of the project's transaction txid.
func merchantTx(t *testing.T, base string, p projectKeys, txid string) map[string]any {
	t.Helper()
	for _, it := range get(t, base, "/api/v1/projects/"+p.id+"/transactions", p.key).list() {
		if tx := it.(map[string]any); tx["txHash"] == txid {
			return tx
		}
	}
	t.Fatalf("no transaction %s listed", txid)
	return nil
}

// The hosted page of a session paid in bitcoin, in headless Chromium: the
// option's own address, the amount in BTC, the depth that makes it final,
// a BIP21 link and QR code, and no browser-wallet button; then the payment
// live from the mempool to paid, paid by `paymentsd dev pay`. Screenshots: bitcoin-1-open,
// bitcoin-2-seen, bitcoin-3-paid.
func TestBitcoinCheckoutPageInBrowser(t *testing.T) {
	path := chromium(t)
	keys, base := bitcoinProject(t, 0x43)
	cs := openSession(t, base, keys, "12.5", devstack.BitcoinAsset)
	addr := str(option(t, cs, devstack.BitcoinAsset)["depositAddress"])
	b := newBrowser(t, path, "")
	b.run(chromedp.Navigate(base + "/checkout/" + str(cs["token"])))
	b.run(chromedp.WaitVisible("#pay"))
	qrWidth, err := chromedp.Run(b.ctx, chromedp.Poll[int](`document.getElementById("qr").naturalWidth || false`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	href, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById("open-wallet").href`))
	if err != nil {
		t.Fatal(err)
	}
	walletHidden, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.getElementById("wallet").hidden`))
	if err != nil {
		t.Fatal(err)
	}
	shown, due, depth, network := b.text("#address"), b.text("#due"), b.text("#depth"), b.text("#network")
	b.shot("bitcoin-1-open")
	if shown != addr || due != "0.000125 BTC" || !strings.Contains(depth, "final after 1 confirmation") ||
		network != "Network: "+devstack.BitcoinNetwork || href != "bitcoin:"+addr+"?amount=0.000125&label=Order" ||
		!walletHidden || qrWidth < 100 {
		t.Fatalf("the page shows address %q, due %q, depth %q, %q, link %q, wallet button hidden %v, qr %dpx", shown, due,
			depth, network, href, walletHidden, qrWidth)
	}

	// Paid the way a developer does: `paymentsd dev pay <token>`, from the
	// node's dev wallet.
	bin := filepath.Join(t.TempDir(), "paymentsd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/paymentsd").CombinedOutput(); err != nil {
		t.Fatalf("build paymentsd: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "dev", "pay", str(cs["token"]), "--api", base, "--bitcoin-rpc", stack.Bitcoin.URL()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sent 12500 sats from the dev bitcoin wallet to "+addr) {
		t.Fatalf("paymentsd dev pay: %v\n%s", err, out)
	}
	b.run(chromedp.WaitVisible(`#txs li`))
	seen := b.text("#txs")
	b.shot("bitcoin-2-seen")
	if !strings.Contains(seen, "0.000125 BTC") || !strings.Contains(strings.ToLower(seen), "pending") {
		t.Fatalf("the payment in the mempool shows as %q", seen)
	}
	if _, err := stack.Bitcoin.Mine(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	b.run(chromedp.WaitVisible(`#status.completed`))
	b.shot("bitcoin-3-paid")
	if status := b.text("#status"); status != "Paid" {
		t.Fatalf("status %q after the block", status)
	}
}

// A merchant sweeps bitcoin with `paymentsd sweep` on their own machine:
// the funded addresses and their payments' outputs come from the API
// (?chain=bitcoin), another account's key is refused, the dry run moves
// nothing and writes the PSBT for a hardware wallet, and --execute spends
// every final payment's output in one transaction signed here, journaled
// and, not yet mined, resumed by the next run, which also sweeps the
// payment finalized since; then nothing is left to move and the engine's
// records are unchanged.
func TestBitcoinSweepMovesFinalPaymentsToOneAddress(t *testing.T) {
	ctx := context.Background()
	const seed = 0x46
	keys, base := bitcoinProject(t, seed)
	node := stack.Bitcoin
	addrOf := func(cs map[string]any) btcutil.Address {
		t.Helper()
		a, err := btcutil.DecodeAddress(str(option(t, cs, devstack.BitcoinAsset)["depositAddress"]), btcnode.Params)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// One transaction pays two sessions; a third is paid in the mempool.
	a, b := openSession(t, base, keys, "30", devstack.BitcoinAsset), openSession(t, base, keys, "20", devstack.BitcoinAsset)
	both, err := node.Send(ctx, []btcnode.Out{{To: addrOf(a), Sats: 30_000}, {To: addrOf(b), Sats: 20_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, cs := range []map[string]any{a, b} {
		waitSession(t, base, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	}
	c := openSession(t, base, keys, "10", devstack.BitcoinAsset)
	late, err := node.Send(ctx, []btcnode.Out{{To: addrOf(c), Sats: 10_000}}, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	sessionTx(t, base, str(c["token"]), late.TxHash().String(), "pending")

	listed := get(t, base, "/api/v1/projects/"+keys.id+"/deposit-addresses?chain=bitcoin&funded=true", keys.key)
	mustStatus(t, listed, http.StatusOK)
	if n := len(listed.list()); n != 2 {
		t.Fatalf("funded bitcoin addresses: %d; want the two mined payments': %s", n, listed.Raw)
	}
	first := listed.list()[0].(map[string]any)
	if out := first["outputs"].([]any)[0].(map[string]any); first["address"] != addrOf(a).EncodeAddress() || first["derivationPath"] != "0/0" ||
		out["txid"] != both.TxHash().String() || out["vout"] != float64(0) || out["amountBaseUnits"] != "30000" || out["status"] != "finalized" {
		t.Fatalf("the first funded address: %v", first)
	}
	if all := get(t, base, "/api/v1/projects/"+keys.id+"/deposit-addresses?chain=bitcoin", keys.key); len(all.list()) != 3 {
		t.Fatalf("used bitcoin addresses: %s; want the three sessions'", all.Raw)
	}
	if bad := get(t, base, "/api/v1/projects/"+keys.id+"/deposit-addresses?chain=btc", keys.key); bad.Status != http.StatusUnprocessableEntity ||
		!slices.Contains(bad.detailFields(), "chain") {
		t.Fatalf("an unknown chain: %s", bad.Raw)
	}
	txsBefore := len(get(t, base, "/api/v1/projects/"+keys.id+"/transactions", keys.key).list())

	m := merchantMachine{dir: t.TempDir(), t: t}
	bin := m.bin()
	keyFile := func(seed byte) string {
		xprv, _, err := btcnode.Account(seed)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(m.dir, fmt.Sprintf("bitcoin-%x.xprv", seed))
		if err := os.WriteFile(f, []byte(xprv+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	_, other, _ := btcnode.Account(0x44)
	dest, err := other.DeriveAddress(0, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	args := func(key string, extra ...string) []string {
		return append([]string{"sweep", "--api", base, "--project", keys.id, "--network", devstack.BitcoinNetwork, "--rpc", node.URL(),
			"--to", dest.EncodeAddress(), "--key-file", key, "--fee-rate", "2"}, extra...)
	}
	wrong := exec.Command(bin, args(keyFile(0x44))...)
	wrong.Dir, wrong.Env = m.dir, append(os.Environ(), "PAYMENTSD_API_KEY="+keys.key)
	if out, err := wrong.CombinedOutput(); err == nil || !strings.Contains(string(out), "not the project's Bitcoin account key") {
		t.Fatalf("another account's key: %v\n%s", err, out)
	}
	key := keyFile(seed)
	journal := filepath.Join(m.dir, "sweep-"+keys.id+"-"+devstack.BitcoinNetwork+".journal.json")
	readJournal := func() btcsweep.Journal {
		t.Helper()
		j, err := btcsweep.ReadJournal(journal)
		if err != nil || j == nil {
			t.Fatalf("the journal: %v %v", j, err)
		}
		return *j
	}

	plan := m.run(bin, keys.key, args(key, "--psbt", "sweep.psbt")...)
	for _, want := range []string{"2 funded deposit addresses listed", "Sweep 2 outputs holding 0.0005 BTC: 0.0004962 BTC to " + dest.EncodeAddress() +
		", 380 sats of fee (2 sat/vB)", "The unsigned PSBT is in sweep.psbt", "Dry run: nothing was signed or sent"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("the dry run lacks %q:\n%s", want, plan)
		}
	}
	b64, err := os.ReadFile(filepath.Join(m.dir, "sweep.psbt"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := psbt.NewFromRawBytes(strings.NewReader(strings.TrimSpace(string(b64))), true); err != nil || len(p.Inputs) != 2 || p.UnsignedTx.TxOut[0].Value != 49_620 {
		t.Fatalf("the PSBT written: %v %v", p, err)
	}
	if _, err := os.Stat(journal); err == nil {
		t.Fatal("the dry run journaled a sweep")
	}

	sent := m.run(bin, keys.key, args(key, "--execute", "--wait", "0s")...)
	first1 := readJournal()
	if !strings.Contains(sent, "Sent "+first1.TxID+", not mined yet") || first1.Done || first1.Sats != 49_620 || first1.Fee != 380 {
		t.Fatalf("the sweep sent: %+v\n%s", first1, sent)
	}
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitSession(t, base, str(c["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })

	resumed := m.run(bin, keys.key, args(key, "--execute", "--wait", "0s")...)
	second := readJournal()
	for _, want := range []string{"Moved 0.0004962 BTC to " + dest.EncodeAddress() + " in " + first1.TxID, "Already spent: 2 outputs",
		"Sweep 1 outputs holding 0.0001 BTC: 0.00009756 BTC", "Sent " + second.TxID} {
		if !strings.Contains(resumed, want) {
			t.Fatalf("the resumed sweep lacks %q:\n%s", want, resumed)
		}
	}
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := m.run(bin, keys.key, args(key, "--execute")...)
	if !strings.Contains(done, "Moved 0.00009756 BTC to "+dest.EncodeAddress()+" in "+second.TxID) || !strings.Contains(done, "Already spent: 3 outputs") ||
		!strings.Contains(done, "Nothing to move.") || !readJournal().Done {
		t.Fatalf("the last run:\n%s", done)
	}
	for txid, sats := range map[string]int64{first1.TxID: 49_620, second.TxID: 9_756} {
		h, _ := chainhash.NewHashFromStr(txid)
		out, err := node.Client.GetTxOut(h, 0, false)
		if err != nil || out == nil || out.Confirmations < 1 || out.ScriptPubKey.Address != dest.EncodeAddress() || int64(out.Value*1e8+0.5) != sats {
			t.Fatalf("the sweep %s's output on the node: %+v %v; want %d sats to %s, mined", txid, out, err, sats, dest)
		}
	}
	after := get(t, base, "/api/v1/projects/"+keys.id+"/transactions", keys.key).list()
	if len(after) != txsBefore {
		t.Fatalf("the engine recorded the sweeps: %d transactions, %d before", len(after), txsBefore)
	}
	for _, it := range after {
		if tx := it.(map[string]any); tx["status"] != "finalized" {
			t.Errorf("a payment swept is %v: %v", tx["status"], tx)
		}
	}
}

// A USD-priced plan takes bitcoin in the second API shape as in the
// first: its session's bitcoin option, the payment read there with the
// shape's statuses (pending, then completed). And a payment to the
// address of a session that has expired is that session's late payment,
// as on EVM networks: the session stays expired and says paid_late; after
// the late window it is unexpected, and the session stays as it was.
func TestBitcoinInTheSecondShapeAndPaidLateOrUnexpected(t *testing.T) {
	ctx := context.Background()
	second, e := newAPI(t, apiOptions{shape: api.ShapeSecond})
	short, _ := newAPI(t, apiOptions{lifetime: 2 * time.Second})
	p := newProject(t, e)
	keys := projectKeys{p.Project.ID, p.SandboxKey}
	_, key, err := btcnode.Account(0x45)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Checkout().SetBitcoinKey(ctx, p.Project.ID, false, key.Canonical(), ""); err != nil {
		t.Fatal(err)
	}
	node := stack.Bitcoin
	pay := func(cs map[string]any, sats int64) string {
		t.Helper()
		to, err := btcutil.DecodeAddress(str(option(t, cs, devstack.BitcoinAsset)["depositAddress"]), btcnode.Params)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := node.Send(ctx, []btcnode.Out{{To: to, Sats: sats}}, 1_000)
		if err != nil {
			t.Fatal(err)
		}
		return tx.TxHash().String()
	}

	cs := openSession(t, second.URL, keys, "25", devstack.BitcoinAsset)
	if o := option(t, cs, devstack.BitcoinAsset); o["amount"] != "0.00025" || !strings.HasPrefix(str(o["paymentUri"]), "bitcoin:bcrt1q") {
		t.Fatalf("the second shape's bitcoin option: %v", o)
	}
	txid := pay(cs, 25_000)
	sessionTx(t, second.URL, str(cs["token"]), txid, "pending")
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitSession(t, second.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	tx := merchantTx(t, second.URL, keys, txid)
	var history []string
	for _, h := range tx["statusHistory"].([]any) {
		history = append(history, str(h.(map[string]any)["status"]))
	}
	if tx["status"] != "completed" || tx["amount"] != "0.00025" || tx["network"] != devstack.BitcoinNetwork ||
		strings.Join(history, ",") != "pending,completed" {
		t.Fatalf("the bitcoin payment in the second shape: %v", tx)
	}

	late := openSession(t, short.URL, keys, "5", devstack.BitcoinAsset)
	// Expiry is decided by the chain's time: a block past it tells.
	whileMining(t, func() {
		waitSession(t, short.URL, str(late["token"]), "expired", func(s map[string]any) bool { return s["status"] == "expired" })
	})
	lateTx := pay(late, 5_000)
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	paid := waitSession(t, short.URL, str(late["token"]), "paid late", func(s map[string]any) bool { return s["amountPaidUsd"] == "5.00" })
	if paid["status"] != "expired" || paid["exception"] != "paid_late" {
		t.Fatalf("the session paid after it expired: %v", paid)
	}
	if got := sessionTx(t, short.URL, str(late["token"]), lateTx, "finalized"); got["amount"] != "0.00005" {
		t.Fatalf("the late payment: %v", got)
	}

	// After the late window, a payment to the session's address is
	// unexpected: recorded for the merchant, counted for no session.
	shortLateWindow(t, keys.id)
	ended := openSession(t, short.URL, keys, "7", devstack.BitcoinAsset)
	// The workflow ends once the chain's time is past the late window.
	whileMining(t, func() { waitWorkflowEnded(t, str(ended["id"])) })
	strayTx := pay(ended, 7_000)
	if _, err := node.Mine(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var stray map[string]any
	testwait.Until(t, time.Minute, func() (bool, string) {
		for _, it := range get(t, short.URL, "/api/v1/projects/"+keys.id+"/transactions?unexpected=true", keys.key).list() {
			if tx := it.(map[string]any); tx["txHash"] == strayTx && tx["status"] == "finalized" {
				stray = tx
				return true, ""
			}
		}
		return false, "the payment to the ended session " + strayTx + " is not listed unexpected and finalized"
	})
	after := get(t, short.URL, "/api/v1/checkout/sessions/"+str(ended["token"]), "").data()
	if stray["unexpected"] != true || stray["amount"] != "0.00007" || after["status"] != "expired" ||
		after["exception"] != nil && after["exception"] != "" || after["amountPaidUsd"] != "0.00" {
		t.Fatalf("the payment after the late window: %v; its session: %v", stray, after)
	}
}

// whileMining mines a regtest block a second while wait waits: what
// waits for the chain's time to pass a moment (a session's expiry, its
// late window) needs a block stamped after it, and a regtest chain mines
// only when told. A block's time is whole seconds and is the node's clock
// or just past its last blocks', so how many blocks that takes is not
// known in advance.
func whileMining(t *testing.T, wait func()) {
	t.Helper()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if _, err := stack.Bitcoin.Mine(context.Background(), 1); err != nil {
				t.Errorf("mine a block: %v", err)
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { close(stop); <-stopped }()
	wait()
}
