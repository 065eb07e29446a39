package e2e

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// Payouts in the dashboard, in a real Chromium with a browser wallet
// holding the treasury (a funded dev account): a CSV file with a bad line
// is refused whole, the line named on the page; a good one (the dev
// chain's coin to one address, its USDC to another) makes a batch, which
// the owner approves after confirming their password (the browser's
// sign-in is an hour old); both payouts are sent from the wallet one
// after the other, their hashes reported, and followed to finalized; the
// batch is completed, and the page says so.
func TestDashboardPayouts(t *testing.T) {
	d := newDashboard(t)
	owner, keys := ownedProject(t, d.base, "Payout shop")
	proj := "/api/v1/projects/" + keys.id
	page := "/dashboard/projects/" + keys.id + "/sandbox/payouts"
	treasury, _ := newTreasury(t)
	verifyRecipient(t, d.svc, keys.id, treasury.Key) // a batch pays from a proven address
	sent := make(chan *big.Int, 4)
	d.run(chromedp.ExposeFunc("devWallet", devWallet(treasury, sent)))
	d.run(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.ethereum = {request: ({method, params}) => window.devWallet({method, params: params || []})};`})
		return err
	}))
	payee := func() common.Address { // fresh, so that their balances are the payouts alone
		k, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		return crypto.PubkeyToAddress(k.PublicKey)
	}
	alice, bob := payee(), payee()
	dir := t.TempDir()
	file := func(name, lines string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("address,asset,amount,reference\n"+lines), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	upload := func(path string) {
		t.Helper()
		d.run(chromedp.SetUploadFiles(`#upload-payouts input[type=file]`, []string{path}))
		d.click("Use my wallet's address")
		d.waitFor(fmt.Sprintf(`document.querySelector('#upload-payouts [data-field=fromAddress]').value === %q`, treasury.Address.Hex()),
			"the wallet's address filled in", 10*time.Second)
		d.click("Upload batch")
	}

	d.signIn(owner)
	d.open(page)
	d.waitText("main", "No payout batch yet", 10*time.Second)

	// Line 3's address is no address: the file is refused whole.
	upload(file("bad.csv", alice.Hex()+",eth-devnet,0.25,alice\nnot-an-address,usdc-devnet,12.5,bob\n"))
	d.waitVisible("#upload-problems li", 10*time.Second)
	if got := d.text(`#upload-problems li[data-line="3"]`); !strings.Contains(got, "Line 3") || !strings.Contains(got, "address") {
		t.Fatalf("line 3's problem as shown: %q", got)
	}
	if n := d.eval(`String(document.querySelectorAll('#upload-problems li').length)`); n != "1" {
		t.Fatalf("%s problems shown for one bad line: %s", n, d.text("#upload-problems"))
	}
	d.waitText("#upload-payouts .form-error[role=alert]", "nothing was created", 5*time.Second)
	d.screens("payouts-line-errors")
	if n := len(get(t, d.base, proj+"/payout-batches", keys.key).list()); n != 0 {
		t.Fatalf("%d batches after a refused file", n)
	}

	// The good file: the dev chain's coin to alice, its USDC to bob.
	d.fill("Reference", "May payouts")
	upload(file("good.csv", alice.Hex()+",eth-devnet,0.25,alice-may\n"+bob.Hex()+",usdc-devnet,12.5,bob-may\n"))
	d.waitText("h1", "Payout batch “May payouts”", 10*time.Second)
	d.ready()
	d.waitText("#batch-status", "Awaiting approval", 5*time.Second)
	batches := get(t, d.base, proj+"/payout-batches", keys.key).list()
	if len(batches) != 1 {
		t.Fatalf("batches after the upload: %v", batches)
	}
	batchID := str(batches[0].(map[string]any)["id"])
	if !strings.HasSuffix(d.location(), "/payouts/"+batchID) || !strings.EqualFold(str(batches[0].(map[string]any)["fromAddress"]), treasury.Address.Hex()) {
		t.Fatalf("the batch page %s, the batch %v", d.location(), batches[0])
	}
	d.screens("payout-batch-awaiting-approval")

	// The browser's sign-in, an hour old: approving asks for the password.
	if _, err := st.Pool().Exec(context.Background(), `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour'
		WHERE user_id = (SELECT id FROM users WHERE email = $1)`, owner.email); err != nil {
		t.Fatal(err)
	}
	if r := owner.call(t, d.base, http.MethodPost, proj+"/payout-batches/"+batchID+"/approve", nil); r.Status != http.StatusForbidden || r.errorCode() != "REAUTHENTICATION_REQUIRED" {
		t.Fatalf("approving after an old sign-in: %d %s", r.Status, r.Raw)
	}
	d.click("Approve")
	d.clickIn("dialog", "Approve batch")
	d.waitText("dialog", "Confirm it is you", 10*time.Second)
	d.fill("Password", owner.password)
	d.shot("dashboard-payouts-reauthentication")
	d.clickIn("dialog", "Confirm")
	d.waitText("#batch-status", "Approved", 10*time.Second)
	d.waitText("#report", "Awaiting signature", 5*time.Second)
	approved := get(t, d.base, proj+"/payout-batches/"+batchID, keys.key).data()
	if approved["status"] != "approved" || approved["approvedBy"] == nil {
		t.Fatalf("the batch after the approval: %v", approved)
	}
	d.screens("payout-batch-approved")

	// Both sent from the wallet, one after the other.
	d.sendWithWallet("Send all with wallet", sent, "12500000", "the USDC payout")
	var final map[string]any
	testwait.Until(t, 90*time.Second, func() (bool, string) {
		r := get(t, d.base, proj+"/payout-batches/"+batchID, keys.key)
		final = r.data()
		done := final["status"] == "completed"
		for _, p := range final["payouts"].([]any) {
			done = done && p.(map[string]any)["status"] == "finalized"
		}
		return done, "the batch and its payouts: " + string(r.Raw)
	})
	hashes := map[string]bool{}
	for _, p := range final["payouts"].([]any) {
		hashes[str(p.(map[string]any)["txHash"])] = true
	}
	d.waitText("#batch-status", "Completed", 20*time.Second)
	d.waitText("#report", "Finalized", 5*time.Second)
	shown := strings.Fields(d.eval(`[...document.querySelectorAll('#wallet-log .tx-hash')].map((e) => e.textContent).join(' ')`))
	if len(shown) != 2 || !hashes[shown[0]] || !hashes[shown[1]] || shown[0] == shown[1] {
		t.Fatalf("the hashes shown as sent: %v; the payouts': %v", shown, hashes)
	}
	if got := d.text("#payouts"); strings.Contains(got, "Send with wallet") || strings.Contains(got, "Send all with wallet") {
		t.Fatalf("a finalized batch still offers to send: %q", got)
	}
	d.screens("payout-batch-completed")
	ctx := context.Background()
	if b, err := chain.Client().BalanceAt(ctx, alice, nil); err != nil || b.Cmp(units("250000000000000000")) != 0 {
		t.Fatalf("alice holds %s wei (%v); want 0.25 ETH", b, err)
	}
	if b, _ := chain.TokenBalance(ctx, bob); b.Cmp(units("12500000")) != 0 {
		t.Fatalf("bob holds %s USDC base units; want 12500000", b)
	}

	// The list shows the completed batch.
	d.open(page)
	d.waitText("main table", "May payouts", 10*time.Second)
	d.waitText("main table", "Completed", 5*time.Second)
	d.screens("payouts")
}
