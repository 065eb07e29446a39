package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// walletProvider is an EIP-1193 browser wallet holding one account: it
// hands personal_sign requests to the test (window.__signRequests), which
// signs with the account's key and answers (window.__answerSign). A page
// whose localStorage says noWallet has none.
const walletProvider = `if (!localStorage.getItem('noWallet')) {
	window.__signRequests = [];
	window.ethereum = { isTestWallet: true, request: async ({ method, params }) => {
		if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [%q];
		if (method === 'personal_sign') {
			window.__signRequests.push(params);
			return new Promise((resolve) => { window.__answerSign = resolve; });
		}
		throw new Error('unsupported: ' + method);
	} };
}`

// In the dashboard, an owner adds a recipient in the project's settings
// and verifies it with the browser wallet (eth_requestAccounts, then
// personal_sign of the challenge's bytes by the address); without a
// wallet, the challenge is shown to sign elsewhere and the signature is
// pasted. Both are then verified, and a second-shape plan paying the one
// verified with the wallet is accepted.
func TestDashboardVerifiesARecipientWithTheBrowserWallet(t *testing.T) {
	d := newDashboard(t)
	owner, keys := ownedProject(t, d.base, "Recipient shop")
	walletKey, _ := crypto.GenerateKey()
	pastedKey, _ := crypto.GenerateKey()
	wallet, pasted := crypto.PubkeyToAddress(walletKey.PublicKey).Hex(), crypto.PubkeyToAddress(pastedKey.PublicKey).Hex()
	d.run(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(walletProvider, wallet)})
		return err
	}))
	settings := "/dashboard/projects/" + keys.id + "/sandbox/settings"
	d.signIn(owner)

	// No wallet: the challenge to sign elsewhere, the signature pasted.
	d.open(settings)
	d.eval(`localStorage.setItem('noWallet', '1'), 'ok'`)
	d.open(settings)
	d.waitText("main", "No sandbox recipient yet.", 10*time.Second)
	d.fill("Address", strings.ToLower(pasted))
	d.clickIn("main form#add-recipient", "Add recipient")
	d.waitVisible("dialog #no-wallet", 10*time.Second)
	challenge := d.eval(`document.querySelector('dialog #recipient-challenge').textContent`)
	if !strings.Contains(challenge, keys.id) || !strings.Contains(challenge, pasted) {
		t.Fatalf("the challenge shown: %q", challenge)
	}
	d.shot("dashboard-recipient-no-wallet")
	d.fill("Signature", "0x1234")
	d.clickIn("dialog", "Verify")
	d.waitText("dialog .form-error", "Validation failed", 10*time.Second)
	d.fill("Signature", stacktest.PersonalSign(t, pastedKey, challenge))
	d.clickIn("dialog", "Verify")
	d.waitFor(`!document.querySelector('dialog')`, "the dialog closed", 10*time.Second)
	d.ready()
	d.waitText("main", "Verified", 10*time.Second)

	// The browser wallet signs.
	d.eval(`localStorage.removeItem('noWallet'), 'ok'`)
	d.open(settings)
	d.fill("Address", wallet)
	d.clickIn("main form#add-recipient", "Add recipient")
	d.waitVisible("dialog #sign-with-wallet", 10*time.Second)
	d.screens("recipient-dialog")
	d.run(chromedp.Click("#sign-with-wallet"))
	d.waitFor(`window.__signRequests.length === 1`, "a personal_sign request", 10*time.Second)
	var params []string
	if err := json.Unmarshal([]byte(d.eval(`JSON.stringify(window.__signRequests[0])`)), &params); err != nil || len(params) != 2 {
		t.Fatalf("personal_sign's params: %v %v", params, err)
	}
	msg, err := hexutil.Decode(params[0])
	if err != nil || !strings.EqualFold(params[1], wallet) || !strings.Contains(string(msg), "Environment: sandbox") || !strings.Contains(string(msg), wallet) {
		t.Fatalf("personal_sign of %q by %s (%v)", msg, params[1], err)
	}
	d.eval(fmt.Sprintf(`window.__answerSign(%q), 'ok'`, stacktest.PersonalSign(t, walletKey, string(msg))))
	d.waitFor(`!document.querySelector('dialog')`, "the dialog closed", 10*time.Second)
	d.ready()
	d.waitFor(fmt.Sprintf(`document.querySelectorAll('main [data-remove]').length === 2 && !document.querySelector('main [data-verify]') && document.querySelector('main').innerText.includes(%q)`, wallet),
		"both recipients verified", 10*time.Second)
	d.screens("recipients")

	got := owner.call(t, d.base, http.MethodGet, "/api/v1/projects/"+keys.id+"/recipients", nil)
	mustStatus(t, got, http.StatusOK)
	for _, it := range got.list() {
		if r := it.(map[string]any); r["status"] != "verified" || r["method"] != "eip191" {
			t.Fatalf("the recipients: %s", got.Raw)
		}
	}
	second, _ := newAPI(t, apiOptions{shape: api.ShapeSecond})
	plan := post(t, second.URL, "/api/v1/projects/"+keys.id+"/payment-plans", keys.key, map[string]any{"name": "Paid to the wallet", "recipientAddress": wallet,
		"paymentOptions": []any{map[string]any{"networkId": "devnet", "tokenAddress": chain.Token.Hex(), "amount": "2"}}})
	mustStatus(t, plan, http.StatusCreated)
	d.clean()
}
