package e2e

import (
	"encoding/csv"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/service"
)

// dashboard is the dashboard under test: an API on a localhost address
// (passkeys need a domain name), a Chromium driving it, and what the page
// did that a user would not see: requests to other hosts, script errors
// and Content-Security-Policy violations.
type dashboard struct {
	browser
	t    *testing.T
	base string
	svc  *service.Service
	mu   sync.Mutex
	// foreign are requests to anything but the API's origin and the
	// expected addresses; problems are uncaught exceptions and console
	// errors.
	foreign, problems, expected []string
}

// sendWithWallet clicks button, opens the wallet from its dialog, and
// fails unless the wallet is asked within 30 seconds to send want base
// units (of what).
func (d *dashboard) sendWithWallet(button string, sent <-chan *big.Int, want, what string) {
	d.t.Helper()
	d.click(button)
	d.clickIn("dialog", "Open the wallet")
	select {
	case v := <-sent:
		if v.Cmp(units(want)) != 0 {
			d.t.Fatalf("the wallet was asked to send %s base units for %s, want %s", v, what, want)
		}
	case <-time.After(30 * time.Second):
		d.t.Fatalf("the wallet was never asked to send %s", what)
	}
}

// expect allows requests to addresses under prefix (an application the
// browser is sent back to).
func (d *dashboard) expect(prefix string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expected = append(d.expected, prefix)
}

// cspWatch records the page's Content-Security-Policy violations.
const cspWatch = `window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`

func newDashboard(t *testing.T) *dashboard {
	path := chromium(t)
	base, e := localhostAPI(t)
	d := &dashboard{browser: newBrowserFor(t, path, cspWatch, 8*time.Minute), t: t, base: base, svc: e}
	d.desktop()
	if err := chromedp.Listen(d.ctx, func(ev any) {
		d.mu.Lock()
		defer d.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u := ev.Request.URL
			if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") &&
				!slices.ContainsFunc(d.expected, func(p string) bool { return strings.HasPrefix(u, p) }) {
				d.foreign = append(d.foreign, u)
			}
		case *runtime.EventExceptionThrown:
			d.problems = append(d.problems, fmt.Sprintf("exception: %s %s", ev.ExceptionDetails.Text, exceptionText(ev.ExceptionDetails.Exception)))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				d.problems = append(d.problems, "console.error: "+strings.Join(args, " "))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.clean)
	return d
}

// clean fails the test on any request to another host, script error or
// policy violation seen during it.
func (d *dashboard) clean() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.foreign) > 0 {
		d.t.Errorf("the dashboard made third-party requests: %v", d.foreign)
	}
	if len(d.problems) > 0 {
		d.t.Errorf("script errors in the dashboard: %v", d.problems)
	}
}

func (d *dashboard) desktop() { d.run(chromedp.EmulateViewport(1280, 900)) }
func (d *dashboard) phone()   { d.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)) }

// open navigates to a dashboard path and waits for its page to be drawn.
func (d *dashboard) open(path string) {
	d.t.Helper()
	d.run(chromedp.Navigate(d.base + path))
	d.ready()
}

// ready waits until the page is drawn (the app is not busy) and checks
// that no Content-Security-Policy violation happened.
func (d *dashboard) ready() {
	d.t.Helper()
	d.run(chromedp.WaitVisible(`#app[aria-busy="false"] h1`))
	csp := d.eval(`JSON.stringify(window.__csp || [])`)
	if csp != "[]" {
		d.t.Fatalf("Content-Security-Policy violations: %s", csp)
	}
}

// eval runs JavaScript in the page and returns its string result.
func (d *dashboard) eval(js string) string {
	d.t.Helper()
	out, err := chromedp.Run(d.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		d.t.Fatalf("%s: %v", js, err)
	}
	return out
}

// clickIn clicks the button or link whose text is text inside scope (a
// dialog, say).
func (d *dashboard) clickIn(scope, text string) {
	d.t.Helper()
	d.waitVisible(scope, 5*time.Second)
	q := fmt.Sprintf(`(() => { const el = [...document.querySelectorAll(%q)].find((e) => e.textContent.trim() === %q);
		if (!el) return 'missing'; el.click(); return 'ok'; })()`, scope+" button, "+scope+" a", text)
	if r := d.eval(q); r != "ok" {
		d.t.Fatalf("no %q in %s on %s", text, scope, d.location())
	}
}

