package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// An invitation joins the user it was made out to, once, with its role;
// the owner sees it pending until then, and the log records who invited
// whom and who joined.
func TestInvitationJoinsItsInviteeOnceWithItsRole(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.owner(t, "Team shop")
	invitee, stranger := e.signup(t), e.signup(t)

	inv, token, err := e.svc.Access().Invite(ctx, owner.principal, owner.principal.ProjectID, "  "+strings.ToUpper(invitee.User.Email)+" ", "developer")
	if err != nil {
		t.Fatal(err)
	}
	if len(token) != 64 || inv.Role != payment.RoleDeveloper || !inv.ExpiresAt.Equal(inv.CreatedAt.Add(service.InvitationLifetime)) {
		t.Fatalf("invitation = %+v, token %q", inv, token)
	}
	pending, err := e.svc.Access().Invitations(ctx, owner.principal, owner.principal.ProjectID)
	if err != nil || len(pending) != 1 || pending[0].ID != inv.ID {
		t.Fatalf("pending invitations = %+v, %v", pending, err)
	}

	_, err = e.svc.Access().AcceptInvitation(ctx, stranger.User, token)
	wantKind(t, "an invitation taken by another email", err, payment.KindNotFound)
	_, err = e.svc.Access().AcceptInvitation(ctx, invitee.User, strings.Repeat("0", 64))
	wantKind(t, "an unknown token", err, payment.KindNotFound)
	_, err = e.svc.Access().AcceptInvitation(ctx, invitee.User, "short")
	wantKind(t, "a malformed token", err, payment.KindNotFound)

	if _, err := e.svc.Access().AcceptInvitation(ctx, invitee.User, token); err != nil {
		t.Fatalf("the invitee accepting (email in another case): %v", err)
	}
	_, err = e.svc.Access().AcceptInvitation(ctx, invitee.User, token)
	wantKind(t, "an invitation accepted twice", err, payment.KindNotFound)

	dev := e.as(t, invitee, owner.principal.ProjectID)
	if dev.principal.Role != payment.RoleDeveloper {
		t.Fatalf("the invitee's role = %q", dev.principal.Role)
	}
	members, err := e.svc.Access().Members(ctx, dev.principal, owner.principal.ProjectID)
	if err != nil || len(members) != 2 {
		t.Fatalf("members = %+v, %v", members, err)
	}
	if pending, _ := e.svc.Access().Invitations(ctx, owner.principal, owner.principal.ProjectID); len(pending) != 0 {
		t.Fatalf("an accepted invitation is still pending: %+v", pending)
	}

	log := e.audit(t, owner)
	invited, details := findAudit(t, log, payment.AuditMemberInvited)
	if invited.TargetID != inv.ID || details["role"] != "developer" || !strings.EqualFold(details["email"].(string), invitee.User.Email) {
		t.Fatalf("member.invited = %+v %v", invited, details)
	}
	joined, details := findAudit(t, log, payment.AuditMemberJoined)
	if joined.ActorKind != payment.AuditActorUser || joined.ActorID != invitee.User.ID || joined.TargetID != invitee.User.ID ||
		details["role"] != "developer" || details["invitationId"] != inv.ID {
		t.Fatalf("member.joined = %+v %v", joined, details)
	}
}

