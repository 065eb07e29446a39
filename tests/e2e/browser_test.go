package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/paymentsd/paymentsd/dev/devchain"
)

// browser is a headless Chromium at a phone's width, with the helpers the
// tests drive it with.
type browser struct {
	ctx  context.Context
	run  func(chromedp.Action[chromedp.Void])
	text func(sel string) string
	shot func(name string)
}

// newBrowser starts Chromium; script, when set, runs in every page before
// the page's own scripts (as a browser wallet's injected provider does).
func newBrowser(t *testing.T, path, script string) browser {
	return newBrowserFor(t, path, script, 90*time.Second)
}

// newBrowserFor is newBrowser for a test that drives the browser for up
// to timeout.
func newBrowserFor(t *testing.T, path, script string, timeout time.Duration) browser {
	dir := os.Getenv("SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join("testdata", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(390, 900))...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	b := browser{ctx: ctx}
	b.run = func(a chromedp.Action[chromedp.Void]) {
		t.Helper()
		if _, err := chromedp.Run(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	b.text = func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	b.shot = func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if script != "" {
		b.run(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
			return err
		}))
	}
	return b
}

// chromium finds Debian's Chromium; the test needs a real browser.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium on the CI machine: .ci/run installs Debian's chromium package")
	}
	t.Skip("no Chromium installed (apt-get install chromium); .ci/run installs it")
	return ""
}