// signIn signs an account in through the sign-in page.
func (d *dashboard) signIn(a account) {
	d.t.Helper()
	d.open("/dashboard/login")
	d.fill("Email", a.email)
	d.fill("Password", a.password)
	d.click("Sign in")
	d.waitText("header.top", a.email, 10*time.Second)
}

// click clicks the visible button or link whose text is text.
func (d *dashboard) click(text string) {
	d.t.Helper()
	q := fmt.Sprintf(`(() => { const el = [...document.querySelectorAll('button, a')].find((e) => e.textContent.trim() === %q && e.checkVisibility());
		if (!el) return 'missing'; el.click(); return 'ok'; })()`, text)
	if r := d.eval(q); r != "ok" {
		d.shot("missing-" + strings.ReplaceAll(strings.ToLower(text), " ", "-"))
		d.t.Fatalf("no %q to click on %s", text, d.location())
	}
}

// fill types into the input labelled label.
func (d *dashboard) fill(label, value string) {
	d.t.Helper()
	id := d.eval(fmt.Sprintf(`(() => { const l = [...document.querySelectorAll('label')].find((e) => e.textContent.trim() === %q && e.checkVisibility());
		return l ? l.htmlFor : ''; })()`, label))
	if id == "" {
		d.t.Fatalf("no field %q on %s", label, d.location())
	}
	d.run(chromedp.SetValue("#"+id, value))
}

func (d *dashboard) location() string {
	u, _ := chromedp.Run(d.ctx, chromedp.Location())
	return u
}

// waitVisible waits until the element is shown.
func (d *dashboard) waitVisible(sel string, within time.Duration) {
	d.t.Helper()
	d.waitFor(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.checkVisibility(); })()`, sel), sel+" shown", within)
}

func (d *dashboard) waitFor(js, what string, within time.Duration) {
	d.t.Helper()
	if _, err := chromedp.Run(d.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(200*time.Millisecond))); err != nil {
		d.shot("timeout")
		main, _ := chromedp.Run(d.ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 1500)`))
		d.t.Fatalf("never %s on %s: %v\npage: %s", what, d.location(), err, main)
	}
}

// waitText waits until the element's text contains want.
func (d *dashboard) waitText(sel, want string, within time.Duration) {
	d.t.Helper()
	d.waitFor(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want),
		fmt.Sprintf("%s showing %q", sel, want), within)
}

// screens saves a screenshot at desktop and at phone width, and fails on
// text wider than the screen (a horizontal scroll bar) on either.
func (d *dashboard) screens(name string) {
	d.t.Helper()
	for _, w := range []struct {
		name string
		set  func()
	}{{"desktop", d.desktop}, {"phone", d.phone}} {
		w.set()
		d.run(chromedp.Sleep(150 * time.Millisecond))
		over := d.eval(`(() => { const w = document.documentElement.clientWidth;
			const wide = [...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > w + 1 && !e.closest('.table-wrap, pre, nav.side'));
			return wide.slice(0, 3).map((e) => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 40)).join(' | '); })()`)
		d.shot("dashboard-" + name + "-" + w.name)
		if junk := d.eval(`(document.querySelector('main').innerText.match(/\b(null|undefined|NaN)\b|\[object \w+\]/) || [''])[0]`); junk != "" {
			d.t.Errorf("%s shows %q: a value the page did not render", name, junk)
		}
		if over != "" {
			d.t.Errorf("%s at %s width: content wider than the screen: %s", name, w.name, over)
		}
	}
	d.desktop()
}

