package access

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/checkout"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// InvitationLifetime is how long an invitation can be accepted.
const InvitationLifetime = 7 * 24 * time.Hour

// memberOnly refuses API keys: members and their roles are the members'.
func memberOnly(p payment.Principal, projectID string) error {
	if err := core.Owns(p, projectID); err != nil {
		return err
	}
	if p.UserID == "" {
		return &payment.Error{Kind: payment.KindForbidden, Message: "API keys do not see or manage members: sign in"}
	}
	return nil
}

// Members lists the project's members (any member may read them).
func (svc Service) Members(ctx context.Context, p payment.Principal, projectID string) ([]payment.Member, error) {
	if err := memberOnly(p, projectID); err != nil {
		return nil, err
	}
	return svc.Store.Access().ListMembers(ctx, projectID)
}

// Invite makes an invitation to the project for an email with a role; its
// token is returned this once, for the owner to pass on.
func (svc Service) Invite(ctx context.Context, p payment.Principal, projectID, email, role string) (payment.Invitation, string, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.Invitation{}, "", err
	}
	var probs payment.Problems
	email = strings.TrimSpace(email)
	if _, err := CheckCredentials(email, "a valid placeholder"); err != nil {
		probs.Add("email", "must be an email address")
	}
	if !payment.ValidRole(role) {
		probs.Add("role", "must be one of owner, developer, viewer")
	}
	if err := probs.Err(); err != nil {
		return payment.Invitation{}, "", err
	}
	now := svc.Now()
	token := auth.NewToken()
	inv := payment.Invitation{ID: payment.NewID(payment.PrefixInvitation, now), ProjectID: projectID, Email: email,
		Role: payment.Role(role), InvitedBy: p.UserID, CreatedAt: now, ExpiresAt: now.Add(InvitationLifetime)}
	err := svc.Audited(ctx, projectID, p.IsLive, payment.AuditMemberInvited, "invitation", inv.ID, map[string]any{"email": email, "role": role},
		func(ctx context.Context) error {
			return svc.Store.Access().CreateInvitation(ctx, inv, payment.HashSecret(token))
		})
	if err != nil {
		return inv, "", err
	}
	return inv, token, nil
}

// Invitations lists the project's pending invitations (owners).
func (svc Service) Invitations(ctx context.Context, p payment.Principal, projectID string) ([]payment.Invitation, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return nil, err
	}
	return svc.Store.Access().ListInvitations(ctx, projectID, svc.Now())
}

// RevokeInvitation revokes a pending invitation of the project (owners):
// its token no longer joins anyone.
func (svc Service) RevokeInvitation(ctx context.Context, p payment.Principal, projectID, id string) (payment.Invitation, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.Invitation{}, err
	}
	if !payment.ValidID(payment.PrefixInvitation, id) {
		return payment.Invitation{}, payment.NotFound("Invitation")
	}
	var inv payment.Invitation
	err := svc.Audited(ctx, projectID, p.IsLive, payment.AuditInvitationRevoked, "invitation", id, map[string]any{"reason": "revoked"},
		func(ctx context.Context) (err error) {
			inv, err = svc.Store.Access().RevokeInvitation(ctx, projectID, id, svc.Now())
			return err
		})
	if errors.Is(err, payment.ErrNotFound) {
		return inv, payment.NotFound("Invitation")
	}
	return inv, err
}

// AcceptInvitation makes the signed-in user a member with the
// invitation's role. An unknown, used or expired token, or one made out
// to another email, is not found.
func (svc Service) AcceptInvitation(ctx context.Context, u payment.User, token string) (payment.Invitation, error) {
	if len(token) != 64 {
		return payment.Invitation{}, payment.NotFound("Invitation")
	}
	var inv payment.Invitation
	err := svc.Store.InTx(ctx, func(ctx context.Context) (err error) {
		if inv, err = svc.Store.Access().AcceptInvitation(ctx, payment.HashSecret(token), u, svc.Now()); err != nil {
			return err
		}
		o := payment.OriginOf(ctx)
		o.ActorKind, o.ActorID = payment.AuditActorUser, u.ID
		a := svc.AuditEntry(payment.WithOrigin(ctx, o), inv.ProjectID, false, payment.AuditMemberJoined, "member", u.ID,
			map[string]any{"role": string(inv.Role), "invitationId": inv.ID})
		return svc.Store.Access().RecordAudit(ctx, a)
	})
	if errors.Is(err, payment.ErrNotFound) {
		return inv, payment.NotFound("Invitation")
	}
	return inv, err
}

