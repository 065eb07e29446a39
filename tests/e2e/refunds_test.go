package e2e

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/paymentsd/paymentsd/api"
	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/sweep"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/workflows"
)

// waitRefund polls a refund until ok says it is as wanted.
func waitRefund(t *testing.T, base string, p projectKeys, id, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	return waitData(t, base, "/api/v1/projects/"+p.id+"/refunds/"+id, p.key, "refund never became "+what, ok)
}

// A paid session refunded in part, the customer giving the address
// through the claim link, the merchant signing offline with `paymentsd
// refund send`: the refund's USDC leaves the deposit address by an
// authorisation the relayer pays for, the hash is reported, and the
// network's chainwatch follows it to finalized. More than remains is
// refused with what remains; a reported transaction that does not make
// what was prepared (less, more, elsewhere) is an exception that keeps
// what it held.
func TestARefundIsClaimedSignedOfflineAndFollowedToFinalized(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	ctx := context.Background()
	proj := "/api/v1/projects/" + keys.id

	cs := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	paid := payToken(t, 2, str(cs["depositAddress"]), units("5000000"))
	waitTx(t, ts.URL, keys, paid, "finalized")
	sessionID := str(cs["id"])

	// The merchant refunds 2 of the 5 USDC; the customer gets the link.
	created := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": sessionID, "amount": "2", "reason": "one item returned"})
	mustStatus(t, created, http.StatusCreated)
	refund := created.data()
	id, claimURL := str(refund["id"]), str(refund["claimUrl"])
	if refund["status"] != "awaiting_address" || refund["amountBaseUnits"] != "2000000" || !strings.EqualFold(str(refund["fromAddress"]), str(cs["depositAddress"])) ||
		!strings.HasPrefix(claimURL, "https://pay.example.test/refund/") || refund["transfer"] != nil {
		t.Fatalf("the refund created: %s", created.Raw)
	}
	token := claimURL[strings.LastIndex(claimURL, "/")+1:]
	if again := get(t, ts.URL, proj+"/refunds/"+id, keys.key); strings.Contains(string(again.Raw), token) {
		t.Fatalf("the claim token is shown again: %s", again.Raw)
	}
	tooMuch := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": sessionID, "amount": "3.5"})
	mustStatus(t, tooMuch, http.StatusUnprocessableEntity)
	if !strings.Contains(string(tooMuch.Raw), "is more than remains to refund: 3 USDC") {
		t.Fatalf("a refund larger than what remains: %s", tooMuch.Raw)
	}

	// The customer: the claim page serves, the API shows the refund, a
	// contract's address is warned about, a wallet's is taken.
	page, err := http.Get(ts.URL + "/refund/" + token)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Header.Get("Referrer-Policy") != "no-referrer" ||
		!strings.Contains(string(html), "exchange's deposit address may not credit a refund") {
		t.Fatalf("the claim page: %d %v %.300s", page.StatusCode, page.Header, html)
	}
	claim := get(t, ts.URL, "/api/v1/refund-claims/"+token, "")
	mustStatus(t, claim, http.StatusOK)
	if claim.data()["amount"] != "2" || claim.data()["symbol"] != "USDC" || claim.data()["network"] != "devnet" || strings.Contains(string(claim.Raw), keys.id) {
		t.Fatalf("the claim: %s", claim.Raw)
	}
	contract := post(t, ts.URL, "/api/v1/refund-claims/"+token+"/address", "", map[string]any{"address": chain.Token.Hex()})
	mustStatus(t, contract, http.StatusUnprocessableEntity)
	if !strings.Contains(string(contract.Raw), "is a contract") {
		t.Fatalf("a contract's address: %s", contract.Raw)
	}
	customer := common.HexToAddress("0xc0ffee000000000000000000000000000000beef")
	given := post(t, ts.URL, "/api/v1/refund-claims/"+token+"/address", "", map[string]any{"address": customer.Hex()})
	mustStatus(t, given, http.StatusOK)
	if given.data()["status"] != "awaiting_signature" {
		t.Fatalf("the address given: %s", given.Raw)
	}
	mustStatus(t, post(t, ts.URL, "/api/v1/refund-claims/"+token+"/address", "", map[string]any{"address": chain.Accounts[4].Address.Hex()}), http.StatusConflict)
	prepared := get(t, ts.URL, proj+"/refunds/"+id, keys.key).data()
	transfer, _ := prepared["transfer"].(map[string]any)
	if prepared["addressSource"] != "customer" || transfer == nil || !strings.EqualFold(str(transfer["to"]), chain.Token.Hex()) ||
		!strings.HasPrefix(str(transfer["data"]), "0xa9059cbb") || !strings.Contains(strings.ToLower(str(transfer["data"])), strings.ToLower(customer.Hex()[2:])) {
		t.Fatalf("the prepared transfer: %v", prepared)
	}

	// The merchant signs offline.
	m := newMerchantMachine(t, keys.id)
	xprv, keyFile, relayerFile, bin := m.xprv, m.keyFile, m.relayerFile, m.bin()
	send := func(extra ...string) string {
		t.Helper()
		args := append([]string{"refund", "send", "--api", ts.URL, "--project", keys.id, "--rpc", chain.URL,
			"--key-file", keyFile, "--relayer-key-file", relayerFile}, extra...)
		out := m.run(bin, keys.key, append(args, id)...)
		if strings.Contains(out, xprv) {
			t.Fatalf("refund send printed the private key:\n%s", out)
		}
		return out
	}
	plan := send()
	if !strings.Contains(plan, "2 USDC from") || !strings.Contains(plan, "authorization") || !strings.Contains(plan, "Dry run") {
		t.Fatalf("the dry run:\n%s", plan)
	}
	if b, _ := chain.TokenBalance(ctx, customer); b.Sign() != 0 {
		t.Fatalf("the dry run paid %s", b)
	}
	done := send("--execute", "--plan", planDigestOf(t, plan))
	if !strings.Contains(done, "sent in 0x") || !strings.Contains(done, "reported") {
		t.Fatalf("refund send --execute:\n%s", done)
	}
	if b, _ := chain.TokenBalance(ctx, customer); b.Cmp(units("2000000")) != 0 {
		t.Fatalf("the customer holds %s USDC base units; want 2000000", b)
	}
	final := waitRefund(t, ts.URL, keys, id, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	// A workflow of its own followed it, and ended once it was final.
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		d, err := temporal.DescribeWorkflowExecution(ctx, workflows.OutgoingWorkflowID(id), "")
		return err == nil && d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED,
			fmt.Sprintf("the refund's workflow did not complete: %v %v", err, d)
	})
	recordClosedHistory(t, workflows.OutgoingWorkflowID(id), "outgoing_refund_finalized")
	if str(final["txHash"]) == "" {
		t.Fatalf("the finalized refund: %v", final)
	}
	if got := eventTypes(t, id); !slices.Equal(got, []string{"refund.created", "refund.address_provided", "refund.sent", "refund.confirmed", "refund.finalized"}) &&
		!slices.Equal(got, []string{"refund.created", "refund.address_provided", "refund.sent", "refund.finalized"}) {
		t.Fatalf("the refund's events: %v", got)
	}
	books := get(t, ts.URL, proj+"/checkout-sessions/"+sessionID, keys.key).data()["refunds"].(map[string]any)
	if balance := books["assets"].([]any)[0].(map[string]any); books["status"] != "partially_refunded" || balance["received"] != "5" ||
		balance["refunded"] != "2" || balance["remaining"] != "3" || balance["symbol"] != "USDC" {
		t.Fatalf("the session's books after the refund: %v", books)
	}
	// The Connect twin reads the same refund.
	payments := paymentsdv1connect.NewPaymentsServiceClient(http.DefaultClient, ts.URL)
	viaConnect, err := payments.GetRefund(ctx, authed(&v1.GetRefundRequest{ProjectId: keys.id, RefundId: id}, keys.key))
	if err != nil {
		t.Fatal(err)
	}
	if r := viaConnect.Msg.Refund; r.Status != "finalized" || r.GetTxHash() != str(final["txHash"]) || r.Transfer.GetData() != str(transfer["data"]) ||
		r.ClaimUrl != nil || r.AmountBaseUnits != "2000000" {
		t.Fatalf("the refund through Connect: %v", r)
	}
	if again := send("--execute"); !strings.Contains(again, "is finalized") {
		t.Fatalf("a second run:\n%s", again)
	}
	if b, _ := chain.TokenBalance(ctx, customer); b.Cmp(units("2000000")) != 0 {
		t.Fatalf("a second run paid again: the customer holds %s", b)
	}

	// The rest, to the merchant's address; a reported transaction that
	// was not sent from the refund's source is refused, with the reason,
	// and what the refund holds stays held.
	rest := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": sessionID, "address": chain.Accounts[4].Address.Hex()})
	mustStatus(t, rest, http.StatusCreated)
	restID := str(rest.data()["id"])
	if rest.data()["amountBaseUnits"] != "3000000" || rest.data()["status"] != "awaiting_approval" || rest.data()["claimUrl"] != nil {
		t.Fatalf("the rest, to the merchant's address, awaiting an owner's approval: %s", rest.Raw)
	}
	approveRefund(t, e, keys.id, restID)
	other := payToken(t, 1, chain.Accounts[4].Address.Hex(), units("3000000")) // the amount, from someone else
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		r, err := chain.Client().TransactionReceipt(ctx, other)
		return err == nil && r != nil, "the other transfer is not mined"
	})
	refused := post(t, ts.URL, proj+"/refunds/"+restID+"/transaction", keys.key, map[string]any{"txHash": other.Hex()})
	mustStatus(t, refused, http.StatusUnprocessableEntity)
	if !strings.Contains(string(refused.Raw), "was not sent from") {
		t.Fatalf("a transaction from another address, refused: %s", refused.Raw)
	}
	if r := get(t, ts.URL, proj+"/refunds/"+restID, keys.key).data(); r["status"] != "awaiting_signature" || r["txHash"] != nil {
		t.Fatalf("the refund after a refused report: %v", r)
	}
	mustStatus(t, post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": sessionID, "amount": "0.5"}), http.StatusUnprocessableEntity)
	list := get(t, ts.URL, proj+"/refunds?checkoutSessionId="+sessionID, keys.key)
	mustStatus(t, list, http.StatusOK)
	if len(list.list()) != 2 {
		t.Fatalf("the session's refunds: %s", list.Raw)
	}
	// The reconciliation finds the records and the chain agree; records
	// that say more went back than did, or that hold more than came in,
	// are found.
	reconcile := func() []service.Finding { return findings(t, e, keys.id, "refund-") }
	if found := reconcile(); len(found) != 0 {
		t.Fatalf("the reconciliation of refunds that agree with the chain: %+v", found)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE refunds SET tx_hash = $2 WHERE id = $1`, id, "0x"+strings.Repeat("ee", 32)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE refunds SET amount_base_units = 9000000 WHERE id = $1`, restID); err != nil {
		t.Fatal(err)
	}
	found := reconcile()
	if len(found) != 2 || found[0].Kind != service.FindingRefundNotOnChain || found[0].ObjectID != id || !strings.Contains(found[0].Detail, "not mined") ||
		found[1].Kind != service.FindingRefundOverdrawn || found[1].ObjectID != sessionID {
		t.Fatalf("the reconciliation of tampered refunds: %+v", found)
	}

	// The books: every refund in the CSV export, with its transaction.
	res, rows := csvExport(t, ts.URL, proj+"/refunds", keys.key)
	if res.StatusCode != http.StatusOK || len(rows) != 3 || column(rows, 1, "id") != restID || column(rows, 1, "status") != "awaiting_signature" ||
		column(rows, 2, "id") != id || column(rows, 2, "amount") != "2" || column(rows, 2, "tx_hash") != "0x"+strings.Repeat("ee", 32) ||
		!strings.EqualFold(column(rows, 2, "to_address"), customer.Hex()) || column(rows, 2, "address_source") != "customer" {
		t.Fatalf("the refunds' CSV: %d %v", res.StatusCode, rows)
	}
}

