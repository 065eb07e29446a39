package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// In Chromium, an owner whose sign-in is an hour old saves the project's
// payment settings, adds, rotates and deletes a webhook endpoint, and
// allows an application on the consent page: each asks for the password
// in the dialog, then is done, without being asked again. Denying an
// application asks nothing.
func TestDashboardAsksForThePasswordBeforePolicyWebhooksAndConsent(t *testing.T) {
	d := newDashboard(t)
	d.desktop()
	owner, keys := ownedProject(t, d.base, "Fresh sign-in shop")
	app := newOAuthApp(t, owner, d.base, keys.id, true, "plans:read")
	d.expect(strings.TrimSuffix(app.conf.RedirectURL, "/callback") + "/")
	d.signIn(owner)
	page := func(p string) string { return "/dashboard/projects/" + keys.id + "/sandbox/" + p }
	stale := func() {
		t.Helper()
		if _, err := st.Pool().Exec(context.Background(), `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour'
			WHERE user_id = (SELECT id FROM users WHERE email = $1)`, owner.email); err != nil {
			t.Fatal(err)
		}
	}
	confirmIdentity := func() {
		t.Helper()
		d.waitText("dialog", "Confirm it is you", 10*time.Second)
		d.fill("Password", owner.password)
		d.clickIn("dialog", "Confirm")
	}
	project := func() map[string]any { return get(t, d.base, "/api/v1/projects/"+keys.id, keys.key).data() }
	// shows waits for the page at path to show text in its h1, one
	// evaluation a try: a poll that outlives its document (a redirect,
	// the application's page on another site) fails instead of waiting.
	shows := func(path, text string) {
		t.Helper()
		js := fmt.Sprintf(`document.readyState === 'complete' && location.pathname === %q &&
			[...document.querySelectorAll('h1')].some((e) => e.textContent.includes(%q))`, path, text)
		testwait.Until(t, 15*time.Second, func() (bool, string) {
			ok, err := chromedp.Run(d.ctx, chromedp.Evaluate[bool](js))
			return err == nil && ok, fmt.Sprintf("%s showing %q (at %s)", path, text, d.location())
		})
	}

	// The payment settings; a new name alone asks nothing.
	stale()
	d.open(page("settings"))
	d.fill("Name", "Renamed with an old sign-in")
	d.clickIn("main form", "Save settings")
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		return project()["name"] == "Renamed with an old sign-in", "the new name saved"
	})
	if d.eval(`String(!!document.querySelector('dialog[open]'))`) != "false" {
		t.Fatal("renaming the project asked for the password")
	}
	d.open(page("settings"))
	d.fill("Underpayment tolerance (%)", "7.5")
	d.clickIn("main form", "Save settings")
	confirmIdentity()
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		p := project()
		return p["underpaymentTolerancePercent"] == "7.5", "the tolerance saved after confirming: " + str(p["underpaymentTolerancePercent"])
	})

	// A webhook endpoint: added, its secret rotated, deleted.
	stale()
	d.open(page("webhooks"))
	d.fill("Endpoint URL", "https://shop.example/hooks")
	d.click("Add endpoint")
	confirmIdentity()
	d.waitText("dialog", "Signing secret", 10*time.Second)
	d.clickIn("dialog", "Done, I have saved it")
	d.waitText("main h1", "https://shop.example/hooks", 10*time.Second)
	hooks := get(t, d.base, "/api/v1/projects/"+keys.id+"/webhooks", keys.key).list()
	if len(hooks) != 1 {
		t.Fatalf("webhook endpoints after adding one: %v", hooks)
	}
	hook := "/api/v1/projects/" + keys.id + "/webhooks/" + str(hooks[0].(map[string]any)["id"])
	stale()
	d.click("Rotate secret")
	d.clickIn("dialog", "Rotate")
	confirmIdentity()
	d.waitText("dialog", "New signing secret", 10*time.Second)
	d.clickIn("dialog", "Done, I have saved it")
	stale()
	d.click("Delete")
	d.clickIn("dialog", "Delete")
	confirmIdentity()
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		r := get(t, d.base, hook, keys.key)
		return r.Status == http.StatusNotFound, "the endpoint deleted after confirming"
	})

	// The consent page: Deny asks nothing; Allow asks, then the
	// application gets its code.
	stale()
	authURL, _, _ := app.authURL()
	d.run(chromedp.Navigate(authURL))
	shows("/dashboard/authorize", "Authorize Ledger sync")
	d.click("Deny")
	if cb := app.callback(t); cb.Get("error") != "access_denied" {
		t.Fatalf("denied with an old sign-in, the application got %v", cb)
	}
	shows("/callback", "Connected")
	authURL, state, _ := app.authURL()
	d.run(chromedp.Navigate(authURL))
	shows("/dashboard/authorize", "Authorize Ledger sync")
	d.click("Allow")
	confirmIdentity()
	if cb := app.callback(t); cb.Get("state") != state || !strings.HasPrefix(cb.Get("code"), "svc_ac_") {
		t.Fatalf("allowed after confirming, the application got %v", cb)
	}
	d.clean()
}
