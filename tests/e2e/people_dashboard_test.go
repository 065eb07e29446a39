package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// In the dashboard, an owner sees the pending invitations and revokes
// one; a sensitive action after an old sign-in asks for the password in a
// dialog, then goes on.
func TestDashboardInvitationsAndReauthentication(t *testing.T) {
	d := newDashboard(t)
	owner, keys := ownedProject(t, d.base, "Sudo shop")
	projectID := keys.id
	page := func(p string) string { return "/dashboard/projects/" + projectID + "/sandbox/" + p }
	invite(t, d.base, owner, projectID, "pending@example.com", "developer")
	d.signIn(owner)

	d.open(page("members"))
	d.waitText("main", "pending@example.com", 10*time.Second)
	d.screens("invitations")
	d.clickIn("main table", "Revoke")
	d.clickIn("dialog", "Revoke")
	d.waitFor(`!document.querySelector('main').innerText.includes('pending@example.com')`, "the invitation gone", 10*time.Second)
	if n := len(owner.call(t, d.base, http.MethodGet, "/api/v1/projects/"+projectID+"/invitations", nil).list()); n != 0 {
		t.Fatalf("%d invitations pending after the revocation in the dashboard", n)
	}

	// The browser's sign-in, an hour old.
	if _, err := st.Pool().Exec(context.Background(), `UPDATE user_sessions SET authenticated_at = now() - interval '1 hour'
		WHERE user_id = (SELECT id FROM users WHERE email = $1)`, owner.email); err != nil {
		t.Fatal(err)
	}
	d.open(page("api-keys"))
	d.run(chromedp.Click("#create-key"))
	d.waitText("dialog", "Confirm it is you", 10*time.Second)
	d.fill("Password", "not the password")
	d.clickIn("dialog", "Confirm")
	d.waitText("dialog .form-error", "Validation failed", 10*time.Second)
	d.fill("Password", owner.password)
	d.shot("dashboard-reauthentication-dialog")
	d.clickIn("dialog", "Confirm")
	d.run(chromedp.WaitVisible("dialog [data-secret]"))
	if s := d.text("dialog [data-secret]"); !strings.HasPrefix(s, "svc_") {
		t.Fatalf("the key made after re-authenticating = %q", s)
	}
	d.clickIn("dialog", "Done, I have saved it")
	d.clean()
}