// The claim page in headless Chromium, as the customer uses it: it shows
// what comes back and on which network, warns about a contract's address
// (and takes it only once the customer says it can receive the refund),
// and fills the address from an injected EIP-1193 wallet. Screenshots go
// with the others.
func TestTheRefundClaimPageInBrowser(t *testing.T) {
	path := chromium(t)
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "3", "usdc-devnet")
	waitTx(t, ts.URL, keys, payToken(t, 1, str(cs["depositAddress"]), units("3000000")), "finalized")
	created := post(t, ts.URL, "/api/v1/projects/"+keys.id+"/refunds", keys.key,
		map[string]any{"checkoutSessionId": cs["id"], "amount": "1.5", "reason": "Order #1042 canceled"})
	mustStatus(t, created, http.StatusCreated)
	claimURL := str(created.data()["claimUrl"])
	token := claimURL[strings.LastIndex(claimURL, "/")+1:]
	wallet := chain.Accounts[2].Address

	b := newBrowser(t, path, `window.ethereum = {request: ({method}) => method === "eth_requestAccounts" ?
		Promise.resolve(["`+strings.ToLower(wallet.Hex())+`"]) : Promise.reject(new Error("unsupported"))};`)
	b.run(chromedp.Navigate(ts.URL + "/refund/" + token))
	b.run(chromedp.WaitVisible("#claim"))
	amount, network, reason := b.text("#amount"), b.text("#network"), b.text("#reason")
	b.shot("refund-1-claim")
	if amount != "1.5 USDC" || !strings.Contains(network, "devnet") || reason != "Order #1042 canceled" {
		t.Fatalf("the page shows %q, %q, %q", amount, network, reason)
	}

	b.run(chromedp.SetValue("#address", chain.Token.Hex()))
	b.run(chromedp.Click("#submit"))
	b.run(chromedp.WaitVisible("#contract"))
	b.shot("refund-2-contract-warning")
	if r := get(t, ts.URL, "/api/v1/refund-claims/"+token, ""); r.data()["status"] != "awaiting_address" {
		t.Fatalf("a contract's address was taken without the customer's word: %s", r.Raw)
	}

	b.run(chromedp.Click("#wallet"))
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`document.getElementById("address").value !== "`+chain.Token.Hex()+`"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the wallet button did not fill the address: %v", err)
	}
	b.run(chromedp.Click("#submit"))
	b.run(chromedp.WaitVisible("#done"))
	b.shot("refund-3-address-given")
	if done := b.text("#done"); !strings.Contains(strings.ToLower(done), strings.ToLower(wallet.Hex())) {
		t.Fatalf("the page says %q", done)
	}
	r := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/refunds/"+str(created.data()["id"]), keys.key).data()
	if r["status"] != "awaiting_signature" || r["addressSource"] != "customer" || !strings.EqualFold(str(r["toAddress"]), wallet.Hex()) {
		t.Fatalf("the refund after the page: %v", r)
	}
}

// A refund's prepared transfer made without its hash reported (signed
// in a wallet that does not report back) is seen by the network's scans,
// recorded as sent, and followed to finalized.
func TestAnUnreportedRefundTransferIsSeenByTheScanner(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	ctx := context.Background()
	cs := openSession(t, ts.URL, keys, "4", "usdc-devnet")
	waitTx(t, ts.URL, keys, payToken(t, 1, str(cs["depositAddress"]), units("4000000")), "finalized")
	customer := common.HexToAddress("0xc0ffee00000000000000000000000000000000a1")
	created := post(t, ts.URL, "/api/v1/projects/"+keys.id+"/refunds", keys.key,
		map[string]any{"checkoutSessionId": cs["id"], "amount": "1.25", "address": customer.Hex()})
	mustStatus(t, created, http.StatusCreated)
	id := str(created.data()["id"])
	approveRefund(t, e, keys.id, id)

	// The merchant's own signer: the sweep's machinery, with nothing
	// reported to the API.
	m := newMerchantMachine(t, keys.id)
	wallet, err := sweep.ParseWallet(m.xprv)
	if err != nil {
		t.Fatal(err)
	}
	src, err := sweep.FromAPI(ctx, http.DefaultClient, ts.URL, keys.key, keys.id, "devnet")
	if err != nil {
		t.Fatal(err)
	}
	from := common.HexToAddress(str(cs["depositAddress"]))
	i := slices.IndexFunc(src.Addresses, func(a sweep.Address) bool { return a.Address == from })
	j := slices.IndexFunc(src.Assets, func(a sweep.Asset) bool { return a.ID == "usdc-devnet" })
	if i < 0 || j < 0 {
		t.Fatalf("the deposit address or USDC not listed: %+v", src)
	}
	cfg := sweep.Config{Chain: chain.Client(), Wallet: wallet, Destination: customer, Relayer: m.relayer,
		Journal: filepath.Join(m.dir, "journal.json")}
	plan, err := sweep.PlanTransfer(ctx, cfg, src.Addresses[i], src.Assets[j], units("1250000"))
	if err != nil {
		t.Fatal(err)
	}
	outcomes, err := sweep.Execute(ctx, cfg, plan, io.Discard)
	if err != nil || outcomes[0].Err != nil {
		t.Fatalf("the transfer: %v %v", err, outcomes)
	}
	hash := outcomes[0].Hashes[len(outcomes[0].Hashes)-1]

	final := waitRefund(t, ts.URL, keys, id, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	if final["txHash"] != hash.Hex() {
		t.Fatalf("the refund names %v; the transfer was %s", final["txHash"], hash.Hex())
	}
	if got := eventTypes(t, id); len(got) < 4 || got[1] != "refund.approved" || got[2] != "refund.sent" || got[len(got)-1] != "refund.finalized" {
		t.Fatalf("the refund's events: %v", got)
	}
}

// Refunds in the dashboard, in Chromium: the session page shows what was
// received and what remains; the merchant refunds part of it to an
// address they give and sends the prepared transfer from the browser
// wallet that holds their funds (an injected EIP-1193 provider, a
// treasury account), which the engine follows to finalized; a second
// refund without an address shows the customer's link once and is
// canceled.
func TestDashboardRefunds(t *testing.T) {
	d := newDashboard(t)
	owner, keys := ownedProject(t, d.base, "Refunding shop")
	page := "/dashboard/projects/" + keys.id + "/sandbox/sessions/"
	cs := openSession(t, d.base, keys, "6", "usdc-devnet")
	waitTx(t, d.base, keys, payToken(t, 3, str(cs["depositAddress"]), units("6000000")), "finalized")
	sent := make(chan *big.Int, 4)
	treasury, _ := newTreasury(t)
	verifyRecipient(t, d.svc, keys.id, treasury.Key) // a refund paid from a treasury: one the project proved
	d.run(chromedp.ExposeFunc("devWallet", devWallet(treasury, sent)))
	d.run(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.ethereum = {request: ({method, params}) => window.devWallet({method, params: params || []})};`})
		return err
	}))
	customer := common.HexToAddress("0xc0ffee00000000000000000000000000000000d5")

	d.signIn(owner)
	d.open(page + str(cs["id"]))
	d.waitText("#refunds", "Remaining", 10*time.Second)
	d.click("Refund")
	d.fill("Amount", "2.5")
	d.fill("Customer's address", customer.Hex())
	d.fill("Reason", "Two items returned")
	d.clickIn("dialog", "Create refund")
	// The merchant's address waits for an owner's approval: the owner
	// approves it here (signed in just now: no password asked).
	d.waitText("#refunds", "Awaiting approval", 10*time.Second)
	d.screens("session-refund-awaiting-approval")
	d.click("Approve")
	d.clickIn("dialog", "Approve refund")
	d.waitText("#refunds", "Awaiting signature", 10*time.Second)
	d.screens("session-refund-awaiting-signature")
	d.sendWithWallet("Send with wallet", sent, "2500000", "the refund")
	refunds := get(t, d.base, "/api/v1/projects/"+keys.id+"/refunds?checkoutSessionId="+str(cs["id"]), keys.key).list()
	if len(refunds) != 1 {
		t.Fatalf("refunds: %v", refunds)
	}
	id := str(refunds[0].(map[string]any)["id"])
	waitRefund(t, d.base, keys, id, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	if b, _ := chain.TokenBalance(context.Background(), customer); b.Cmp(units("2500000")) != 0 {
		t.Fatalf("the customer holds %s USDC base units; want 2500000", b)
	}
	d.waitText("#refunds", "Finalized", 20*time.Second)
	d.waitText("#refunds", "Partially refunded", 10*time.Second)
	d.waitText("#refunds", "3.5 USDC", time.Second)
	d.screens("session-refund-finalized")

	// Without an address: the customer's link, once; then canceled.
	d.click("Refund")
	d.clickIn("dialog", "Create refund")
	d.waitVisible("dialog code[data-secret]", 10*time.Second)
	if link := d.eval(`document.querySelector("dialog code[data-secret]").textContent`); !strings.HasPrefix(link, d.base+"/refund/") {
		t.Fatalf("the claim link shown: %q", link)
	}
	d.clickIn("dialog", "Done, I have saved it")
	d.waitText("#refunds", "Awaiting address", 10*time.Second)
	d.click("Cancel")
	d.clickIn("dialog", "Cancel refund")
	d.waitText("#refunds", "Canceled", 10*time.Second)
	if r := get(t, d.base, "/api/v1/projects/"+keys.id+"/checkout-sessions/"+str(cs["id"]), keys.key).data()["refunds"].(map[string]any); r["status"] != "partially_refunded" {
		t.Fatalf("the session's refunds after the cancel: %v", r)
	}
}