// The hosted checkout page in headless Chromium: it shows the amount, the
// address and the QR code of a new session, follows the payment to
// completed and sends the customer to the plan's redirect URL. Screenshots
// of each state are saved under tests/e2e/testdata/screenshots (or
// $SCREENSHOT_DIR).
func TestCheckoutPageInBrowser(t *testing.T) {
	browser := chromium(t)
	ts, _, keys := sandboxAPI(t, apiOptions{})
	// The merchant's thank-you page, where the customer lands.
	landed := make(chan struct{}, 1)
	shop := http.NewServeMux()
	shop.HandleFunc("/thanks", func(w http.ResponseWriter, r *http.Request) {
		select {
		case landed <- struct{}{}:
		default:
		}
		_, _ = w.Write([]byte("<!doctype html><title>Thanks</title><h1>Thanks for your order</h1>"))
	})
	shopSrv := httptestServer(t, shop)
	plan := post(t, ts.URL, "/api/v1/projects/"+keys.id+"/payment-plans", keys.key, map[string]any{
		"title": "Pro subscription", "amountUsd": "6", "redirectUrl": shopSrv + "/thanks",
		"merchantInfo":          map[string]any{"name": "Example Shop"},
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet"}}})
	mustStatus(t, plan, http.StatusCreated)
	cs := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan.data()["id"]})
	mustStatus(t, cs, http.StatusCreated)
	token, address := str(cs.data()["token"]), str(cs.data()["depositAddress"])

	b := newBrowser(t, browser, "")
	ctx, run, text, shot := b.ctx, b.run, b.text, b.shot

	run(chromedp.Navigate(ts.URL + "/checkout/" + token))
	run(chromedp.WaitVisible("#pay"))
	qrWidth, err := chromedp.Run(ctx, chromedp.Poll[int](`document.getElementById("qr").naturalWidth || false`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	title, amount, shownAddress, due := text("#title"), text("#amount"), text("#address"), text("#due")
	shot("1-open")
	if title != "Pro subscription" || amount != "$6.00" || shownAddress != address || due != "6 USDC" || qrWidth < 100 {
		t.Fatalf("page shows title %q, amount %q, address %q, due %q, qr %dpx", title, amount, shownAddress, due, qrWidth)
	}

	// Pay the way a developer does: `paymentsd dev pay <token>`.
	bin := filepath.Join(t.TempDir(), "paymentsd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/paymentsd").CombinedOutput(); err != nil {
		t.Fatalf("build paymentsd: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "dev", "pay", token, "--api", ts.URL, "--rpc", chain.URL, "--account", "4").CombinedOutput(); err != nil {
		t.Fatalf("paymentsd dev pay: %v\n%s", err, out)
	}
	run(chromedp.WaitVisible(`#status.completed`))
	status := text("#status")
	countdown, err := chromedp.Run(ctx, chromedp.TextContent("#countdown"))
	if err != nil {
		t.Fatal(err)
	}
	shot("2-completed")
	if status != "Paid" || countdown != "" {
		t.Fatalf("status = %q, countdown %q (a paid session has no expiry to show)", status, countdown)
	}
	select {
	case <-landed:
	case <-time.After(20 * time.Second):
		t.Fatal("the page did not send the customer to the redirect URL")
	}
	run(chromedp.WaitVisible("h1"))
	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	shot("3-redirected")
	if !strings.HasSuffix(url, "/thanks") {
		t.Fatalf("landed on %s", url)
	}
}

// The hosted page's wallet button, driven through an EIP-1193 provider
// injected before the page loads (as a browser wallet presents itself),
// asks for what is still due: a session underpaid by 2 of 6 USDC is paid
// the 4 left, and completes without an overpayment.
func TestCheckoutPageWalletPaysWhatIsDue(t *testing.T) {
	path := chromium(t)
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "6", "usdc-devnet")
	token := str(cs["token"])
	payToken(t, 3, str(cs["depositAddress"]), units("2000000"))
	waitSession(t, ts.URL, token, "underpaid", func(s map[string]any) bool { return s["exception"] == "underpaid" })

	sent := make(chan *big.Int, 1)
	b := newBrowser(t, path, `window.ethereum = {request: ({method, params}) => window.devWallet({method, params: params || []})};`)
	b.run(chromedp.ExposeFunc("devWallet", devWallet(chain.Accounts[3], sent)))
	b.run(chromedp.Navigate(ts.URL + "/checkout/" + token))
	b.run(chromedp.WaitVisible("#wallet"))
	due := b.text("#due")
	b.shot("4-wallet-underpaid")
	if due != "4 USDC" {
		t.Fatalf("an underpaid session shows %q due, want 4 USDC", due)
	}
	b.run(chromedp.Click("#wallet"))
	select {
	case v := <-sent:
		if v.Cmp(units("4000000")) != 0 {
			t.Fatalf("the wallet was asked for %s base units, want 4000000", v)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the button did not ask the wallet for a transaction; the page says %q", b.text("#wallet-msg"))
	}
	done := waitSession(t, ts.URL, token, "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	b.run(chromedp.WaitVisible("#status.completed"))
	b.shot("5-wallet-paid")
	if done["amountPaidUsd"] != "6.00" || done["exception"] != nil {
		t.Fatalf("session paid by the wallet = %v", done)
	}
}

// devWallet answers an injected EIP-1193 provider's requests the way a
// browser wallet does, signing with a funded dev-chain account: the
// account for eth_requestAccounts, and eth_sendTransaction sent to the dev
// chain. The token amount of each transfer it sends goes to sent. (A
// wallet talks to its page outside the page's Content-Security-Policy, as
// this exposed function does.)
func devWallet(from devchain.Account, sent chan<- *big.Int) func(context.Context, walletRequest) (any, error) {
	return func(ctx context.Context, req walletRequest) (any, error) {
		switch req.Method {
		case "eth_requestAccounts", "eth_accounts":
			return []string{from.Address.Hex()}, nil
		case "wallet_switchEthereumChain":
			return nil, nil
		case "eth_sendTransaction":
			var tx struct {
				To    common.Address `json:"to"`
				Value *hexutil.Big   `json:"value"`
				Data  hexutil.Bytes  `json:"data"`
			}
			if len(req.Params) != 1 || json.Unmarshal(req.Params[0], &tx) != nil {
				return nil, errors.New("bad transaction")
			}
			value := (*big.Int)(tx.Value)
			if value == nil {
				value = new(big.Int)
			}
			if len(tx.Data) == 4+64 {
				sent <- new(big.Int).SetBytes(tx.Data[4+32:]) // transfer(to, amount)
			}
			h, err := chain.Transact(ctx, from, tx.To, value, tx.Data)
			return h.Hex(), err
		}
		return nil, errors.New("unsupported method " + req.Method)
	}
}

// walletRequest is an EIP-1193 request.
type walletRequest struct {
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}
