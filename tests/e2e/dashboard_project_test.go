package e2e

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// ownedProject signs a new user up and makes them a project, set up
// through the API as the dashboard would: a sandbox deposit key and a
// sandbox API key.
func ownedProject(t *testing.T, base, name string) (account, projectKeys) {
	t.Helper()
	owner := signup(t, base)
	made := owner.call(t, base, http.MethodPost, "/api/v1/projects", map[string]any{"name": name})
	mustStatus(t, made, http.StatusCreated)
	projectID := str(made.data()["id"])
	_, xpub := walletOf(t, projectID, false)
	mustStatus(t, owner.call(t, base, http.MethodPost, "/api/v1/projects/"+projectID+"/deposit-key", map[string]any{"xpub": xpub}), http.StatusOK)
	key := owner.call(t, base, http.MethodPost, "/api/v1/projects/"+projectID+"/api-keys", nil)
	mustStatus(t, key, http.StatusCreated)
	return owner, projectKeys{projectID, str(key.data()["secret"])}
}

// Exceptions resolved in the dashboard:
// an underpaid session accepted as paid, an unexpected transfer (paid to
// a session that had ended) assigned to a new session, each then shown
// completed; and an endpoint disabled by its receiver (410 Gone) shows
// why, with its webhook_endpoint.disabled event.
func TestDashboardResolvesExceptions(t *testing.T) {
	d := newDashboard(t)
	owner, keys := ownedProject(t, d.base, "Exceptions shop")
	projectID := keys.id
	page := func(p string) string { return "/dashboard/projects/" + projectID + "/sandbox/" + p }

	// Underpaid by 2 of 6 USDC: accepted as paid.
	under := openSession(t, d.base, keys, "6", "usdc-devnet")
	payToken(t, 3, str(under["depositAddress"]), units("4000000"))
	waitSession(t, d.base, str(under["token"]), "underpaid", func(s map[string]any) bool { return s["exception"] == "underpaid" })
	d.signIn(owner)
	d.open(page("sessions/" + str(under["id"])))
	d.waitText("main", "Exception: Underpaid", 10*time.Second)
	d.screens("session-underpaid")
	d.run(chromedp.Click("#resolve"))
	d.clickIn("dialog", "Accept as paid")
	d.waitText("#session-status", "Completed", 30*time.Second)
	d.waitText("main", "Underpayment accepted", 10*time.Second)
	if s := get(t, d.base, "/api/v1/projects/"+projectID+"/checkout-sessions/"+str(under["id"]), keys.key).data(); s["resolution"] != "underpayment_accepted" {
		t.Fatalf("the session after accepting it = %v", s)
	}

	// A transfer to a session that had ended, assigned to a new one.
	short, _ := newAPI(t, apiOptions{lifetime: 2 * time.Second})
	shortLateWindow(t, projectID)
	ended := openSession(t, short.URL, keys, "5", "usdc-devnet")
	waitWorkflowEnded(t, str(ended["id"]))
	tx := waitTx(t, d.base, keys, payToken(t, 3, str(ended["depositAddress"]), units("5000000")), "finalized")
	if tx["unexpected"] != true {
		t.Fatalf("the transfer to the ended session = %v", tx)
	}
	fresh := openSession(t, d.base, keys, "5", "usdc-devnet")
	d.open(page("transactions/" + str(tx["id"])))
	d.waitText("main", "Unexpected transfer", 10*time.Second)
	d.screens("transaction-unexpected")
	d.fill("Checkout session ID", str(fresh["id"]))
	d.click("Assign")
	d.waitText("main", "Assigned to", 10*time.Second)
	waitSession(t, d.base, str(fresh["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	d.open(page("sessions/" + str(fresh["id"])))
	d.waitText("#session-status", "Completed", 10*time.Second)

	// An endpoint that answers 410 Gone is disabled, and says so.
	gone := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }))
	hook := post(t, d.base, "/api/v1/projects/"+projectID+"/webhooks", keys.key, map[string]any{"url": gone + "/hooks", "enabledEvents": []string{"*"}})
	mustStatus(t, hook, http.StatusCreated)
	d.open(page("webhooks/" + str(hook.data()["id"])))
	d.click("Send a test event")
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		status := get(t, d.base, "/api/v1/projects/"+projectID+"/webhooks/"+str(hook.data()["id"]), keys.key).data()["status"]
		return status == "disabled", fmt.Sprintf("the endpoint answering 410 is %v, want disabled", status)
	})
	d.open(page("webhooks/" + str(hook.data()["id"])))
	d.waitText("#disabled-notice", "webhook_endpoint.disabled", 10*time.Second)
	d.waitText("#disabled-notice", "410", time.Second)
	d.screens("webhook-disabled")
}