// A full refund, paid from the merchant's treasury and reported by hash,
// whose block a reorg takes away: the refund goes back to sent (its
// event says so), the merchant sends it again and reports the new hash,
// and it is followed to finalized; the session then shows refunded.
func TestARefundReorgedOutGoesBackToSent(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	ctx := context.Background()
	proj := "/api/v1/projects/" + keys.id
	cs := openSession(t, ts.URL, keys, "4", "usdc-devnet")
	waitTx(t, ts.URL, keys, payToken(t, 1, str(cs["depositAddress"]), units("4000000")), "finalized")
	customer := common.HexToAddress("0xc0ffee00000000000000000000000000000000e7")
	created := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": cs["id"], "address": customer.Hex()})
	mustStatus(t, created, http.StatusCreated)
	id := str(created.data()["id"])
	if created.data()["amount"] != "4" {
		t.Fatalf("a refund of all that remains: %s", created.Raw)
	}
	approveRefund(t, e, keys.id, id)

	verifyRecipient(t, e, keys.id, chain.Accounts[2].Key)                   // the treasury, proven by the project
	first, receipt := payInOneBlock(t, 2, customer.Hex(), units("4000000")) // the chain stays paused
	mustStatus(t, post(t, ts.URL, proj+"/refunds/"+id+"/transaction", keys.key, map[string]any{"txHash": first.Hex()}), http.StatusOK)
	waitRefund(t, ts.URL, keys, id, "confirmed", func(r map[string]any) bool { return r["status"] == "confirmed" })
	block, err := chain.Client().HeaderByNumber(ctx, receipt.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	if err := chain.Fork(block.ParentHash); err != nil {
		t.Fatal(err)
	}
	chain.Rollback() // the transfer is not mined again
	chain.Commit()
	chain.Commit()
	back := waitRefund(t, ts.URL, keys, id, "sent again", func(r map[string]any) bool { return r["status"] == "sent" })
	if back["txHash"] != first.Hex() {
		t.Fatalf("the refund after the reorg: %v", back)
	}
	if got := eventTypes(t, id); !slices.Equal(got, []string{"refund.created", "refund.approved", "refund.sent", "refund.confirmed", "refund.sent"}) {
		t.Fatalf("the refund's events after the reorg: %v", got)
	}
	chain.Resume()

	again := payToken(t, 2, customer.Hex(), units("4000000"))
	mustStatus(t, post(t, ts.URL, proj+"/refunds/"+id+"/transaction", keys.key, map[string]any{"txHash": again.Hex()}), http.StatusOK)
	final := waitRefund(t, ts.URL, keys, id, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	if final["txHash"] != again.Hex() {
		t.Fatalf("the finalized refund: %v", final)
	}
	books := get(t, ts.URL, proj+"/checkout-sessions/"+str(cs["id"]), keys.key).data()["refunds"].(map[string]any)
	if balance := books["assets"].([]any)[0].(map[string]any); books["status"] != "refunded" || balance["remaining"] != "0" || balance["refunded"] != "4" {
		t.Fatalf("the session's books after a full refund: %v", books)
	}
}

// Refunds in the second shape (spec section 9), whose payments go to the
// merchant's own recipient address: a partial refund to the address the
// customer gives through the link, then the rest to the merchant's word,
// each signed by the recipient's wallet (the funds are there) and
// reported by hash, followed to finalized; the session shows refunded.
func TestSecondShapeRefundsFromTheRecipientsWallet(t *testing.T) {
	ts, e := newAPI(t, apiOptions{shape: api.ShapeSecond})
	first, _ := newAPI(t, apiOptions{})
	p := newProject(t, e)
	keys := projectKeys{p.Project.ID, p.SandboxKey}
	ctx := context.Background()
	proj := "/api/v1/projects/" + keys.id
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	wallet := devchain.Account{Address: crypto.PubkeyToAddress(key.PublicKey), Key: key}
	verifyRecipient(t, e, keys.id, key)
	if _, err := chain.TransferNative(ctx, chain.Accounts[3], wallet.Address, units("100000000000000000")); err != nil { // gas
		t.Fatal(err)
	}
	made := post(t, ts.URL, proj+"/payment-plans", keys.key, map[string]any{"name": "Refundable", "recipientAddress": wallet.Address.Hex(),
		"paymentOptions": []any{map[string]any{"networkId": "devnet", "tokenAddress": chain.Token.Hex(), "amount": "3"}}})
	mustStatus(t, made, http.StatusCreated)
	opened := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": made.data()["id"]})
	mustStatus(t, opened, http.StatusCreated)
	cs := opened.data()
	paid := payToken(t, 2, wallet.Address.Hex(), units(str(option(t, cs, "usdc-devnet")["amountBaseUnits"])))
	waitTx(t, first.URL, keys, paid, "finalized")

	// The partial refund, the customer's address through the link.
	created := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": cs["id"], "amount": "1"})
	mustStatus(t, created, http.StatusCreated)
	if !strings.EqualFold(str(created.data()["fromAddress"]), wallet.Address.Hex()) {
		t.Fatalf("a second-shape refund is paid from the recipient: %s", created.Raw)
	}
	link := str(created.data()["claimUrl"])
	customer := common.HexToAddress("0xc0ffee00000000000000000000000000000000f1")
	mustStatus(t, post(t, ts.URL, "/api/v1/refund-claims/"+link[strings.LastIndex(link, "/")+1:]+"/address", "", map[string]any{"address": customer.Hex()}), http.StatusOK)
	// The rest, to the merchant's word.
	rest := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": cs["id"], "address": chain.Accounts[4].Address.Hex()})
	mustStatus(t, rest, http.StatusCreated)
	approveRefund(t, e, keys.id, str(rest.data()["id"]))

	for _, id := range []string{str(created.data()["id"]), str(rest.data()["id"])} {
		r := get(t, ts.URL, proj+"/refunds/"+id, keys.key).data()
		transfer := r["transfer"].(map[string]any)
		data, err := hexutil.Decode(str(transfer["data"]))
		if err != nil {
			t.Fatal(err)
		}
		hash, err := chain.Transact(ctx, wallet, common.HexToAddress(str(transfer["to"])), new(big.Int), data)
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, post(t, ts.URL, proj+"/refunds/"+id+"/transaction", keys.key, map[string]any{"txHash": hash.Hex()}), http.StatusOK)
		waitRefund(t, ts.URL, keys, id, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	}
	if b, _ := chain.TokenBalance(ctx, customer); b.Cmp(units("1000000")) != 0 {
		t.Fatalf("the customer holds %s; want 1 USDC", b)
	}
	books := get(t, ts.URL, proj+"/checkout-sessions/"+str(cs["id"]), keys.key).data()["refunds"].(map[string]any)
	if books["status"] != "refunded" {
		t.Fatalf("the second-shape session's books: %v", books)
	}
}

// planDigestOf is the digest a dry run of `refund send` or `payout send`
// printed, which --execute --plan takes.
func planDigestOf(t *testing.T, dryRun string) string {
	t.Helper()
	for _, line := range strings.Split(dryRun, "\n") {
		if d, ok := strings.CutPrefix(line, "Plan digest: "); ok {
			return strings.TrimSpace(d)
		}
	}
	t.Fatalf("the dry run printed no plan digest:\n%s", dryRun)
	return ""
}

// approveRefund is the project's owner approving a refund to an address
// the merchant gave (the route's freshness check is the API's; the
// owner's approval is the engine's).
func approveRefund(t *testing.T, e *service.Service, projectID, id string) {
	t.Helper()
	owner := payment.Principal{ProjectID: projectID, UserID: "usr_owner", Role: payment.RoleOwner}
	if r, err := e.MoneyOut().ApproveRefund(context.Background(), owner, projectID, id, ""); err != nil || r.Status != payment.RefundAwaitingSignature {
		t.Fatalf("the owner's approval of %s: %+v, %v", id, r, err)
	}
}
