package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// Sign-in never says which part was wrong; an email has one account.
func TestSignInFailuresLookAlike(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := e.signup(t)
	c := service.Client{IP: "192.0.2.9", UserAgent: "test"}

	_, err := e.svc.Identity().Signup(ctx, in.User.Email, "another good password", c)
	wantKind(t, "a second account for an email", err, payment.KindConflict)
	_, err = e.svc.Identity().Signup(ctx, "no-at-sign", "x", c)
	wantField(t, "a bad sign-up", err, "email")
	wantField(t, "a bad sign-up", err, "password")

	_, wrongPassword := e.svc.Identity().Login(ctx, in.User.Email, "not the password at all", c)
	_, unknownEmail := e.svc.Identity().Login(ctx, "nobody@example.test", "correct horse battery staple", c)
	if !errors.Is(wrongPassword, service.ErrBadLogin) || !errors.Is(unknownEmail, service.ErrBadLogin) {
		t.Fatalf("failed sign-ins: %v / %v; want ErrBadLogin for both", wrongPassword, unknownEmail)
	}
	ok, err := e.svc.Identity().Login(ctx, "  "+in.User.Email+" ", "correct horse battery staple", c)
	if err != nil || ok.User.ID != in.User.ID || !strings.HasPrefix(ok.Token, payment.UserSessionTokenPrefix) {
		t.Fatalf("sign-in = %+v, %v", ok, err)
	}
}

// A dashboard session ends when its user signs out of it, after
// SessionIdle without use, and with every other session when the
// password changes; the change needs the current password.
func TestDashboardSessionsEnd(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := service.Client{IP: "192.0.2.9", UserAgent: "test"}
	first := e.signup(t)
	second, err := e.svc.Identity().Login(ctx, first.User.Email, "correct horse battery staple", c)
	if err != nil {
		t.Fatal(err)
	}
	if u, _, err := e.svc.Identity().SessionOf(ctx, first.Token); err != nil || u.ID != first.User.ID {
		t.Fatalf("a fresh session = %+v, %v", u, err)
	}
	_, _, err = e.svc.Identity().SessionOf(ctx, "svc_st_"+strings.Repeat("ab", 32))
	wantKind(t, "an unknown session token", err, payment.KindUnauthenticated)

	wrong := "not the password"
	_, err = e.svc.Identity().ChangePassword(ctx, first.User.ID, service.Proof{CurrentPassword: &wrong}, "a brand new passphrase", c)
	wantField(t, "a password change with a wrong current password", err, "currentPassword")
	_, err = e.svc.Identity().ChangePassword(ctx, first.User.ID, service.Proof{}, "a brand new passphrase", c)
	wantField(t, "a password change without proof", err, "currentPassword")
	if _, _, err := e.svc.Identity().SessionOf(ctx, second.Token); err != nil {
		t.Fatalf("a refused password change ended a session: %v", err)
	}

	current := "correct horse battery staple"
	changed, err := e.svc.Identity().ChangePassword(ctx, first.User.ID, service.Proof{CurrentPassword: &current}, "a brand new passphrase", c)
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{first.Token, second.Token} {
		_, _, err := e.svc.Identity().SessionOf(ctx, old)
		wantKind(t, "a session from before the password changed", err, payment.KindUnauthenticated)
	}
	if _, _, err := e.svc.Identity().SessionOf(ctx, changed.Token); err != nil {
		t.Fatalf("the session the change signed in: %v", err)
	}
	if _, err := e.svc.Identity().Login(ctx, first.User.Email, current, c); !errors.Is(err, service.ErrBadLogin) {
		t.Fatalf("the old password still signs in: %v", err)
	}
	events, err := e.svc.Identity().AccountEvents(ctx, first.User.ID)
	if err != nil || len(events) == 0 || events[0].Action != payment.AccountPasswordChanged {
		t.Fatalf("the account's security log = %+v, %v", events, err)
	}

	if err := e.svc.Identity().Logout(ctx, first.User.ID, changed.Session.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = e.svc.Identity().SessionOf(ctx, changed.Token)
	wantKind(t, "a signed-out session", err, payment.KindUnauthenticated)

	idle, err := e.svc.Identity().Login(ctx, first.User.Email, "a brand new passphrase", c)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(service.SessionIdle + time.Minute)
	_, _, err = e.svc.Identity().SessionOf(ctx, idle.Token)
	wantKind(t, "a session idle past SessionIdle", err, payment.KindUnauthenticated)
}

// Changes a merchant makes are in the project's audit log with what
// changed; a refused change leaves no entry.
func TestChangesAreAudited(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.owner(t, "Audited shop")
	project := owner.principal.ProjectID
	plan := e.plan(t, owner.principal, "Yearly")

	_, err := e.svc.Checkout().UpdateProject(ctx, owner.principal, project, service.ProjectInput{
		UnderpaymentTolerancePercent: ptr("51"), SessionLifetimeSeconds: ptr(int64(30))})
	wantField(t, "a tolerance above 50", err, "underpaymentTolerancePercent")
	wantField(t, "a lifetime under a minute", err, "sessionLifetimeSeconds")
	updated, err := e.svc.Checkout().UpdateProject(ctx, owner.principal, project, service.ProjectInput{
		Name: ptr("Renamed shop"), CompleteOn: ptr("confirmed"), UnderpaymentTolerancePercent: ptr("1.5")})
	if err != nil || updated.Name != "Renamed shop" || updated.CompleteOn != payment.TxConfirmed || updated.UnderpaymentTolerancePercent.String() != "1.5" {
		t.Fatalf("updated project = %+v, %v", updated, err)
	}
	dev := e.join(t, owner, payment.RoleDeveloper)
	_, err = e.svc.Checkout().UpdateProject(ctx, dev.principal, project, service.ProjectInput{Name: ptr("Mine")})
	wantKind(t, "a developer changing the settings", err, payment.KindForbidden)

	log := e.audit(t, owner)
	if created, details := findAudit(t, log, payment.AuditPlanCreated); created.TargetID != plan.ID || details["title"] != "Yearly" {
		t.Fatalf("payment_plan.created = %+v %v", created, details)
	}
	if n := countAudit(log, payment.AuditProjectUpdated); n != 1 {
		t.Fatalf("%d project.updated entries, want 1 (the refused changes leave none)", n)
	}
	actions, err := e.svc.Access().ListAudit(ctx, owner.principal, project, payment.ListQuery{Page: 1, Limit: 10, Status: payment.AuditPlanCreated})
	if err != nil || actions.Total != 1 {
		t.Fatalf("the log filtered by action = %+v, %v", actions, err)
	}
}