// An invitation expires after InvitationLifetime, and one the owner
// revokes no longer joins anyone.
func TestExpiredOrRevokedInvitationsJoinNobody(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.owner(t, "Team shop")
	late, revoked := e.signup(t), e.signup(t)

	_, lateToken, err := e.svc.Access().Invite(ctx, owner.principal, owner.principal.ProjectID, late.User.Email, "viewer")
	if err != nil {
		t.Fatal(err)
	}
	inv, revokedToken, err := e.svc.Access().Invite(ctx, owner.principal, owner.principal.ProjectID, revoked.User.Email, "viewer")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Access().RevokeInvitation(ctx, owner.principal, owner.principal.ProjectID, inv.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Access().AcceptInvitation(ctx, revoked.User, revokedToken)
	wantKind(t, "a revoked invitation", err, payment.KindNotFound)
	_, err = e.svc.Access().RevokeInvitation(ctx, owner.principal, owner.principal.ProjectID, inv.ID)
	wantKind(t, "revoking an invitation twice", err, payment.KindNotFound)
	if _, details := findAudit(t, e.audit(t, owner), payment.AuditInvitationRevoked); details["reason"] != "revoked" {
		t.Fatalf("invitation.revoked details = %v", details)
	}

	e.clock.Advance(service.InvitationLifetime + time.Minute)
	_, err = e.svc.Access().AcceptInvitation(ctx, late.User, lateToken)
	wantKind(t, "an expired invitation", err, payment.KindNotFound)
	if pending, err := e.svc.Access().Invitations(ctx, owner.principal, owner.principal.ProjectID); err != nil || len(pending) != 0 {
		t.Fatalf("pending after expiry = %+v, %v", pending, err)
	}
}

// Owners manage members; developers and viewers do not, API keys see no
// members at all; anyone may leave; a project keeps one owner.
func TestMemberRolesRules(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.owner(t, "Team shop")
	project := owner.principal.ProjectID
	dev := e.join(t, owner, payment.RoleDeveloper)
	viewer := e.join(t, owner, payment.RoleViewer)

	_, _, err := e.svc.Access().Invite(ctx, dev.principal, project, "friend@example.test", "owner")
	wantKind(t, "a developer inviting", err, payment.KindForbidden)
	_, err = e.svc.Access().Invitations(ctx, viewer.principal, project)
	wantKind(t, "a viewer listing invitations", err, payment.KindForbidden)
	err = e.svc.Access().ChangeMember(ctx, dev.principal, project, viewer.user.ID, "owner")
	wantKind(t, "a developer promoting a viewer", err, payment.KindForbidden)
	err = e.svc.Access().ChangeMember(ctx, dev.principal, project, dev.user.ID, "owner")
	wantKind(t, "a developer promoting themselves", err, payment.KindForbidden)
	key := payment.Principal{ProjectID: project, KeyID: "key_x"}
	_, err = e.svc.Access().Members(ctx, key, project)
	wantKind(t, "an API key listing members", err, payment.KindForbidden)
	_, _, err = e.svc.Access().Invite(ctx, key, project, "friend@example.test", "viewer")
	wantKind(t, "an API key inviting", err, payment.KindForbidden)

	_, _, err = e.svc.Access().Invite(ctx, owner.principal, project, "not an email", "admin")
	wantField(t, "a bad invitation", err, "email")
	wantField(t, "a bad invitation", err, "role")
	err = e.svc.Access().ChangeMember(ctx, owner.principal, project, dev.user.ID, "admin")
	wantField(t, "an unknown role", err, "role")
	err = e.svc.Access().ChangeMember(ctx, owner.principal, project, "usr_nobody", "viewer")
	wantKind(t, "changing a non-member", err, payment.KindNotFound)

	// The sole owner can neither step down nor leave.
	err = e.svc.Access().ChangeMember(ctx, owner.principal, project, owner.user.ID, "developer")
	wantKind(t, "the last owner stepping down", err, payment.KindConflict)
	err = e.svc.Access().ChangeMember(ctx, owner.principal, project, owner.user.ID, "")
	wantKind(t, "the last owner leaving", err, payment.KindConflict)

	// With a second owner, the first may step down.
	if err := e.svc.Access().ChangeMember(ctx, owner.principal, project, dev.user.ID, "owner"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Access().ChangeMember(ctx, owner.principal, project, owner.user.ID, "viewer"); err != nil {
		t.Fatalf("an owner stepping down beside another owner: %v", err)
	}
	// A viewer may leave on their own.
	if err := e.svc.Access().ChangeMember(ctx, viewer.principal, project, viewer.user.ID, ""); err != nil {
		t.Fatalf("a viewer leaving: %v", err)
	}
	_, err = e.svc.Access().MemberPrincipal(ctx, viewer.user, viewer.session, project, false)
	wantKind(t, "a member who left", err, payment.KindNotFound)

	newOwner := e.as(t, service.SignedIn{User: dev.user, Session: dev.session}, project)
	log := e.audit(t, newOwner)
	if n := countAudit(log, payment.AuditMemberRoleChanged); n != 2 {
		t.Fatalf("%d member.role_changed entries, want 2", n)
	}
	removed, _ := findAudit(t, log, payment.AuditMemberRemoved)
	if removed.TargetID != viewer.user.ID {
		t.Fatalf("member.removed = %+v", removed)
	}
}

// A member removed takes the invitations they sent with them: the invitee
// can no longer join on the word of someone who left.
func TestRemovingAMemberRevokesTheirInvitations(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.owner(t, "Team shop")
	project := owner.principal.ProjectID
	second := e.join(t, owner, payment.RoleOwner)
	friend := e.signup(t)
	inv, token, err := e.svc.Access().Invite(ctx, second.principal, project, friend.User.Email, "viewer")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Access().ChangeMember(ctx, owner.principal, project, second.user.ID, ""); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Access().AcceptInvitation(ctx, friend.User, token)
	wantKind(t, "an invitation of a removed member", err, payment.KindNotFound)
	for _, a := range e.audit(t, owner) {
		if a.Action == payment.AuditInvitationRevoked && a.TargetID == inv.ID {
			return
		}
	}
	t.Fatalf("no invitation.revoked entry for %s", inv.ID)
}
