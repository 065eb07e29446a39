package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

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
// of each state are saved under e2e/testdata/screenshots (or
// $SCREENSHOT_DIR).
func TestCheckoutPageInBrowser(t *testing.T) {
	browser := chromium(t)
	ts, e := newAPI(t, apiOptions{})
	p := newProject(t, e)
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
	plan := post(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/payment-plans", p.SandboxKey, map[string]any{
		"title": "Pro subscription", "amountUsd": "6", "redirectUrl": shopSrv + "/thanks",
		"merchantInfo":          map[string]any{"name": "Example Shop"},
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet"}}})
	mustStatus(t, plan, http.StatusCreated)
	cs := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan.data()["id"]})
	mustStatus(t, cs, http.StatusCreated)
	token, address := str(cs.data()["token"]), str(cs.data()["depositAddress"])

	dir := os.Getenv("SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join("testdata", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(390, 900))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	run := func(a chromedp.Action[chromedp.Void]) {
		t.Helper()
		if _, err := chromedp.Run(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

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
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/paymentsd").CombinedOutput(); err != nil {
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