// The merchant's day in the dashboard, in a real Chromium: sign in with a
// password, make a project and give it a deposit key, add a webhook
// endpoint, create a plan, open its payment link and pay it with
// `paymentsd dev pay`, watch the session turn completed and the
// transaction finalized without a reload, see the deliveries, export the
// transactions as CSV, and create and revoke an API key that the API then
// refuses. Every page is saved as a screenshot at desktop and phone
// widths; no page requests another host, throws, or breaks its policy.
func TestDashboardInARealBrowser(t *testing.T) {
	d := newDashboard(t)
	owner := signup(t, d.base)

	// Signed out, the dashboard asks to sign in, then comes back.
	d.open("/dashboard/")
	if !strings.Contains(d.location(), "/dashboard/login") {
		t.Fatalf("a signed-out visit landed on %s", d.location())
	}
	d.screens("login")
	d.fill("Email", owner.email)
	d.fill("Password", "not the password")
	d.click("Sign in")
	d.waitVisible(".form-error", 5*time.Second)
	d.fill("Password", owner.password)
	d.click("Sign in")
	d.waitText("h1", "Create your first project", 10*time.Second)
	d.fill("Name", "Dashboard shop")
	d.click("Create project")
	d.waitText("h1", "Overview", 10*time.Second)
	projectID := strings.Split(strings.TrimPrefix(d.location(), d.base+"/dashboard/projects/"), "/")[0]
	if !strings.HasPrefix(projectID, "proj_") || !strings.Contains(d.text("header.top"), owner.email) {
		t.Fatalf("after creating a project: %s, header %q", d.location(), d.text("header.top"))
	}
	page := func(p string) string { return "/dashboard/projects/" + projectID + "/sandbox/" + p }

	// The sandbox deposit key, set in the settings.
	_, xpub := walletOf(t, projectID, false)
	d.open(page("settings"))
	d.fill("Extended public key", xpub)
	d.click("Set deposit key")
	d.waitText("#toast", "Deposit key set for sandbox", 5*time.Second)
	d.ready()
	d.waitText("#deposit-key", xpub, 5*time.Second)
	// The sandbox's Bitcoin account key, for Taproot: its first address is
	// the one the key derives on the test networks.
	tpub := testnetAccount(t, projectID+"/bitcoin")
	d.fill("Bitcoin account key", tpub)
	d.fill("Kind of address", "p2tr")
	d.click("Set Bitcoin deposit key")
	d.waitText("#toast", "Bitcoin deposit key set for sandbox", 5*time.Second)
	d.ready()
	d.waitText("#bitcoin-deposit-key", tpub, 5*time.Second)
	bk, err := btckeys.ParseKey(tpub, btckeys.Taproot)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := bk.DeriveAddress(0, &chaincfg.TestNet3Params)
	if got, _, _ := strings.Cut(d.text("#bitcoin-deposit-key-first"), "\n"); got != first.EncodeAddress() || !strings.HasPrefix(got, "tb1p") {
		t.Fatalf("the Bitcoin key's first address shown: %q; want %s", got, first)
	}
	d.screens("settings")

	// A webhook endpoint on a real receiver; its secret is shown once.
	var hooks sync.Map
	recv := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks.Store(r.Header.Get("webhook-id"), string(b))
		_, _ = w.Write([]byte("thanks"))
	}))
	d.open(page("webhooks"))
	d.fill("Endpoint URL", recv+"/hooks")
	d.fill("Description (optional)", "Order system")
	d.click("Add endpoint")
	d.run(chromedp.WaitVisible("dialog [data-secret]"))
	if s := d.text("dialog [data-secret]"); !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("the new endpoint's secret shown: %q", s)
	}
	d.shot("dashboard-webhook-secret")
	d.click("Done, I have saved it")
	d.waitText("h1", recv+"/hooks", 5*time.Second)

	// A plan, made in the form, with its payment link.
	d.open(page("plans/new"))
	d.fill("Title", "Dashboard T-shirt")
	d.fill("Price in USD", "5")
	d.eval(`(() => { const s = [...document.querySelectorAll('select')].find((x) => [...x.options].some((o) => o.value === 'assets'));
		s.value = 'assets'; s.dispatchEvent(new Event('change')); return ''; })()`)
	d.run(chromedp.Click(`input[value="usdc-devnet"]`))
	d.fill("Name", "Dashboard shop")
	d.screens("plan-form")
	d.click("Create plan")
	d.waitText("h1", "Dashboard T-shirt", 10*time.Second)
	link := d.text("#payment-link")
	if !strings.HasPrefix(link, d.base+"/pay/plan_") {
		t.Fatalf("payment link = %q", link)
	}
	d.screens("plan")

	// The payment link opens a checkout session on the hosted page.
	d.run(chromedp.Navigate(link))
	d.run(chromedp.WaitVisible("#pay"))
	checkout := d.location()
	token := strings.TrimPrefix(checkout, d.base+"/checkout/")
	if len(token) != 64 {
		t.Fatalf("the payment link led to %s", checkout)
	}

	// The session in the dashboard, open; paid with `paymentsd dev pay`
	// while the page is shown, it turns completed without a reload.
	d.open(page("sessions"))
	d.screens("sessions")
	d.run(chromedp.Click(`table tbody tr:first-child td:first-child a`))
	d.waitText("#session-status", "Open", 10*time.Second)
	d.eval(`(() => { window.__samePage = 'yes'; return ''; })()`)
	bin := filepath.Join(t.TempDir(), "paymentsd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/paymentsd").CombinedOutput(); err != nil {
		t.Fatalf("build paymentsd: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "dev", "pay", token, "--api", d.base, "--rpc", chain.URL, "--account", "4").CombinedOutput(); err != nil {
		t.Fatalf("paymentsd dev pay: %v\n%s", err, out)
	}
	d.waitText("#session-status", "Completed", 60*time.Second)
	d.waitText("#session-paid", "$5.00", 5*time.Second)
	if d.eval(`window.__samePage || 'reloaded'`) != "yes" {
		t.Fatal("the session page was reloaded to show the payment")
	}
	d.screens("session")

	// Its transaction, followed to finalized on the same page.
	d.run(chromedp.Click(`a[href*="/transactions/tx_"]`))
	d.waitText("#tx-status", "", 10*time.Second)
	d.eval(`(() => { window.__samePage = 'yes'; return ''; })()`)
	d.waitText("#tx-status", "Finalized", 60*time.Second)
	d.waitText("#tx-confirmations", "of 3", time.Second)
	if d.eval(`window.__samePage || 'reloaded'`) != "yes" {
		t.Fatal("the transaction page was reloaded to show it finalized")
	}
	if body := d.text("main"); !strings.Contains(body, "5 USDC") || !strings.Contains(body, "Temporal workflow") {
		t.Fatalf("the transaction page lacks its amount or workflow: %s", body)
	}
	d.screens("transaction")

	// The overview counts it, in the browser's day.
	d.open(page(""))
	d.waitText(`[data-stat="paid-today"]`, "$5.00", 10*time.Second)
	d.screens("overview")

	// The transactions, filtered and exported as CSV.
	dir := t.TempDir()
	if _, err := chromedp.Call(d.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatal(err)
	}
	d.open(page("transactions?status=finalized"))
	d.screens("transactions")
	d.click("Export CSV")
	d.waitText("#toast", "Downloaded", 10*time.Second)
	files, _ := filepath.Glob(filepath.Join(dir, "transactions-sandbox-*.csv"))
	if len(files) != 1 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("downloaded: %v", entries)
	}
	f, _ := os.Open(files[0])
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 2 || !strings.Contains(strings.Join(rows[1], ","), "finalized") {
		t.Fatalf("the CSV export: %v %v", rows, err)
	}

	// The endpoint's delivery log shows the payment's events delivered,
	// with the receiver's answer; a test event joins them.
	d.open(page("webhooks"))
	d.run(chromedp.Click(`table tbody tr:first-child td:first-child a`))
	d.ready()
	d.waitText("main", "checkout.session.completed", 30*time.Second)
	d.waitText("main", "HTTP 200", 10*time.Second)
	d.click("Send a test event")
	d.waitText("main", "webhook.test", 15*time.Second)
	d.screens("webhook")
	d.run(chromedp.Click(`table tbody tr:first-child td:last-child button`))
	d.waitText("#toast", "Delivered now (attempt 2)", 20*time.Second)
	delivered := 0
	hooks.Range(func(_, v any) bool {
		if strings.Contains(v.(string), projectID) {
			delivered++
		}
		return true
	})
	if delivered < 3 {
		t.Fatalf("the receiver got %d deliveries", delivered)
	}

	// An API key: created (its secret shown once), used, revoked in the
	// dashboard, then refused by the API.
	d.open(page("api-keys"))
	d.click("Create sandbox key")
	d.run(chromedp.WaitVisible("dialog [data-secret]"))
	key := d.text("dialog [data-secret]")
	d.click("Done, I have saved it")
	d.ready()
	mustStatus(t, get(t, d.base, "/api/v1/projects/"+projectID, key), http.StatusOK)
	d.screens("api-keys")
	d.run(chromedp.Click(`button[data-revoke]`))
	d.clickIn("dialog", "Revoke")
	d.waitText("#toast", "Key revoked", 5*time.Second)
	mustStatus(t, get(t, d.base, "/api/v1/projects/"+projectID, key), http.StatusUnauthorized)

	// The other pages, at both widths.
	for _, p := range []string{"events", "members", "deposit-addresses", "audit-log", "plans"} {
		d.open(page(p))
		d.screens(strings.ReplaceAll(p, "/", "-"))
	}
	d.open("/dashboard/account")
	d.screens("account")

	// An unknown page and a project the user is not a member of say so.
	d.open(page("no-such-page"))
	d.waitText("h1", "Not found", 5*time.Second)
	d.open("/dashboard/projects/proj_01m80h0jzc3psaavehj57fnh3h/sandbox/")
	d.waitText("main", "not a member of this project", 5*time.Second)

	// Live is one click away and marked as such; its data is apart.
	d.open("/dashboard/projects/" + projectID + "/live/sessions")
	if !strings.Contains(d.text(".live-banner"), "Live") || !strings.Contains(d.text("main"), "No checkout session") {
		t.Fatalf("the live environment: banner %q, page %q", d.text(".live-banner"), d.text("main"))
	}
	d.screens("live-sessions")
}