// ChangeMember sets a member's role, or (role empty) removes the member.
// Owners may do either; a member may remove themselves. A project keeps
// one owner at least.
func (svc Service) ChangeMember(ctx context.Context, p payment.Principal, projectID, userID, role string) error {
	if err := memberOnly(p, projectID); err != nil {
		return err
	}
	leaving := role == "" && userID == p.UserID
	if !leaving && !p.CanManageKeys() {
		return payment.ErrForbidden
	}
	if role != "" && !payment.ValidRole(role) {
		var probs payment.Problems
		probs.Add("role", "must be one of owner, developer, viewer")
		return probs.Err()
	}
	if !payment.ValidID(payment.PrefixUser, userID) {
		return payment.NotFound("Member")
	}
	action, details := payment.AuditMemberRemoved, map[string]any(nil)
	if role != "" {
		action, details = payment.AuditMemberRoleChanged, map[string]any{"role": role}
	}
	return svc.Audited(ctx, projectID, p.IsLive, action, "member", userID, details, func(ctx context.Context) error {
		revoked, err := svc.Store.Access().ChangeMember(ctx, projectID, userID, payment.Role(role), svc.Now())
		if err != nil {
			return err
		}
		// The invitations the member sent, and those addressed to them,
		// end with the membership.
		for _, id := range revoked {
			a := svc.AuditEntry(ctx, projectID, p.IsLive, payment.AuditInvitationRevoked, "invitation", id,
				map[string]any{"reason": "member_removed", "memberId": userID})
			if err := svc.Store.Access().RecordAudit(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// CheckCredentials checks an account's email and password against the
// rules (the password's by auth.CheckPasswordRules) and returns the email
// trimmed; identity's sign-up and an invitation both use it.
func CheckCredentials(email, password string) (string, error) {
	var probs payment.Problems
	email = strings.TrimSpace(email)
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		probs.Add("email", "must be an email address")
	}
	if msg := auth.CheckPasswordRules(password); msg != "" {
		probs.Add("password", msg)
	}
	return email, probs.Err()
}

// MemberPrincipal is the principal of a signed-in user acting in a
// project environment: a project the user is not a member of does not
// exist for them.
func (svc Service) MemberPrincipal(ctx context.Context, u payment.User, us payment.UserSession, projectID string, isLive bool) (payment.Principal, error) {
	role, err := svc.Store.Access().MemberRole(ctx, projectID, u.ID)
	if errors.Is(err, payment.ErrNotFound) {
		return payment.Principal{}, payment.NotFound("Project")
	} else if err != nil {
		return payment.Principal{}, err
	}
	return payment.Principal{ProjectID: projectID, IsLive: isLive, UserID: u.ID, Role: role, SessionID: us.ID}, nil
}

// MemberSession reads a checkout session by its ID for a signed-in user
// who is a member of its project (the second shape's session lookup);
// to anyone else it does not exist.
func (svc Service) MemberSession(ctx context.Context, u payment.User, us payment.UserSession, id string) (checkout.SessionView, error) {
	if !payment.ValidID(payment.PrefixSession, id) {
		return checkout.SessionView{}, payment.NotFound("Checkout session")
	}
	projectID, isLive, err := svc.Store.Checkout().SessionOwner(ctx, id)
	if errors.Is(err, payment.ErrNotFound) {
		return checkout.SessionView{}, payment.NotFound("Checkout session")
	} else if err != nil {
		return checkout.SessionView{}, err
	}
	p, err := svc.MemberPrincipal(ctx, u, us, projectID, isLive)
	if err != nil {
		return checkout.SessionView{}, payment.NotFound("Checkout session")
	}
	return svc.checkout().GetSession(ctx, p, projectID, id)
}

// AddOwner makes a user an owner of a project (the admin command and the
// dev stack's seed).
func (svc Service) AddOwner(ctx context.Context, projectID, userID string) error {
	if _, err := svc.Store.Checkout().GetProject(ctx, projectID); err != nil {
		return err
	}
	return svc.Store.Access().AddMember(ctx, projectID, userID, payment.RoleOwner, svc.Now())
}