// A team in the dashboard, by keyboard where a user would type: the owner
// invites a developer from the members page; the invitee, signed out,
// follows the link, signs up on the sign-up page (Enter submits), accepts
// and lands in the project with the invitation's role, where owner-only
// controls are not offered. The owner edits and archives a plan, rolls an
// API key and rotates and disables a webhook endpoint's secret.
func TestDashboardTeamAndChanges(t *testing.T) {
	d := newDashboard(t)
	owner, keys := ownedProject(t, d.base, "Team shop")
	projectID := keys.id
	page := func(p string) string { return "/dashboard/projects/" + projectID + "/sandbox/" + p }

	// The first Tab reaches the skip link, which moves to the page.
	d.open("/dashboard/login")
	d.run(chromedp.KeyEvent("\t"))
	if got := d.eval(`document.activeElement.textContent`); got != "Skip to content" {
		t.Fatalf("the first Tab focuses %q", got)
	}
	d.run(chromedp.KeyEvent("\r"))
	d.run(chromedp.KeyEvent("\t"))
	if got := d.eval(`document.activeElement.type || document.activeElement.tagName`); got != "email" {
		t.Fatalf("after the skip link, Tab focuses %q; want the email field", got)
	}
	d.run(chromedp.SendKeys(`input[type=email]`, owner.email))
	d.run(chromedp.SendKeys(`input[type=password]`, owner.password+"\r"))
	d.waitText("header.top", owner.email, 10*time.Second)

	// The invitation, shown once as a link.
	d.open(page("members"))
	d.fill("Email", "invitee@example.com")
	d.click("Invite")
	d.run(chromedp.WaitVisible("dialog [data-secret]"))
	link := d.text("dialog [data-secret]")
	if !strings.HasPrefix(link, d.base+"/dashboard/invitation#token=") {
		t.Fatalf("invitation link = %q", link)
	}
	d.clickIn("dialog", "Done, I have saved it")

	// The owner's changes: a plan edited then archived, a key rolled, an
	// endpoint's secret rotated and the endpoint disabled.
	plan := post(t, d.base, "/api/v1/projects/"+projectID+"/payment-plans", keys.key, map[string]any{"title": "Old title", "amountUsd": "3"})
	mustStatus(t, plan, http.StatusCreated)
	d.open(page("plans/" + str(plan.data()["id"])))
	d.click("Edit")
	d.waitText("h1", "Edit", 5*time.Second)
	d.fill("Title", "New title")
	d.click("Save changes")
	d.waitText("h1", "New title", 10*time.Second)
	d.click("Archive")
	d.clickIn("dialog", "Archive")
	d.waitText(".page-head", "Archived", 10*time.Second)
	if p := get(t, d.base, "/api/v1/projects/"+projectID+"/payment-plans/"+str(plan.data()["id"]), keys.key).data(); p["title"] != "New title" ||
		p["amountUsd"] != "3.00" || p["status"] != "archived" {
		t.Fatalf("the plan after the dashboard's changes = %v", p)
	}
	// An archived plan's link opens no session.
	d.run(chromedp.Navigate(d.base + "/pay/" + str(plan.data()["id"])))
	d.waitText("#title", "Checkout unavailable", 10*time.Second)

	d.open(page("api-keys"))
	d.click("Roll")
	d.clickIn("dialog", "Roll")
	d.run(chromedp.WaitVisible("dialog [data-secret]"))
	rolled := d.text("dialog [data-secret]")
	d.clickIn("dialog", "Done, I have saved it")
	mustStatus(t, get(t, d.base, "/api/v1/projects/"+projectID, rolled), http.StatusOK)
	mustStatus(t, get(t, d.base, "/api/v1/projects/"+projectID, keys.key), http.StatusOK) // the grace period

	hook := post(t, d.base, "/api/v1/projects/"+projectID+"/webhooks", keys.key, map[string]any{"url": "https://hooks.example/h", "enabledEvents": []string{"*"}})
	mustStatus(t, hook, http.StatusCreated)
	d.open(page("webhooks/" + str(hook.data()["id"])))
	d.click("Rotate secret")
	d.clickIn("dialog", "Rotate")
	d.run(chromedp.WaitVisible("dialog [data-secret]"))
	if s := d.text("dialog [data-secret]"); !strings.HasPrefix(s, "whsec_") || s == str(hook.data()["secret"]) {
		t.Fatalf("the rotated secret = %q", s)
	}
	d.clickIn("dialog", "Done, I have saved it")
	d.click("Disable")
	d.clickIn("dialog", "Disable")
	d.waitText("#disabled-notice", "disabled", 10*time.Second)

	// An OAuth application registered, its secret shown once, revoked.
	d.open(page("apps"))
	d.fill("Name", "Ledger sync")
	d.fill("Redirect URIs, one per line", "https://ledger.example/callback\nhttp://127.0.0.1/cb")
	d.click("Register")
	d.run(chromedp.WaitVisible("dialog [data-secret]"))
	if s := d.text("dialog [data-secret]"); !strings.HasPrefix(s, "svc_cs_") {
		t.Fatalf("the application's secret = %q", s)
	}
	d.clickIn("dialog", "Done, I have saved it")
	d.waitText("main table", "https://ledger.example/callback", 10*time.Second)
	d.screens("apps")
	d.click("Revoke")
	d.clickIn("dialog", "Revoke")
	d.waitText("main table", "Revoked", 10*time.Second)

	// The invitee follows the link signed out, signs up, accepts.
	d.click("Sign out")
	d.waitText("h1", "Sign in", 5*time.Second)
	d.run(chromedp.Navigate(link))
	d.waitText("h1", "Sign in", 10*time.Second)
	d.click("Create one")
	d.waitText("h1", "Create an account", 5*time.Second)
	d.screens("signup")
	d.run(chromedp.SendKeys(`input[type=email]`, "invitee@example.com"))
	d.run(chromedp.SendKeys(`input[type=password]`, "the invitee's long password\r"))
	d.waitText("h1", "Join a project", 10*time.Second)
	d.screens("invitation")
	d.click("Accept invitation")
	d.waitText("h1", "Overview", 10*time.Second)
	if !strings.Contains(d.location(), projectID) || !strings.Contains(d.text("header.top"), "invitee@example.com") {
		t.Fatalf("after accepting: %s, %q", d.location(), d.text("header.top"))
	}
	d.open(page("members"))
	if body := d.text("main"); !strings.Contains(body, owner.email) || !strings.Contains(body, "invitee@example.com") || !strings.Contains(body, "Developer") {
		t.Fatalf("the members page for the developer: %s", body)
	}
	d.open(page("api-keys"))
	if n := d.eval(`String(document.querySelectorAll('#create-key, button[data-revoke]').length)`); n != "0" || !strings.Contains(d.text("main"), "Your role in this project (developer)") {
		t.Fatalf("a developer is offered owner-only controls (%s): %s", n, d.text("main"))
	}
}

// testnetAccount is a test network wallet's account key made from seed,
// as the wallet exports it (a tpub).
func testnetAccount(t *testing.T, seed string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(seed))
	_, xpub, err := keys.NewDevKey(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	k, err := hdkeychain.NewKeyFromString(xpub)
	if err != nil {
		t.Fatal(err)
	}
	k.SetNet(&chaincfg.TestNet3Params)
	return k.String()
}