// Passkeys in the dashboard: added from the account page through the
// DevTools virtual authenticator, then used to sign in with no email
// typed; the sign-out button ends the session.
func TestDashboardPasskeySignIn(t *testing.T) {
	d := newDashboard(t)
	owner := signup(t, d.base)
	mustStatus(t, owner.call(t, d.base, http.MethodPost, "/api/v1/projects", map[string]any{"name": "Passkey shop"}), http.StatusCreated)
	if _, err := chromedp.Call(d.ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(d.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}}); err != nil {
		t.Fatal(err)
	}
	d.open("/dashboard/login")
	d.fill("Email", owner.email)
	d.fill("Password", owner.password)
	d.click("Sign in")
	d.waitText("header.top", owner.email, 10*time.Second)

	d.open("/dashboard/account")
	d.click("Add a passkey")
	d.run(chromedp.WaitVisible("dialog input"))
	d.run(chromedp.SetValue("dialog input", "Test laptop"))
	d.click("Continue")
	d.waitText("#toast", "Passkey added", 10*time.Second)
	d.waitText("main", "Test laptop", 5*time.Second)

	d.click("Sign out")
	d.waitText("h1", "Sign in", 5*time.Second)
	if r := d.eval(`fetch('/api/v1/auth/me').then((r) => String(r.status))`); r != "401" {
		t.Fatalf("after signing out, /auth/me = %s", r)
	}
	d.click("Sign in with a passkey")
	d.waitText("header.top", owner.email, 10*time.Second)
	if !strings.Contains(d.text("header.top"), owner.email) {
		t.Fatalf("signed in with the passkey as %q", d.text("header.top"))
	}
	u, _ := url.Parse(d.location())
	if !strings.HasPrefix(u.Path, "/dashboard/projects/") {
		t.Fatalf("after the passkey sign-in: %s", u)
	}
	d.open("/dashboard/account")
	d.waitText("main", "Test laptop", 5*time.Second)
	d.screens("account-passkey")

	// The password, changed with the current one; the old one then fails.
	d.fill("Current password", owner.password)
	d.fill("New password", "a brand new long password")
	d.click("Change password")
	d.waitText("#toast", "Password changed", 10*time.Second)
	if r := do(t, d.base, request{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": owner.email, "password": owner.password}}); r.Status != http.StatusUnauthorized {
		t.Fatalf("the old password after the change: %d", r.Status)
	}
	login(t, d.base, account{email: owner.email, password: "a brand new long password"})
}

func exceptionText(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	return o.Description
}
